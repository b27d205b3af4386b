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
// While groups still answer (pipeline), a judge with nothing to judge is
// idle and takes no share, so targets keep every slot until an answer
// waits for it. It has work again as soon as this process stores an item
// it waits for (markJudgeWork: the shares change at once, and the targets'
// chains make room at their next call) or its claim finds one; it is idle
// again once a claim finds nothing and it has no call in flight.

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
	// idle marks the judges that take no share (see above); marks counts
	// markJudgeWork's calls, so a claim that found nothing does not idle a
	// judge that was given work meanwhile.
	idle   []bool
	idleOK bool // judges may be idle: groups still answer
	marks  uint64
	shares map[string]int
}

// demands are the lanes that take a share: the groups and the judges not idle.
func (s *split) demands() []laneDemand {
	out := slices.Clone(s.lanes)
	for pos, j := range s.judges {
		if !s.idle[pos] {
			out = append(out, j)
		}
	}
	return out
}

// setShares splits this process's slots between a run's groups and its
// judges for its chains to read (see successor). Judges keep whether they
// are idle from pass to pass; with idleOK false (JUDGING) none is.
func (e *Engine) setShares(rs *runState, lanes, judges []laneDemand, idleOK bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &rs.split
	if len(s.idle) != len(judges) {
		s.idle = make([]bool, len(judges))
		for pos := range s.idle {
			s.idle[pos] = true // nothing is answered before the first pass
		}
	}
	if !idleOK {
		clear(s.idle)
	}
	s.lanes, s.judges, s.idleOK = lanes, judges, idleOK
	s.shares = fairShares(e.cfg.MaxInFlight, s.demands())
}

// markJudgeWork records that judge pos of a run has an item to judge, so
// it takes its share from now on.
func (e *Engine) markJudgeWork(runID int64, pos int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rs := e.runs[runID]
	if rs == nil || pos >= len(rs.split.idle) {
		return
	}
	s := &rs.split
	s.marks++
	if s.idle[pos] {
		s.idle[pos] = false
		s.shares = fairShares(e.cfg.MaxInFlight, s.demands())
	}
}

// judgeMarks is the count markJudgeWork has reached, read before a claim.
func (e *Engine) judgeMarks(rs *runState) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return rs.split.marks
}

// judgeClaimed records what judge pos's claim found while groups answer:
// work makes it take its share; nothing, with no call of its own in flight
// and no work marked since marks was read, makes it idle.
func (e *Engine) judgeClaimed(rs *runState, pos int, found bool, marks uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := &rs.split
	if !s.idleOK || pos >= len(s.idle) {
		return
	}
	idle := s.idle[pos]
	switch {
	case found:
		idle = false
	case e.calls[s.judges[pos].slot] == 0 && s.marks == marks:
		idle = true
	}
	if idle != s.idle[pos] {
		s.idle[pos] = idle
		s.shares = fairShares(e.cfg.MaxInFlight, s.demands())
	}
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
	for pos, j := range s.judges {
		if j.slot == slot && s.idle[pos] {
			return fairShares(e.cfg.MaxInFlight, append(s.demands(), j))[slot]
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
