package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"tribunal/handlers"
	"tribunal/langfuse/langfusetest"
	"tribunal/store"
	"tribunal/store/storetest"
)

func sourceBody(name, baseURL, public, secretKey string) string {
	b, _ := json.Marshal(map[string]string{"name": name, "base_url": baseURL, "public_key": public, "secret_key": secretKey, "project": "agents"})
	return string(b)
}

func TestSourcesAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		fake := langfusetest.New(t)

		var src store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		if src.Type != store.SourceLangfuse || src.SecretKey == fake.SecretKey || !strings.HasSuffix(src.SecretKey, fake.SecretKey[len(fake.SecretKey)-4:]) {
			t.Fatalf("created = %+v", src)
		}
		path := fmt.Sprintf("/api/sources/%d", src.ID)
		var list []store.Source
		body := a.do(t, call{"GET", "/api/sources", "", nil}, 200, &list)
		if len(list) != 1 || list[0].SecretKey != src.SecretKey || strings.Contains(body, fake.SecretKey) {
			t.Fatalf("list = %s", body)
		}

		var res handlers.SourceTest
		body = a.do(t, call{"POST", path + "/test", "", nil}, 200, &res)
		if !res.OK || res.Error != "" || !strings.Contains(body, `"error":""`) {
			t.Errorf("test with good keys = %s", body)
		}

		// The mask sent back keeps the key: the test still passes.
		var up store.Source
		a.do(t, call{"PUT", path, sourceBody("prod", fake.URL, fake.PublicKey, src.SecretKey), nil}, 200, &up)
		if up.SecretKey != src.SecretKey {
			t.Errorf("updated key = %q, want the same mask %q", up.SecretKey, src.SecretKey)
		}
		if a.do(t, call{"POST", path + "/test", "", nil}, 200, &res); !res.OK {
			t.Errorf("test after the mask was sent back: %+v", res)
		}
		// A wrong key: the test says the keys were refused.
		a.do(t, call{"PUT", path, sourceBody("prod", fake.URL, fake.PublicKey, "sk-lf-wrong"), nil}, 200, nil)
		if a.do(t, call{"POST", path + "/test", "", nil}, 200, &res); res.OK || !strings.Contains(res.Error, "keys were refused") {
			t.Errorf("test with a wrong key = %+v", res)
		}
		// Another origin with the mask: 422 naming secret_key.
		body = a.do(t, call{"PUT", path, sourceBody("prod", "http://127.0.0.2:9", fake.PublicKey, up.SecretKey), nil}, 422, nil)
		if !strings.Contains(body, "secret_key") || !strings.Contains(body, "base URL changed") {
			t.Errorf("new origin with the mask = %s", body)
		}

		for _, tc := range []struct{ body, field string }{
			{sourceBody("", fake.URL, "pk", "sk"), "name"},
			{sourceBody("x", "not a url", "pk", "sk"), "base_url"},
			{sourceBody("x", fake.URL, "", "sk"), "public_key"},
			{sourceBody("x", fake.URL, "pk", ""), "secret_key"},
			{`{"name":"x","type":"PHOENIX","base_url":"http://127.0.0.1:1","public_key":"pk","secret_key":"sk"}`, "type"},
		} {
			body := a.do(t, call{"POST", "/api/sources", tc.body, nil}, 422, nil)
			if !strings.Contains(body, `"error":"`+tc.field+`: `) {
				t.Errorf("POST %s: %s, want the field %s named", tc.body, body, tc.field)
			}
		}
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, "pk", "sk"), nil}, 409, nil)

		a.do(t, call{"DELETE", path, "", nil}, 204, nil)
		a.do(t, call{"GET", path, "", nil}, 404, nil)
		a.do(t, call{"POST", path + "/test", "", nil}, 404, nil)
	})
}

func TestSourceTestUnreachable(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	var src store.Source
	// Port 9 on loopback: nothing listens there.
	a.do(t, call{"POST", "/api/sources", sourceBody("gone", "http://127.0.0.1:9", "pk", "sk"), nil}, 201, &src)
	var res handlers.SourceTest
	a.do(t, call{"POST", fmt.Sprintf("/api/sources/%d/test", src.ID), "", nil}, 200, &res)
	if res.OK || !strings.Contains(res.Error, "/api/public/projects") {
		t.Errorf("test of nothing = %+v", res)
	}
}

func TestSourcesPage(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	fake := langfusetest.New(t)
	_, doc, _ := a.get(t, "/sources")
	if doc.Find("h1").Length() != 1 || doc.Find(`[data-testid=empty-sources]`).Length() != 1 || doc.Find(`nav a[aria-current=page][href="/sources"]`).Length() != 1 {
		t.Fatal("empty sources page")
	}
	form := url.Values{"name": {"prod <b>"}, "type": {"LANGFUSE"}, "base_url": {fake.URL}, "public_key": {fake.PublicKey}, "secret_key": {fake.SecretKey}}
	res, _ := a.post(t, "/sources", form, nil)
	if res.StatusCode != 303 {
		t.Fatalf("add: status %d", res.StatusCode)
	}
	_, doc, html := a.get(t, "/sources")
	row := doc.Find(`[data-testid=sources-table] tbody tr`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "prod <b>") || strings.Contains(html, fake.SecretKey) || strings.Contains(html, "prod <b>") {
		t.Fatalf("list: %d rows, text %q", row.Length(), row.Text())
	}
	id := strings.TrimPrefix(row.AttrOr("id", ""), "source-")
	if _, doc := a.post(t, "/sources/"+id+"/test", nil, map[string]string{"HX-Request": "true"}); doc.Find(".test-ok").Length() != 1 {
		t.Errorf("Test: %s", doc.Text())
	}

	// A form error keeps what was typed and says which field.
	form.Set("base_url", "ftp://x")
	res, doc = a.post(t, "/sources", form, nil)
	if res.StatusCode != 422 || !strings.Contains(doc.Text(), "base_url") || doc.Find(`input[name=public_key]`).AttrOr("value", "") != fake.PublicKey {
		t.Errorf("bad base URL: status %d, %q", res.StatusCode, doc.Find("form").Text())
	}

	// Edit: the stored key is a placeholder; left empty, it is kept.
	_, doc, html = a.get(t, "/sources/"+id+"/edit")
	key := doc.Find(`[data-testid=secret-key]`)
	if key.AttrOr("value", "x") != "" || !strings.Contains(key.AttrOr("placeholder", ""), "(unchanged)") || strings.Contains(html, fake.SecretKey) {
		t.Errorf("edit form key field: %v", key.Nodes)
	}
	form = url.Values{"name": {"prod"}, "type": {"LANGFUSE"}, "base_url": {fake.URL}, "public_key": {fake.PublicKey}, "secret_key": {""}, "project": {"p1"}}
	if res, _ := a.post(t, "/sources/"+id, form, nil); res.StatusCode != 303 {
		t.Fatalf("save: status %d", res.StatusCode)
	}
	if _, doc := a.post(t, "/sources/"+id+"/test", nil, map[string]string{"HX-Request": "true"}); doc.Find(".test-ok").Length() != 1 {
		t.Errorf("Test after a save with the key left empty: %s", doc.Text())
	}
	if res, _ := a.post(t, "/sources/"+id+"/delete", nil, map[string]string{"HX-Request": "true"}); res.StatusCode >= 400 {
		t.Fatalf("delete: status %d", res.StatusCode)
	}
	if _, doc, _ := a.get(t, "/sources"); doc.Find(`[data-testid=empty-sources]`).Length() != 1 {
		t.Error("the source is still listed after delete")
	}
}
