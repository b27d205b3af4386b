package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"tribunal/llm/llmtest"
	"tribunal/mcpclient/mcptest"
	"tribunal/store"
)

// seededApp is an app holding one of everything, and the pages that show it.
type seededApp struct {
	*app
	runs  [2]int64
	pages []string
	// agentItem is an item of the second run's agent, with a trajectory.
	agentItem int64
}

// seedEverything creates, through the JSON API, a provider, tasks, a
// collection, a judge, two finished runs, a schedule, a KPI and an alert,
// and lists every page a user can open on them.
func seedEverything(t *testing.T) *seededApp {
	t.Helper()
	a, st := startAppWithStore(t, func(r llmtest.ChatRequest) llmtest.Reply {
		switch {
		case r.IsJudge():
			return llmtest.Reply{Content: `{"score": 7, "reasoning": "Mostly right; the **units** are missing."}`}
		case r.IsWarmup():
			return llmtest.Reply{Content: "Hello!"}
		}
		return llmtest.Reply{Content: "## Answer\n\nThe result of «" + r.Last() + "» is **18**, because `16 - 3 - 4 = 9` and 9 × 2 = 18."}
	})
	s := &seededApp{app: a}
	var prov store.Provider
	apiCall(t, a, "POST", "/api/providers", map[string]any{"name": "Fake", "type": "CUSTOM_OPEN_AI_COMPATIBLE", "base_url": a.fake.URL,
		"headers": []map[string]any{{"key": "Authorization", "value": "Bearer sk-page-sweep-0001", "is_secret": true}}}, &prov, 201)
	var keys []string
	for i, q := range []string{
		"Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with four. She sells the rest at $2 each. How much does she make every day?",
		"A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total does it take?",
		"What is the capital of Australia? Answer with one word, and say why it is a common trick question in quizzes about geography.",
	} {
		key := fmt.Sprintf("sweep-%d", i+1)
		apiCall(t, a, "POST", "/api/tasks", map[string]any{"task_id": key, "category": "math", "subcategory": "word problems",
			"question": q, "reference": "18", "tags": []string{"sweep"}, "checks": []map[string]any{{"type": "numeric"}}}, nil, 201)
		keys = append(keys, key)
	}
	var col struct{ ID int64 }
	apiCall(t, a, "POST", "/api/collections", map[string]any{"name": "Sweep", "description": "every page", "task_ids": keys}, &col, 201)
	var judge store.Judge
	apiCall(t, a, "POST", "/api/judges", map[string]any{"name": "Strict", "provider_id": prov.ID, "model": "fake-judge", "personality_name": "Strict examiner"}, &judge, 201)
	var agent store.Agent
	apiCall(t, a, "POST", "/api/agents", map[string]any{"name": "Docs helper", "provider_id": prov.ID, "model": "fake-small",
		"system_prompt": "Answer from the docs.", "tags": []string{"sweep"},
		"mcp_servers": []map[string]any{{"name": "docs", "url": mcptest.Start(t).URL, "allowed_tools": []string{"search", "fetch"},
			"headers": []map[string]any{{"key": "Authorization", "value": "Bearer mcp-page-sweep-0002"}}}}}, &agent, 201)
	runBody := map[string]any{"judge_ids": []int64{judge.ID}, "collection_ids": []int64{col.ID},
		"targets": []map[string]any{{"provider_id": prov.ID, "model": "fake-small"}, {"provider_id": prov.ID, "model": "fake-large"}}}
	for i := range s.runs {
		runBody["name"] = fmt.Sprintf("Sweep run %d", i+1)
		var run struct {
			ID     int64
			Status string
		}
		if i == 1 { // the second run's first target is the agent, with a trajectory
			body := maps.Clone(runBody)
			body["targets"] = []map[string]any{{"agent_id": agent.ID}, {"provider_id": prov.ID, "model": "fake-large"}}
			apiCall(t, a, "POST", "/api/runs", body, &run, 201)
			waitEndedUnseen(t, a, run.ID)
		} else {
			apiCall(t, a, "POST", "/api/runs", runBody, &run, 201)
			waitFinished(t, a, run.ID)
		}
		s.runs[i] = run.ID
	}
	s.agentItem = seedTrajectory(t, a, st, s.runs[1])
	var sched, hook, kpi, alert struct{ ID int64 }
	apiCall(t, a, "POST", "/api/schedules", map[string]any{"name": "Nightly", "cron": "0 0 3 * * *", "template": runBody}, &sched, 201)
	apiCall(t, a, "POST", "/api/schedules", map[string]any{"name": "On deploy", "trigger": "WEBHOOK", "template": runBody}, &hook, 201)
	apiCall(t, a, "POST", "/api/kpis", map[string]any{"name": "Quality", "formula": "score * 10 + pass_rate", "collection_id": col.ID}, &kpi, 201)
	apiCall(t, a, "POST", "/api/alerts", map[string]any{"name": "Score low", "metric": "score", "model": "fake-small", "condition": "LESS_THAN",
		"threshold": 0.8, "severity": "CRITICAL", "channels": []map[string]any{{"type": "in_app"}}}, &alert, 201)
	var source struct{ ID int64 }
	apiCall(t, a, "POST", "/api/sources", map[string]any{"name": "Production Langfuse", "base_url": "https://cloud.langfuse.com",
		"public_key": "pk-lf-page-sweep", "secret_key": "sk-lf-page-sweep-0003", "project": "support-agent"}, &source, 201)
	var styles []store.JudgementStyle
	apiCall(t, a, "GET", "/api/judgement-styles", nil, &styles, 200)
	var items struct{ Items []struct{ ID int64 } }
	apiCall(t, a, "GET", fmt.Sprintf("/api/runs/%d/items", s.runs[0]), nil, &items, 200)
	if len(styles) == 0 || len(items.Items) < 2 {
		t.Fatalf("seeded %d styles and %d items", len(styles), len(items.Items))
	}
	var task struct{ Items []struct{ ID int64 } }
	apiCall(t, a, "GET", "/api/tasks", nil, &task, 200)

	r1, r2 := s.runs[0], s.runs[1]
	s.pages = []string{
		"/runs", "/runs/new", fmt.Sprintf("/runs/%d", r1), fmt.Sprintf("/runs/%d/grade", r1), fmt.Sprintf("/items/%d", items.Items[0].ID),
		fmt.Sprintf("/runs/%d", r2), fmt.Sprintf("/items/%d", s.agentItem),
		fmt.Sprintf("/compare?run_ids=%d,%d", r1, r2),
		fmt.Sprintf("/compare/diff?a=%d&b=%d", items.Items[0].ID, items.Items[1].ID),
		"/recommend", "/recommend?category=math&min_items=1",
		"/providers", fmt.Sprintf("/providers/%d/edit", prov.ID),
		"/tasks", fmt.Sprintf("/tasks/%d/edit", task.Items[0].ID),
		"/collections", fmt.Sprintf("/collections/%d", col.ID),
		"/import", "/import?mode=outputs",
		"/judges", fmt.Sprintf("/judges/%d/edit", judge.ID),
		"/agents", fmt.Sprintf("/agents/%d/edit", agent.ID),
		"/sources", fmt.Sprintf("/sources/%d/edit", source.ID), fmt.Sprintf("/sources/%d/import", source.ID),
		"/styles", fmt.Sprintf("/styles/%d", styles[0].ID), fmt.Sprintf("/styles/%d/edit", styles[0].ID),
		"/schedules", fmt.Sprintf("/schedules/%d", sched.ID), fmt.Sprintf("/schedules/%d", hook.ID),
		"/kpis", fmt.Sprintf("/kpis/%d", kpi.ID),
		"/alerts", fmt.Sprintf("/alerts/%d", alert.ID),
		"/notifications",
		"/runs/999999",
	}
	return s
}

// settle waits for the page and the HTMX requests it makes on load.
func (b *browser) settle(path string) {
	b.t.Helper()
	b.open(path)
	b.waitFor("the page of "+path+" to load", `document.readyState === "complete" && !document.querySelector(".htmx-request")`, 10*time.Second)
	time.Sleep(150 * time.Millisecond) // hx-trigger="load" swaps land a tick after readyState
}

// shot saves a full-page screenshot as dir/name.png; dir is a test's
// ArtifactDir (go test -artifacts -outputdir D keeps them under D).
func (b *browser) shot(dir, name string) {
	b.t.Helper()
	b.waitFor("the page to be drawn for "+name, `document.readyState === "complete" && document.documentElement.clientWidth > 0`, 10*time.Second)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	for try := 0; err != nil && try < 3; try++ {
		// A page just navigated to can have no layout size for a moment.
		time.Sleep(200 * time.Millisecond)
		png, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
	}
}

// shotName turns a path into a file name.
func shotName(width int, path string) string {
	r := strings.NewReplacer("/", "_", "?", "_", "&", "_", "=", "-", ",", "-")
	return fmt.Sprintf("%d%s", width, r.Replace(path))
}

// TestEveryPageFitsAPhone opens every page at 390 px wide and asserts none
// is wider than the viewport: the navigation collapses and wide tables
// scroll inside their own box.
func TestEveryPageFitsAPhone(t *testing.T) {
	chromePath(t)
	s := seedEverything(t)
	b := newBrowser(t, s.URL)
	shots := t.ArtifactDir()
	b.do("a phone-sized viewport", 15*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	for _, path := range s.pages {
		t.Run(path, func(t *testing.T) {
			b := b.withT(t)
			b.settle(path)
			wide := mustEval[string](b, "overflow", `(() => {
				const vw = document.documentElement.clientWidth;
				if (document.documentElement.scrollWidth <= vw) return "";
				// Name what sticks out: the outermost elements past the edge
				// that do not sit inside a box that scrolls.
				const scrolls = e => { for (let p = e.parentElement; p; p = p.parentElement) { const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll" || o === "hidden") return true; } return false; };
				const out = [...document.body.querySelectorAll("*")].filter(e => e.getBoundingClientRect().right > vw + 1 && !scrolls(e));
				const top = out.filter(e => !out.includes(e.parentElement)).slice(0, 5);
				return "page is " + document.documentElement.scrollWidth + " px wide in a " + vw + " px viewport; past the edge: " +
					top.map(e => e.tagName.toLowerCase() + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "") + (e.dataset.testid ? "[" + e.dataset.testid + "]" : "") + " (right " + Math.round(e.getBoundingClientRect().right) + ")").join(", ");
			})()`)
			if wide != "" {
				t.Error(wide)
			}
			// The navigation is behind its menu button until opened.
			linkShows := `(() => { const l = document.querySelector("header nav a[href='/providers']"); return !!l && l.offsetParent !== null })()`
			if vis := mustEval[bool](b, "nav links", linkShows); vis {
				t.Errorf("at 390 px the navigation shows its links without the menu being opened")
			}
			b.shot(shots, shotName(390, path))
			b.click("[data-testid=nav-menu]")
			b.check("the menu button shows the navigation's links", linkShows+` && document.querySelector("[data-testid=nav-menu]").getAttribute("aria-expanded") === "true"`, 2*time.Second)
		})
	}
}

// a11yScript checks a page: exactly one h1; every visible form control
// has a name a screen reader can say; text in <main> (and the nav) meets
// 4.5:1 contrast against what is behind it. It answers the problems found.
const a11yScript = `(() => {
	// Colours are read as they end, not half-way through a transition.
	const still = document.createElement("style");
	still.textContent = "*, *::before, *::after { transition: none !important; animation: none !important; }";
	document.head.append(still);
	document.body.offsetHeight;
	const problems = [];
	const h1 = document.querySelectorAll("h1").length;
	if (h1 !== 1) problems.push(h1 + " h1 elements, want 1");

	// Not inside a closed <details> (content-visibility), not hidden.
	const visible = e => e.checkVisibility({contentVisibilityAuto: true, visibilityProperty: true, opacityProperty: true});
	for (const c of document.querySelectorAll("input, select, textarea, button")) {
		if (c.type === "hidden" || !visible(c)) continue;
		const named = (c.getAttribute("aria-label") || "").trim() || c.getAttribute("aria-labelledby") || (c.title || "").trim() ||
			(c.labels && [...c.labels].some(l => l.textContent.trim())) ||
			((c.tagName === "BUTTON" || c.type === "submit" || c.type === "button") && (c.textContent || c.value || "").trim()) ||
			(c.placeholder || "").trim();
		if (!named) problems.push("unlabelled " + c.tagName.toLowerCase() + (c.name ? "[name=" + c.name + "]" : "") + (c.id ? "#" + c.id : ""));
	}

	const parse = s => {
		let m = s.match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/);
		if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
		m = s.match(/color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.e-]+))?\)/);
		if (m) return [m[1] * 255, m[2] * 255, m[3] * 255, m[4] === undefined ? 1 : +m[4]];
		return null;
	};
	const over = (top, below) => { const a = top[3]; return [0, 1, 2].map(i => top[i] * a + below[i] * (1 - a)).concat(1); };
	const background = e => {
		const layers = [];
		for (let p = e; p; p = p.parentElement) {
			const c = parse(getComputedStyle(p).backgroundColor);
			if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
		}
		let bg = [255, 255, 255, 1];
		if (!layers.length || layers[layers.length - 1][3] < 1) bg = parse(getComputedStyle(document.documentElement).backgroundColor) || bg;
		if (bg[3] < 1) bg = [255, 255, 255, 1];
		for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
		return bg;
	};
	const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const seen = new Set();
	for (const e of document.querySelectorAll("main *, header nav *")) {
		if (!visible(e) || e.closest("svg, [disabled], [aria-disabled=true], .badge, progress")) continue;
		if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
		const st = getComputedStyle(e);
		const fg = parse(st.color);
		if (!fg) continue;
		const bg = background(e);
		const r = ratio(over(fg, bg), bg);
		const large = parseFloat(st.fontSize) >= 24 || (parseFloat(st.fontSize) >= 18.66 && +st.fontWeight >= 700);
		if (r < (large ? 3 : 4.5)) {
			const what = e.tagName.toLowerCase() + (typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/)[0] : "");
			const key = what + " " + st.color;
			if (seen.has(key)) continue;
			seen.add(key);
			problems.push("contrast " + r.toFixed(2) + ":1 for " + what + " «" + e.innerText.trim().slice(0, 40) + "» (" + st.color + " on rgb(" + bg.slice(0, 3).map(Math.round) + "))");
		}
	}
	return problems;
})()`

// focusScript focuses the first control of every group of controls and
// checks the ring is drawn on that control, not around the group.
const focusScript = `(() => {
	const problems = [];
	const ring = e => { const st = getComputedStyle(e); return (st.outlineStyle !== "none" && parseFloat(st.outlineWidth) > 0) || (st.boxShadow !== "none" && !/^rgba\(0, 0, 0, 0\)/.test(st.boxShadow)); };
	for (const g of document.querySelectorAll("[role=group], [role=search]")) {
		const c = [...g.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href]")].find(e => e.checkVisibility() && !e.disabled);
		if (!c) continue;
		c.focus();
		if (document.activeElement !== c) continue;
		const what = c.tagName.toLowerCase() + (c.name ? "[name=" + c.name + "]" : "") + " «" + (c.textContent || "").trim().slice(0, 20) + "»";
		if (!ring(c)) problems.push("focused " + what + " draws no focus ring");
		if (ring(g)) problems.push("focusing " + what + " draws a ring around its whole group");
		c.blur();
	}
	return problems;
})()`

// TestEveryPageIsAccessible runs the accessibility check over every page,
// in the light and the dark theme, at 1400 × 1000.
func TestEveryPageIsAccessible(t *testing.T) {
	chromePath(t)
	s := seedEverything(t)
	b := newBrowser(t, s.URL)
	shots := t.ArtifactDir()
	// Focus emulation: a headless tab's page has no focus of its own, and
	// :focus would match nothing.
	b.do("a desktop viewport", 15*time.Second, chromedp.EmulateViewport(1400, 1000),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			return err
		}))
	for _, theme := range []string{"light", "dark"} {
		b.open("/runs") // localStorage belongs to the app's origin
		mustEval[bool](b, "theme "+theme, fmt.Sprintf(`(localStorage.setItem("tribunal-theme", %s), true)`, js(theme)))
		for _, path := range s.pages {
			t.Run(theme+path, func(t *testing.T) {
				b := b.withT(t)
				b.settle(path)
				for _, p := range mustEval[[]string](b, "accessibility", a11yScript) {
					t.Error(p)
				}
				for _, p := range mustEval[[]string](b, "focus rings", focusScript) {
					t.Error(p)
				}
				if theme == "light" {
					b.shot(shots, shotName(1400, path))
				}
			})
		}
	}
}
