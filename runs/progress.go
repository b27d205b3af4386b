package runs

import (
	"context"
	"maps"
	"sync"
	"time"

	"tribunal/store"
)

// Progress is how far a run has come. Every view of a run (its page's bar
// and cards, the runs list, the API, the CLI) shows these figures.
type Progress struct {
	Total int64 `json:"total"`
	// Answered counts items past benchmarking (failed ones included).
	Answered int64 `json:"answered"`
	// Judged counts items past judging: COMPLETED or FAILED.
	Judged    int64 `json:"judged"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	// Done is Judged under its older name: items that need nothing more.
	Done int64 `json:"done"`
	// Percent weighs answering and judging half each, 0–100, so it rises
	// from the first answer.
	Percent int `json:"percent"`
	// ETASeconds is the time left at the recent rate; nil until it can be told.
	ETASeconds *int64                     `json:"eta_seconds"`
	ByStatus   map[store.ItemStatus]int64 `json:"by_status"`
}

// progressOf turns item counts into Progress (without the ETA).
func progressOf(p store.Progress) Progress {
	out := Progress{Total: p.Total, Answered: p.Benchmarked(), Judged: p.Done(), Completed: p.Count(store.ItemCompleted),
		Failed: p.Count(store.ItemFailed), Done: p.Done(), ByStatus: p.ByStatus}
	if p.Total > 0 {
		out.Percent = int((out.Answered + out.Judged) * 100 / (2 * p.Total))
	}
	return out
}

// units is the work done in the unit the ETA counts: an answer or a verdict.
func (p Progress) units() int64 { return p.Answered + p.Judged }

// Progress counts a run's items and estimates the time left from the rate
// of the last minutes, as seen by this process.
func (s *Service) Progress(ctx context.Context, run *store.Run) (Progress, error) {
	counts, err := s.itemCounts(ctx, run)
	if err != nil {
		return Progress{}, err
	}
	p := progressOf(counts)
	// A paused run has no time left to tell, and the pause must not count
	// in the rate it resumes with.
	if run.Status.Active() && run.Status != store.RunPaused {
		p.ETASeconds = s.rates.eta(run.ID, s.now(), p.units(), 2*p.Total)
	} else {
		s.rates.forget(run.ID)
	}
	return p, nil
}

// itemCounts counts a run's items by status. A FINISHED or FAILED run's
// items no longer move (every one is done, and a retry makes the run
// RUNNING again), so its counts are kept for as long as its status and
// update time stand: on a run of a million items the count is a scan of a
// million index entries, which every list and page of the run would
// otherwise repeat. A CANCELLED run is counted afresh: its calls in flight
// still land.
func (s *Service) itemCounts(ctx context.Context, run *store.Run) (store.Progress, error) {
	if run.Status != store.RunFinished && run.Status != store.RunFailed {
		return s.store.RunProgress(ctx, run.ID)
	}
	stamp := string(run.Status) + " " + run.UpdatedAt.UTC().Format(time.RFC3339Nano)
	if c, fresh, _ := s.counts.get(run.ID, stamp); fresh {
		return store.Progress{Total: c.Total, ByStatus: maps.Clone(c.ByStatus)}, nil
	}
	c, err := s.store.RunProgress(ctx, run.ID)
	if err != nil {
		return c, err
	}
	s.counts.put(run.ID, stamp, store.Progress{Total: c.Total, ByStatus: maps.Clone(c.ByStatus)})
	return c, nil
}

// knownTotal sets f.Total from an ended run's kept counts where the filter
// is by status alone, so a page of a big run's items costs no count.
func (s *Service) knownTotal(ctx context.Context, run *store.Run, f *store.ItemFilter) error {
	if f.Total != nil || f.Model != "" || f.Phase != "" || f.Reason != "" || f.Violation != "" ||
		(run.Status != store.RunFinished && run.Status != store.RunFailed) {
		return nil
	}
	c, err := s.itemCounts(ctx, run)
	if err != nil {
		return err
	}
	n := c.Total
	if f.Status != "" {
		n = c.Count(f.Status)
	}
	f.Total = &n
	return nil
}

// rateWindow is how far back the rate is measured: long enough to smooth a
// burst, short enough to follow a model that slows down.
const rateWindow = 2 * time.Minute

// minRateSpan is the least time between samples a rate is told from.
const minRateSpan = 3 * time.Second

type sample struct {
	at    time.Time
	units int64
}

// rateBook keeps, per run, the recent samples of work done.
type rateBook struct {
	mu   sync.Mutex
	runs map[int64][]sample
}

// eta records a sample and returns the seconds left at the rate over the
// window, or nil while the samples are too few, too close or show no work.
func (b *rateBook) eta(runID int64, now time.Time, units, total int64) *int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[int64][]sample{}
	}
	ss := b.runs[runID]
	if n := len(ss); n > 0 && ss[n-1].units > units {
		ss = nil // retried items went back: start over
	}
	for len(ss) > 1 && now.Sub(ss[1].at) >= rateWindow {
		ss = ss[1:] // keep one sample at or beyond the window's start
	}
	if n := len(ss); n == 0 || ss[n-1].units != units || now.Sub(ss[n-1].at) >= time.Second {
		ss = append(ss, sample{at: now, units: units})
	}
	if len(ss) > 64 {
		ss = append(ss[:0:0], ss[len(ss)-64:]...)
	}
	b.runs[runID] = ss
	first := ss[0]
	span := now.Sub(first.at)
	done := units - first.units
	if span < minRateSpan || done <= 0 || units >= total {
		return nil
	}
	left := float64(total-units) * span.Seconds() / float64(done)
	v := int64(left + 0.5)
	return &v
}

func (b *rateBook) forget(runID int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.runs, runID)
}

// Failures groups a run's FAILED items by the phase they failed in and the
// reason, most frequent first: what "Finished with N failures" lists.
func (s *Service) Failures(ctx context.Context, runID int64) ([]store.FailureGroup, error) {
	return s.store.RunFailures(ctx, runID)
}
