package engine

import (
	"cmp"
	"context"
	"slices"

	"tribunal/store"
)

// A lane is a queue of groups that run one after another: a provider's
// targets (store.RunTarget.Lane), or one judge of the panel. Lanes run at
// the same time, so this process's MaxInFlight slots are split between
// them (fairShares): a lane's chains claim no successor once it holds more
// than its share, so a provider that started first gives slots back to one
// that warms up after it.
//
// While groups still answer (pipeline), a judge asks for no more slots
// than it has items to judge and calls in flight (split.waiting), so one
// with nothing to judge is idle and takes no share: targets keep every
// slot until an answer waits for it. As soon as this process stores one
// (markJudgeWork), the shares change and the targets' chains make room at
// their next call; a judge idle here may still claim from the slots free
// what other processes answered.

// laneDemand is what one lane could use at once: its slot key and its
// provider's concurrency (0: no limit).
type laneDemand struct {
	slot  string
	limit int
}

// fairShares splits slots between lanes by max-min fairness (water
// filling): each lane gets at most what it can use, and what one cannot use
// goes to the others. Every lane gets at least one slot, so none waits for
// another to finish; lanes sharing a slot key add up.
func fairShares(slots int, lanes []laneDemand) map[string]int {
	byNeed := slices.Clone(lanes)
	need := func(d laneDemand) int {
		if d.limit <= 0 {
			return slots
		}
		return min(d.limit, slots)
	}
	slices.SortStableFunc(byNeed, func(a, b laneDemand) int { return cmp.Compare(need(a), need(b)) })
	shares := make(map[string]int, len(lanes))
	left := slots
	for i, d := range byNeed {
		share := max(min(need(d), left/(len(byNeed)-i)), 1)
		shares[d.slot] += share
		left -= share
	}
	return shares
}

// split is what a run's shares are computed from; guarded by Engine.mu.
type split struct {
	lanes  []laneDemand // the groups benchmarking now
	judges []laneDemand // the judges that claim now, by panel position
	// waiting counts, per judge, the items this process knows wait for it
	// while groups answer (waitingOK): each answer it stores (or verdict of
	// the judge before) adds one, the judge's claims take theirs. A judge
	// asks for no more slots than those and its calls in flight, and for
	// none when idle. marks counts the additions, so that a claim which
	// drained the queue keeps the items stored while it ran.
	waiting   []int
	marks     []uint64
	waitingOK bool
	shares    map[string]int
}

// demands are the lanes that take a share now: the groups, and the judges
// with work; e.mu is held (it reads e.calls).
func (e *Engine) demands(s *split) []laneDemand {
	out := slices.Clone(s.lanes)
	for pos, j := range s.judges {
		if s.waitingOK {
			// A judge on a target's (provider, model) counts the target's calls too.
			need := s.waiting[pos] + e.calls[j.slot]
			if need == 0 {
				continue
			}
			if j.limit <= 0 || need < j.limit {
				j.limit = need
			}
		}
		out = append(out, j)
	}
	return out
}

// reshare splits this process's slots anew; e.mu is held.
func (e *Engine) reshare(s *split) {
	s.shares = fairShares(e.cfg.MaxInFlight, e.demands(s))
}

// setShares splits this process's slots between a run's groups and its
// judges for its chains to read (see successor). While groups answer
// (waitingOK) judges ask for what waits for them; once judging, for all
// their provider allows.
func (e *Engine) setShares(rs *runState, lanes, judges []laneDemand, waitingOK bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &rs.split
	if len(s.waiting) != len(judges) {
		s.waiting, s.marks = make([]int, len(judges)), make([]uint64, len(judges))
	}
	s.lanes, s.judges, s.waitingOK = lanes, judges, waitingOK
	e.reshare(s)
}

// markJudgeWork records that this process stored an item for judge pos of
// a run to judge.
func (e *Engine) markJudgeWork(runID int64, pos int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs := e.runs[runID]
	if rs == nil || !rs.split.waitingOK || pos >= len(rs.split.waiting) {
		return
	}
	s := &rs.split
	s.waiting[pos]++
	s.marks[pos]++
	e.reshare(s)
}

// judgeTook records that judge pos of a run claimed one item that waited
// for it as a chain's successor.
func (e *Engine) judgeTook(runID int64, pos int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs := e.runs[runID]
	if rs == nil || !rs.split.waitingOK || pos >= len(rs.split.waiting) || rs.split.waiting[pos] == 0 {
		return
	}
	rs.split.waiting[pos]--
	e.reshare(&rs.split)
}

// judgeMarks is how many items were stored for judge pos so far, read
// before its claim.
func (e *Engine) judgeMarks(rs *runState, pos int) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if pos >= len(rs.split.marks) {
		return 0
	}
	return rs.split.marks[pos]
}

// judgeClaimed records judge pos's claim of up to limit items, which took
// took: fewer than asked drained the queue but for what was stored since
// marks was read (or met the provider's limit across processes: the calls
// then in flight hold the judge's share, and its chains take the rest).
func (e *Engine) judgeClaimed(rs *runState, pos, limit, took int, marks uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &rs.split
	if !s.waitingOK || pos >= len(s.waiting) {
		return
	}
	if took < limit {
		s.waiting[pos] = int(s.marks[pos] - marks)
	} else {
		s.waiting[pos] = max(s.waiting[pos]-took, 0)
	}
	e.reshare(s)
}

// room is how many more calls this process may start on a slot of the run:
// its fair share, less the calls it already makes there. An idle judge may
// take, from the slots free, the share it would have with work.
func (e *Engine) room(rs *runState, slot string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	share, ok := rs.split.shares[slot]
	if !ok {
		share = e.idleShare(rs, slot)
	}
	return share - e.calls[slot]
}

// idleShare is the share an idle judge's slot would have with work, or
// MaxInFlight for a slot no lane of the run holds; e.mu is held.
func (e *Engine) idleShare(rs *runState, slot string) int {
	s := &rs.split
	for _, j := range s.judges {
		if j.slot == slot {
			return fairShares(e.cfg.MaxInFlight, append(e.demands(s), j))[slot]
		}
	}
	return e.cfg.MaxInFlight
}

// overShare reports whether this process holds more calls on a run's slot
// than the slot's share, so a chain there should end.
func (e *Engine) overShare(runID int64, slot string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs := e.runs[runID]
	if rs == nil {
		return false
	}
	share, ok := rs.split.shares[slot]
	return ok && e.calls[slot] > share
}

// judgeLanes are the panel's judges as lanes; a judge whose provider
// cannot be read now counts as unlimited (its claim fails or waits anyway).
func (e *Engine) judgeLanes(ctx context.Context, rs *runState) []laneDemand {
	out := make([]laneDemand, len(rs.judges))
	for i := range rs.judges {
		pj := &rs.judges[i]
		out[i] = laneDemand{slot: store.SlotKey(pj.ProviderID, pj.Model)}
		if p, err := e.provider(ctx, pj.ProviderID); err == nil {
			out[i].limit = p.Concurrency
		}
	}
	return out
}
