// Package e2e drives Tribunal's web UI in a real headless Chromium: the app
// runs in-process on SQLite with its engine, and a fake OpenAI-compatible
// server stands in for the models.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"tribunal/engine"
	"tribunal/handlers"
	"tribunal/llm/llmtest"
	"tribunal/store/storetest"
)

// app is Tribunal served by httptest, with a running engine and a fake LLM.
type app struct {
	URL  string
	fake *llmtest.Server
}

// startApp stands Tribunal up on a fresh SQLite store.
func startApp(t *testing.T, script func(llmtest.ChatRequest) llmtest.Reply) *app {
	t.Helper()
	st := storetest.SQLite(t)
	fake := llmtest.New(t, script)
	eng := engine.New(engine.Config{PollInterval: 20 * time.Millisecond}, st, engine.NewBroker(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { eng.Run(ctx) })
	srv := httptest.NewServer(handlers.New(st, eng, slog.Default()))
	t.Cleanup(func() {
		// Open SSE streams would keep Close waiting.
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		wg.Wait()
	})
	return &app{URL: srv.URL, fake: fake}
}

// browser is one tab of a headless Chromium pointed at the app.
type browser struct {
	t    *testing.T
	ctx  context.Context // the tab; never give it a timeout (it owns the browser)
	base string

	errs *errorLog // shared by the copies withT makes
}

// errorLog collects uncaught exceptions and console.error calls, and what
// the Content-Security-Policy refused (reportViolations).
type errorLog struct {
	mu   sync.Mutex
	list []string
}

// chromePath finds the browser binary; without one the test is skipped,
// except under CI, where a missing browser is a failure.
func chromePath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROME_PATH")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if p, err := exec.LookPath(path); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("no browser at %q (set CHROME_PATH); CI must run the browser test", path)
	}
	t.Skipf("no browser at %q (set CHROME_PATH): skipping the browser test", path)
	return ""
}

// newBrowser starts Chromium with a fresh profile; it stops with the test.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path := chromePath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: bctx, base: base, errs: &errorLog{}}
	// The first call starts the browser, on the context without a timeout.
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start browser %s: %v", path, err)
	}
	if _, err := chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: reportViolations}); err != nil {
		t.Fatalf("watch the browser's policy violations: %v", err)
	}
	err := chromedp.Listen(bctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "uncaught exception: " + (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error()
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				if a.Description != "" {
					parts = append(parts, a.Description)
				} else {
					parts = append(parts, string(a.Value))
				}
			}
			msg = "console.error: " + strings.Join(parts, " ")
		default:
			return
		}
		b.errs.mu.Lock()
		b.errs.list = append(b.errs.list, msg)
		b.errs.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("listen to the browser: %v", err)
	}
	return b
}

// reportViolations runs in every page before its own scripts: whatever the
// Content-Security-Policy refuses (an inline script, handler or style, an
// eval) becomes a console.error, so every test that checks jsErrors checks
// that the pages live within the policy.
const reportViolations = `document.addEventListener("securitypolicyviolation", function (e) {
	console.error("Content-Security-Policy refused " + e.violatedDirective + " on " + location.pathname + ": " +
		(e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber + " " + (e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 120) : ""));
});`

// jsErrors returns the JavaScript errors seen so far.
func (b *browser) jsErrors() []string {
	b.errs.mu.Lock()
	defer b.errs.mu.Unlock()
	return append([]string(nil), b.errs.list...)
}

// js quotes a Go string as a JavaScript string literal.
func js(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// do runs actions with a timeout, failing the test with what on error.
func (b *browser) do(what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.diagnose())
	}
}

// eval evaluates a JavaScript expression in the page, with a short timeout.
func eval[T any](b *browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// mustEval is eval that fails the test on error.
func mustEval[T any](b *browser, what, expr string) T {
	b.t.Helper()
	v, err := eval[T](b, expr)
	if err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, b.diagnose())
	}
	return v
}

// open navigates to a path of the app and waits for the page to load.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, 15*time.Second, chromedp.Navigate(b.base+path))
}

// waitFor polls a JavaScript condition until it is truthy, and fails the
// test (stopping it) on timeout. Errors while the page navigates are
// expected and only reported if the wait times out.
func (b *browser) waitFor(what, cond string, timeout time.Duration) {
	b.t.Helper()
	if msg := b.poll(what, cond, timeout); msg != "" {
		b.t.Fatal(msg)
	}
}

// check is waitFor that reports a timeout and lets the test go on.
func (b *browser) check(what, cond string, timeout time.Duration) bool {
	b.t.Helper()
	if msg := b.poll(what, cond, timeout); msg != "" {
		b.t.Error(msg)
		return false
	}
	return true
}

// poll returns "" once cond holds, or a failure message after timeout.
func (b *browser) poll(what, cond string, timeout time.Duration) string {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := eval[bool](b, "!!("+cond+")")
		if err == nil && ok {
			return ""
		}
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Sprintf("timed out after %s waiting for %s (condition %s; last error %v)\n%s", timeout, what, cond, lastErr, b.diagnose())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// diagnose describes the page for a failure message.
func (b *browser) diagnose() string {
	s, err := eval[string](b, `(() => {
		const q = s => { const e = document.querySelector(s); return e ? e.innerText.trim() : "" };
		return "page: " + location.href +
			"\nflash: " + q("#flash") +
			"\nform error: " + q("[data-testid=form-error]") +
			"\ntext: " + (document.body ? document.body.innerText.slice(0, 2500) : "");
	})()`)
	if err != nil {
		s = "(page state unavailable: " + err.Error() + ")"
	}
	if errs := b.jsErrors(); len(errs) > 0 {
		s += "\njavascript errors:\n  " + strings.Join(errs, "\n  ")
	}
	return s
}

// text is the trimmed innerText of the first element matching sel, or "".
func (b *browser) text(sel string) string {
	b.t.Helper()
	return mustEval[string](b, "text of "+sel,
		fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e ? e.innerText.trim() : "" })()`, js(sel)))
}

// typeInto clicks into a field and types text with real key events.
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	b.do(fmt.Sprintf("type %q into %s", text, sel), 10*time.Second,
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.SendKeys(chromedp.CSS(sel), text))
}

// click clicks the first visible element matching sel with the mouse.
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, 10*time.Second, chromedp.Click(chromedp.CSS(sel)))
}

// choose picks the option labelled label in a <select>. A native drop-down
// cannot be driven with the mouse in headless Chromium, so this does what a
// user's pick does (and what Playwright's selectOption does): focus, select
// the option, and fire input and change, which HTMX listens to.
func (b *browser) choose(sel, label string) {
	b.t.Helper()
	b.waitFor("select "+sel, fmt.Sprintf("document.querySelector(%s)", js(sel)), 10*time.Second)
	ok := mustEval[bool](b, fmt.Sprintf("choose %q in %s", label, sel), fmt.Sprintf(`(() => {
		const s = document.querySelector(%s);
		const o = [...s.options].find(o => o.textContent.trim() === %s);
		if (!o) return false;
		s.focus();
		s.value = o.value;
		s.dispatchEvent(new Event("input", {bubbles: true}));
		s.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, js(sel), js(label)))
	if !ok {
		b.t.Fatalf("%s has no option %q\n%s", sel, label, b.diagnose())
	}
}

// screenshot saves a full-page PNG for a human to look at when
// E2E_SCREENSHOTS is set (so CI writes no files).
func (b *browser) screenshot(file string) {
	b.t.Helper()
	if os.Getenv("E2E_SCREENSHOTS") == "" {
		return
	}
	// Let CSS transitions (Pico animates checkboxes and buttons) settle; this
	// is for the picture only, nothing is asserted after it.
	time.Sleep(400 * time.Millisecond)
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", file, err)
		return
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", file, err)
		return
	}
	b.t.Logf("screenshot: %s", file)
}
