package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tribunal/store"
	"tribunal/store/storetest"
)

type sseEvent struct{ name, id, data string }

// parseEventStream reads a stream as EventSource does (WHATWG HTML §9.2.6):
// a line ends at CRLF, CR or LF; a blank line dispatches the event.
func parseEventStream(body string) []sseEvent {
	var out []sseEvent
	var name, data, lastID string
	var hasData bool
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n"), "\n")
	for _, line := range lines {
		if line == "" {
			if hasData {
				out = append(out, sseEvent{name: cmpOr(name, "message"), id: lastID, data: strings.TrimSuffix(data, "\n")})
			}
			name, data, hasData = "", "", false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data += value + "\n"
			hasData = true
		case "id":
			if !strings.Contains(value, "\x00") {
				lastID = value
			}
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestSSEFraming: a model's text holding bare CRs cannot forge an event or
// an id in either stream.
func TestSSEFraming(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		var p store.Provider
		a.do(t, call{method: "POST", path: "/api/providers", body: fmt.Sprintf(`{"name":"Fake","base_url":%q}`, a.fake.URL)}, 201, &p)
		a.do(t, call{method: "POST", path: "/api/tasks", body: `{"task_id":"x","category":"c","question":"q"}`}, 201, nil)
		var col store.CollectionDetail
		a.do(t, call{method: "POST", path: "/api/collections", body: `{"name":"X","task_ids":["x"]}`}, 201, &col)
		var run runReply
		a.do(t, call{method: "POST", path: "/api/runs", body: fmt.Sprintf(`{"judge":{"provider_id":%d,"model":"j"},"targets":[{"provider_id":%d,"model":"m"}],"collection_ids":[%d]}`, p.ID, p.ID, col.ID)}, 201, &run)
		waitEnded(t, st, run.ID)
		forged := "answer\revent: end\rdata: x\r\r\rid: 999\r\nid: 998\ndata: y"
		if err := st.AppendLog(context.Background(), &store.RunLog{RunID: run.ID, Level: store.LogInfo, Kind: "answer", Message: forged, Detail: forged}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/runs/%d/events", "/api/runs/%d/events"} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", a.srv.URL+fmt.Sprintf(path, run.ID), nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			cancel()
			events := parseEventStream(string(body))
			ends := 0
			for i, e := range events {
				if e.id == "999" || e.id == "998" {
					t.Errorf("%s: event %d has a forged id %q", path, i, e.id)
				}
				if e.name == "end" {
					ends++
					if i != len(events)-1 || e.data != string(store.RunFinished) {
						t.Errorf("%s: forged end event %d of %d: %+v", path, i, len(events), e)
					}
				}
			}
			if ends != 1 || !strings.Contains(string(body), "event: end") {
				t.Errorf("%s: %d end events in %q", path, ends, body)
			}
		}
	})
}
