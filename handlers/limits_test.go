package handlers_test

import (
	"fmt"
	"strings"
	"testing"

	"tribunal/store"
	"tribunal/store/storetest"
)

// TestMaxRunItemsAPI: a run beyond --max-run-items is a 422 saying so.
func TestMaxRunItemsAPI(t *testing.T) {
	storetest.EachWith(t, store.Config{MaxRunItems: 3}, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"x-1","category":"c","question":"q1"}`}, 201, nil)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"x-2","category":"c","question":"q2"}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"X","task_ids":["x-1","x-2"]}`}, 201, &col)
		got := a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"},{"provider_id":%d,"model":"n"}],"collection_ids":[%d]}`,
			p.ID, p.ID, p.ID, col.ID)}, 422, nil)
		if !strings.Contains(got, "a run of 4 items exceeds --max-run-items (3)") {
			t.Errorf("POST /api/runs: %s", got)
		}
	})
}
