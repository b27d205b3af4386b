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

// setShares records a run's shares for its chains to read (see successor).
func (e *Engine) setShares(rs *runState, lanes []laneDemand) {
	shares := fairShares(e.cfg.MaxInFlight, lanes)
	e.mu.Lock()
	rs.shares = shares
	e.mu.Unlock()
}

// room is how many more calls this process may start on a slot of the run:
// its fair share, less the calls it already makes there.
func (e *Engine) room(rs *runState, slot string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	share, ok := rs.shares[slot]
	if !ok {
		return e.cfg.MaxInFlight
	}
	return share - e.calls[slot]
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
	share, ok := rs.shares[slot]
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
