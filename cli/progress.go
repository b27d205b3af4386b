package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"tribunal/store"
)

// progress draws a run's progress: on a terminal, one bar per phase redrawn
// in place with counts, items/s, ETA and the current model, with failures
// printed above the bars as they happen; elsewhere (CI logs), a plain line
// every interval and at each phase change, and the failures.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	width    int
	interval time.Duration
	now      func() time.Time

	drawn     int // lines of the last drawing, to redraw over them
	lastPlain time.Time
	lastPhase string
	start     time.Time
	rates     [2]rateMeter // answering, scoring
}

// snapshot is what the bars show.
type snapshot struct {
	Status    store.RunStatus
	Phase     store.Phase
	Progress  store.Progress
	Current   *store.CurrentWork
	Judged    bool // the run has judges (else checks score the answers)
	Model     string
	Elapsed   time.Duration
	Finishing bool
}

// rateMeter measures items/s over a sliding window of samples.
type rateMeter struct {
	samples []sample
}

type sample struct {
	t time.Time
	n int64
}

const rateWindow = 15 * time.Second

func (m *rateMeter) add(t time.Time, n int64) {
	m.samples = append(m.samples, sample{t, n})
	for len(m.samples) > 2 && t.Sub(m.samples[0].t) > rateWindow {
		m.samples = m.samples[1:]
	}
}

// rate is items per second over the window; 0 before there is movement.
func (m *rateMeter) rate() float64 {
	if len(m.samples) < 2 {
		return 0
	}
	a, b := m.samples[0], m.samples[len(m.samples)-1]
	dt := b.t.Sub(a.t).Seconds()
	if dt <= 0 || b.n <= a.n {
		return 0
	}
	return float64(b.n-a.n) / dt
}

func newProgress(w io.Writer, tty bool, interval time.Duration) *progress {
	return &progress{w: w, tty: tty, width: 28, interval: interval, now: time.Now, start: time.Now()}
}

// event prints a line (a failure, a log) above the bars.
func (p *progress) event(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintln(p.w, line)
	p.drawn = 0
}

// clear erases the last drawing on a terminal.
func (p *progress) clear() {
	if !p.tty || p.drawn == 0 {
		return
	}
	fmt.Fprintf(p.w, "\x1b[%dA", p.drawn)
	for range p.drawn {
		fmt.Fprint(p.w, "\x1b[2K\n")
	}
	fmt.Fprintf(p.w, "\x1b[%dA", p.drawn)
	p.drawn = 0
}

// update takes a new snapshot: redraws the bars, or prints a plain line when due.
func (p *progress) update(s snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	pr := s.Progress
	answered := pr.Benchmarked()
	done := pr.Done()
	p.rates[0].add(now, answered)
	p.rates[1].add(now, done)
	if p.tty {
		p.clear()
		lines := []string{
			p.bar("Answering", answered, pr.Total, p.rates[0].rate()),
			p.bar(scoreLabel(s.Judged), done, pr.Total, p.rates[1].rate()),
			p.status(s),
		}
		for _, l := range lines {
			fmt.Fprintln(p.w, l)
		}
		p.drawn = len(lines)
		return
	}
	phase := string(s.Phase)
	if !s.Finishing && phase == p.lastPhase && now.Sub(p.lastPlain) < p.interval {
		return
	}
	p.lastPhase, p.lastPlain = phase, now
	fmt.Fprintf(p.w, "[%s] %s · answered %s · %s %s · %s\n", fmtDur(s.Elapsed), strings.ToLower(phase),
		counts(answered, pr.Total, p.rates[0].rate()), strings.ToLower(scoreLabel(s.Judged)),
		counts(done, pr.Total, p.rates[1].rate()), p.tail(s))
}

// finish leaves the last drawing on screen.
func (p *progress) finish() {
	p.mu.Lock()
	p.drawn = 0
	p.mu.Unlock()
}

func scoreLabel(judged bool) string {
	if judged {
		return "Judging"
	}
	return "Checking"
}

func (p *progress) bar(label string, n, total int64, rate float64) string {
	frac := 0.0
	if total > 0 {
		frac = math.Min(float64(n)/float64(total), 1)
	}
	full := int(frac * float64(p.width))
	b := strings.Repeat("█", full) + strings.Repeat("░", p.width-full)
	return fmt.Sprintf("%-10s %s %s", label, b, counts(n, total, rate))
}

// counts is "27/40 3.2 items/s ETA 4s".
func counts(n, total int64, rate float64) string {
	s := fmt.Sprintf("%d/%d", n, total)
	if rate > 0 {
		s += fmt.Sprintf(" %.1f items/s", rate)
		if n < total {
			s += " ETA " + fmtDur(time.Duration(float64(total-n)/rate*float64(time.Second)))
		}
	}
	return s
}

func (p *progress) status(s snapshot) string {
	return fmt.Sprintf("%-10s %s · %s", string(s.Status), fmtDur(s.Elapsed), p.tail(s))
}

func (p *progress) tail(s snapshot) string {
	cur := "waiting"
	switch {
	case s.Current != nil:
		what := "answering"
		if s.Current.Status == store.ItemJudging {
			what = "judging"
		}
		cur = fmt.Sprintf("%s %s · task %s", what, s.Current.Label(), s.Current.TaskID)
	case s.Model != "":
		cur = s.Model
	}
	if f := s.Progress.Count(store.ItemFailed); f > 0 {
		cur += fmt.Sprintf(" · %d failed", f)
	}
	return cur
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d", m, sec)
}
