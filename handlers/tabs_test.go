package handlers_test

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"tribunal/store/storetest"
)

// TestTabsMarkTheCurrentOne: each tab bar marks exactly its page's tab with
// aria-current="page", and the style sheet shows it.
func TestTabsMarkTheCurrentOne(t *testing.T) {
	a := newApp(t, storetest.SQLite(t), nil)
	for path, want := range map[string]string{
		"/judges": "Judges", "/styles": "Judgement styles",
		"/schedules": "Schedules", "/kpis": "KPIs", "/alerts": "Alerts", "/notifications": "Notifications",
	} {
		res, doc, _ := a.get(t, path)
		bars := doc.Find("main nav.tabs")
		if res.StatusCode != 200 || bars.Length() != 1 {
			t.Errorf("GET %s: status %d, %d tab bars", path, res.StatusCode, bars.Length())
			continue
		}
		var current []string
		bars.Find(`a[aria-current=page]`).Each(func(_ int, s *goquery.Selection) {
			current = append(current, strings.Join(strings.Fields(s.Text()), " "))
		})
		if len(current) != 1 || current[0] != want {
			t.Errorf("GET %s: current tabs %q, want %q", path, current, want)
		}
	}
	_, _, css := a.get(t, "/assets/app.css")
	if !strings.Contains(css, `.tabs a[aria-current="page"] {`) {
		t.Error("app.css does not style the current tab")
	}
}
