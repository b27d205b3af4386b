package handlers_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/langfuse/langfusetest"
	"tribunal/llm/llmtest"
	"tribunal/store"
	"tribunal/store/storetest"
)

// TestSourceImportPage: the Sources page links each source's import form,
// which imports through the use case and opens the run; the run page says
// where the answers came from and offers no Re-run; importing the same
// dataset run again shows the conflict with a link to the run holding it,
// and an unknown dataset (422) or refused keys (502) keep what was typed.
func TestSourceImportPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		a := newApp(t, st, nil)
		fake := langfusetest.New(t)
		seedLangfuse(fake, 5)
		var src, bad store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		a.do(t, call{"POST", "/api/sources", sourceBody("wrong keys", fake.URL, fake.PublicKey, "sk-lf-wrong"), nil}, 201, &bad)
		formPath := fmt.Sprintf("/sources/%d/import", src.ID)

		_, doc, _ := a.get(t, "/sources")
		if href, _ := doc.Find(fmt.Sprintf("#source-%d [data-testid=import-source]", src.ID)).Attr("href"); href != formPath {
			t.Errorf("the source's import link = %q, want %q", href, formPath)
		}
		res, doc, _ := a.get(t, formPath)
		if res.StatusCode != 200 || doc.Find("[data-testid=source-import-form]").Length() != 1 {
			t.Fatalf("import form: status %d", res.StatusCode)
		}
		var offered []string
		doc.Find("[data-testid=import-checks] input[name=checks]").Each(func(_ int, s *goquery.Selection) {
			offered = append(offered, s.AttrOr("value", ""))
		})
		if !contains(offered, "f1") || !contains(offered, "rouge_l") || contains(offered, "tool_called") || contains(offered, "regex") {
			t.Errorf("checks offered: %v", offered)
		}

		form := url.Values{"dataset": {"nope"}, "latest": {"1"}, "collection": {"Support"}, "checks": {"exact_match", "contains"}}
		res, doc = a.post(t, formPath, form, nil)
		if res.StatusCode != 422 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "nope") {
			t.Fatalf("unknown dataset: status %d, error %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
		}
		if v := doc.Find("input[name=collection]").AttrOr("value", ""); v != "Support" {
			t.Errorf("the refused form lost the collection typed: %q", v)
		}
		if doc.Find("input[name=checks][value=contains]").AttrOr("checked", "off") == "off" {
			t.Error("the refused form lost the checks ticked")
		}

		form.Set("dataset", "support-qa")
		res, doc = a.post(t, fmt.Sprintf("/sources/%d/import", bad.ID), form, nil)
		if res.StatusCode != 502 || !strings.Contains(doc.Find("[data-testid=form-error]").Text(), "wrong keys") {
			t.Errorf("refused keys: status %d, error %q", res.StatusCode, doc.Find("[data-testid=form-error]").Text())
		}

		res, _ = a.post(t, formPath, form, nil)
		loc := res.Header.Get("Location")
		var runID int64
		if _, err := fmt.Sscanf(loc, "/runs/%d", &runID); res.StatusCode != 303 || err != nil {
			t.Fatalf("import: status %d, Location %q", res.StatusCode, loc)
		}
		if r := a.waitRunDone(t, runID); r.Status != store.RunFinished {
			t.Fatalf("imported run ended %s", r.Status)
		}
		_, doc, _ = a.get(t, loc)
		from := doc.Find("[data-testid=imported-from]")
		if txt := strings.Join(strings.Fields(from.Text()), " "); !strings.Contains(txt, "Imported from prod · dataset support-qa · run v1") {
			t.Errorf("run page origin: %q", txt)
		}
		if href := from.Find("[data-testid=imported-source]").AttrOr("href", ""); href != fmt.Sprintf("/sources#source-%d", src.ID) {
			t.Errorf("source link %q", href)
		}
		if doc.Find("[data-testid=rerun]").Length() != 0 {
			t.Error("an imported run offers Re-run")
		}
		_, doc, _ = a.get(t, "/runs")
		if doc.Find(fmt.Sprintf("a[href='/runs/%d']", runID)).Parent().Find("[data-testid=imported-badge]").Length() != 1 {
			t.Error("the runs list does not mark the imported run")
		}

		res, doc = a.post(t, formPath, form, nil)
		if res.StatusCode != 409 {
			t.Fatalf("second import: status %d", res.StatusCode)
		}
		if msg := doc.Find("[data-testid=form-error]").Text(); !strings.Contains(msg, `dataset run "v1" of "support-qa" is already imported`) {
			t.Errorf("second import says %q", msg)
		}
		if href := doc.Find("[data-testid=held-by] a").AttrOr("href", ""); href != loc {
			t.Errorf("the conflict links %q, want the run %q", href, loc)
		}
		if v := doc.Find("[data-testid=import-dataset]").AttrOr("value", ""); v != "support-qa" {
			t.Errorf("the refused form lost the dataset: %q", v)
		}
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestRejudgeImportedRun: an imported run judged once is judged again from
// its page (Judge again, no Re-run) and through POST /api/runs/{id}/rejudge,
// which answers how many answers went back and 409 while the run is
// active; its source cannot be deleted meanwhile (409 naming the run), and
// once deleted the run page shows the name the import kept.
func TestRejudgeImportedRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		var holding atomic.Bool
		release := make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		a := newApp(t, st, func(req llmtest.ChatRequest) llmtest.Reply {
			if holding.Load() {
				<-release
			}
			return llmtest.DefaultReply(req)
		})
		t.Cleanup(releaseOnce) // before the servers close: a held judge call would keep them waiting
		fake := langfusetest.New(t)
		seedLangfuse(fake, 5)
		var src store.Source
		a.do(t, call{"POST", "/api/sources", sourceBody("prod", fake.URL, fake.PublicKey, fake.SecretKey), nil}, 201, &src)
		var prov store.Provider
		a.do(t, call{"POST", "/api/providers", fmt.Sprintf(`{"name":"judge","base_url":%q}`, a.fake.URL), nil}, 201, &prov)
		form := url.Values{"dataset": {"support-qa"}, "run": {"v1"}, "judge_provider_id": {fmt.Sprint(prov.ID)}, "judge_model": {"fake-judge"}}
		res, _ := a.post(t, fmt.Sprintf("/sources/%d/import", src.ID), form, nil)
		var runID int64
		if _, err := fmt.Sscanf(res.Header.Get("Location"), "/runs/%d", &runID); res.StatusCode != 303 || err != nil {
			t.Fatalf("import: status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
		a.waitRunDone(t, runID)
		judged := a.fake.CallCount()
		runPath := fmt.Sprintf("/runs/%d", runID)

		_, doc, _ := a.get(t, runPath)
		if doc.Find("[data-testid=rejudge]").Length() != 1 || doc.Find("[data-testid=rerun]").Length() != 0 {
			t.Fatalf("run page actions: rejudge %d, rerun %d", doc.Find("[data-testid=rejudge]").Length(), doc.Find("[data-testid=rerun]").Length())
		}
		res, _ = a.post(t, runPath+"/rejudge", url.Values{}, nil)
		if res.StatusCode != 303 || res.Header.Get("Location") != runPath {
			t.Fatalf("Judge again: status %d, Location %q", res.StatusCode, res.Header.Get("Location"))
		}
		if r := a.waitRunDone(t, runID); r.Status != store.RunFinished {
			t.Fatalf("rejudged run ended %s", r.Status)
		}
		if n := a.fake.CallCount() - judged; n != 3 {
			t.Errorf("Judge again made %d judge calls, want one per answer (3)", n)
		}

		// Through the API, with the judge held: the run stays active.
		holding.Store(true)
		var out struct{ Items int64 }
		a.do(t, call{"POST", fmt.Sprintf("/api/runs/%d/rejudge", runID), "", nil}, 200, &out)
		if out.Items != 3 {
			t.Errorf("rejudge items = %d, want 3", out.Items)
		}
		if body := a.do(t, call{"POST", fmt.Sprintf("/api/runs/%d/rejudge", runID), "", nil}, 409, nil); !strings.Contains(body, "still") {
			t.Errorf("rejudge of an active run: %s", body)
		}
		srcPath := fmt.Sprintf("/api/sources/%d", src.ID)
		if body := a.do(t, call{"DELETE", srcPath, "", nil}, 409, nil); !strings.Contains(body, fmt.Sprintf("run %d", runID)) {
			t.Errorf("deleting the source of an active import: %s", body)
		}
		releaseOnce()
		if r := a.waitRunDone(t, runID); r.Status != store.RunFinished {
			t.Fatalf("rejudged run ended %s", r.Status)
		}
		a.do(t, call{"DELETE", srcPath, "", nil}, 204, nil)
		_, doc, _ = a.get(t, runPath)
		from := doc.Find("[data-testid=imported-from]")
		if txt := strings.Join(strings.Fields(from.Text()), " "); !strings.Contains(txt, "Imported from prod (deleted since)") ||
			from.Find("a").Length() != 0 {
			t.Errorf("origin of a deleted source: %q", txt)
		}
	})
}
