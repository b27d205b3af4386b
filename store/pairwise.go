package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"tribunal/rubric"
	"tribunal/stats"
)

// ComparisonStatus is the life of one pairwise comparison; see engine/pairwise.go.
type ComparisonStatus string

// Comparison statuses.
const (
	ComparisonNew     ComparisonStatus = "NEW"
	ComparisonJudging ComparisonStatus = "JUDGING"
	ComparisonDone    ComparisonStatus = "DONE"
	ComparisonFailed  ComparisonStatus = "FAILED"
)

// Comparison is one pairwise question of a run: two targets' answers to one
// task and repeat, put to one judge in both orders. Picks are rubric.PickA,
// PickB or PickTie, always from target A's side (A means target A won).
type Comparison struct {
	ID          int64            `json:"id"`
	RunID       int64            `json:"run_id"`
	RunTaskID   int64            `json:"run_task_id"`
	RepeatIndex int              `json:"repeat_index"`
	TargetA     int64            `json:"target_a" gorm:"column:target_a"`
	TargetB     int64            `json:"target_b" gorm:"column:target_b"`
	ItemA       int64            `json:"item_a" gorm:"column:item_a"`
	ItemB       int64            `json:"item_b" gorm:"column:item_b"`
	RunJudgeID  int64            `json:"judge_id"`
	Status      ComparisonStatus `json:"status"`
	WorkerID    string           `json:"-"`
	LeaseUntil  *time.Time       `json:"-"`
	Attempts    int              `json:"attempts"`
	Failures    int              `json:"failures"`
	NextRetryAt *time.Time       `json:"next_retry_at,omitempty"`
	VerdictAB   string           `json:"verdict_ab" gorm:"column:verdict_ab"`
	VerdictBA   string           `json:"verdict_ba" gorm:"column:verdict_ba"`
	Winner      string           `json:"winner"`
	Flipped     bool             `json:"flipped"`
	ReasoningAB string           `json:"reasoning_ab" gorm:"column:reasoning_ab"`
	ReasoningBA string           `json:"reasoning_ba" gorm:"column:reasoning_ba"`
	RawAB       string           `json:"-" gorm:"column:raw_ab"`
	RawBA       string           `json:"-" gorm:"column:raw_ba"`
	CostUSD     float64          `json:"cost_usd" gorm:"column:cost_usd"`
	Error       string           `json:"error,omitempty"`
	SlotKey     string           `json:"-"`
	UpdatedAt   time.Time        `json:"updated_at"`
}

// TableName maps Comparison to comparisons.
func (Comparison) TableName() string { return "comparisons" }

// slotInflightSQL counts what holds a (provider, model) concurrency slot:
// items being benchmarked or judged and comparisons being judged. Its
// arguments: the slot key twice.
const slotInflightSQL = `(SELECT COUNT(*) FROM items WHERE slot_key = ? AND status IN ('IN_PROGRESS', 'JUDGING'))
	+ (SELECT COUNT(*) FROM comparisons WHERE slot_key = ? AND status = 'JUDGING')`

// slotInUse counts the calls in flight on a slot, across every worker.
func (s *Store) slotInUse(ctx context.Context, slotKey string) (int64, error) {
	var n int64
	if err := s.rawScan(ctx, &n, "SELECT "+slotInflightSQL, slotKey, slotKey); err != nil {
		return 0, fmt.Errorf("store: count slot: %w", err)
	}
	return n, nil
}

// CreateComparisons makes the comparisons of a pairwise run: for every task
// and repeat, every pair of targets whose items both COMPLETED, once per
// judge. Pairs with a failed answer are left out. It is idempotent (workers
// may race to it, or repeat it after a crash) and reports how many it added.
func (s *Store) CreateComparisons(ctx context.Context, runID int64) (int64, error) {
	res := s.conn(ctx).Exec(`INSERT INTO comparisons
			(run_id, run_task_id, repeat_index, target_a, target_b, item_a, item_b, run_judge_id, status, updated_at)
		SELECT a.run_id, a.run_task_id, a.repeat_index, a.run_target_id, b.run_target_id, a.id, b.id, j.id, 'NEW', ?
		FROM items a
		JOIN items b ON b.run_id = a.run_id AND b.run_task_id = a.run_task_id AND b.repeat_index = a.repeat_index
			AND b.run_target_id > a.run_target_id AND b.status = 'COMPLETED'
		JOIN run_judges j ON j.run_id = a.run_id
		WHERE a.run_id = ? AND a.status = 'COMPLETED'
			AND NOT EXISTS (SELECT 1 FROM items c WHERE c.run_id = a.run_id AND c.run_task_id = a.run_task_id
				AND c.repeat_index = a.repeat_index AND c.status IN ('NEW', 'IN_PROGRESS'))
		ORDER BY a.run_task_id, a.repeat_index, a.run_target_id, b.run_target_id, j.position
		ON CONFLICT (run_id, run_task_id, repeat_index, target_a, target_b, run_judge_id) DO NOTHING`, s.now(), runID)
	if res.Error != nil {
		return 0, fmt.Errorf("store: create comparisons: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// ComparisonClaim says which comparisons to claim and for whom.
type ComparisonClaim struct {
	RunID      int64
	RunJudgeID int64
	WorkerID   string
	Lease      time.Duration
	Limit      int
	// SlotKey names the judge's (provider, model); with SlotLimit > 0 at most
	// SlotLimit calls hold it at once, items and comparisons together, across
	// every worker process.
	SlotKey   string
	SlotLimit int
}

// ClaimComparisons atomically moves up to Limit ready NEW comparisons of a
// RUNNING run's judge to JUDGING under a lease held by WorkerID, and returns
// them; it is ClaimItems for comparisons (same locking, same slot count).
// Attempts is incremented and doubles as the claim token for the result write.
func (s *Store) ClaimComparisons(ctx context.Context, p ComparisonClaim) ([]Comparison, error) {
	var out []Comparison
	err := s.Transact(ctx, func(tx *Store) error {
		limit := max(p.Limit, 1)
		if p.SlotLimit > 0 {
			if s.dialect == Postgres {
				if err := tx.conn(ctx).Exec("SELECT pg_advisory_xact_lock(hashtext(?))", p.SlotKey).Error; err != nil {
					return fmt.Errorf("store: lock slot: %w", err)
				}
			} else {
				inflight, err := tx.slotInUse(ctx, p.SlotKey)
				if err != nil {
					return err
				}
				if limit = min(limit, p.SlotLimit-int(inflight)); limit <= 0 {
					return nil
				}
			}
		}
		now := s.now()
		lock, limitExpr := "", "?"
		args := []any{p.WorkerID, p.SlotKey, now.Add(p.Lease), now, p.RunID, p.RunJudgeID, now, limit}
		if s.dialect == Postgres {
			lock = " FOR UPDATE SKIP LOCKED"
			if p.SlotLimit > 0 {
				// Under the slot's advisory lock, this statement's snapshot sees every committed claim.
				limitExpr = "GREATEST(0, LEAST(?, ? - (" + slotInflightSQL + ")))"
				args = append(args, p.SlotLimit, p.SlotKey, p.SlotKey)
			}
		}
		return tx.conn(ctx).Raw(`UPDATE comparisons SET status = 'JUDGING', worker_id = ?, slot_key = ?, lease_until = ?,
				attempts = attempts + 1, updated_at = ?
			WHERE id IN (SELECT id FROM comparisons WHERE run_id = ? AND run_judge_id = ? AND status = 'NEW'
				AND (next_retry_at IS NULL OR next_retry_at <= ?)
				AND EXISTS (SELECT 1 FROM runs WHERE runs.id = comparisons.run_id AND runs.status = 'RUNNING' AND runs.deleted_at IS NULL)
				ORDER BY id LIMIT `+limitExpr+lock+`)
			RETURNING *`, args...).Scan(&out).Error
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim comparisons: %w", err)
	}
	slices.SortFunc(out, func(a, b Comparison) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// claimedComparison restricts a write to the comparison as this claim left
// it, so a worker whose lease expired cannot write a result after another
// worker re-claimed it.
func (s *Store) claimedComparison(ctx context.Context, c *Comparison) *gorm.DB {
	return s.conn(ctx).Model(&Comparison{}).
		Where("id = ? AND status = ? AND worker_id = ? AND attempts = ?", c.ID, ComparisonJudging, c.WorkerID, c.Attempts)
}

func (s *Store) updateComparison(ctx context.Context, c *Comparison, updates map[string]any) error {
	return s.updateLeased(s.claimedComparison(ctx, c), "comparison", c.ID, updates)
}

// RenewComparisonLease pushes a claimed comparison's lease forward while its calls run.
func (s *Store) RenewComparisonLease(ctx context.Context, c *Comparison, lease time.Duration) error {
	res := s.claimedComparison(ctx, c).Update("lease_until", s.now().Add(lease))
	if res.Error != nil {
		return fmt.Errorf("store: renew lease of comparison %d: %w", c.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("store: renew lease of comparison %d: %w", c.ID, ErrLeaseLost)
	}
	return nil
}

// PairHalf is a judge's verdict in one order, already un-swapped to target A's side.
type PairHalf struct {
	Pick      string // rubric.PickA, PickB or PickTie
	Reasoning string
	Raw       string
}

// PairResult is a comparison's outcome: both orders and what the calls cost.
type PairResult struct {
	AB, BA  PairHalf
	CostUSD float64
}

// PairOutcome is the winner of a comparison from its two orders' picks:
// their common pick, or a tie when they disagree (flipped).
func PairOutcome(ab, ba string) (winner string, flipped bool) {
	if ab == ba {
		return ab, false
	}
	return rubric.PickTie, true
}

// CompleteComparison stores both orders' verdicts and the winner, once: only
// while the claim holds.
func (s *Store) CompleteComparison(ctx context.Context, c *Comparison, r PairResult) error {
	for _, p := range []string{r.AB.Pick, r.BA.Pick} {
		if p != rubric.PickA && p != rubric.PickB && p != rubric.PickTie {
			return fmt.Errorf("store: complete comparison %d: pick %q is not A, B or TIE", c.ID, p)
		}
	}
	winner, flipped := PairOutcome(r.AB.Pick, r.BA.Pick)
	return s.updateComparison(ctx, c, map[string]any{
		"status": ComparisonDone, "verdict_ab": r.AB.Pick, "verdict_ba": r.BA.Pick, "winner": winner, "flipped": flipped,
		"reasoning_ab": r.AB.Reasoning, "reasoning_ba": r.BA.Reasoning, "raw_ab": r.AB.Raw, "raw_ba": r.BA.Raw,
		"cost_usd": gorm.Expr("cost_usd + ?", r.CostUSD), "error": "", "worker_id": "", "lease_until": nil, "next_retry_at": nil,
	})
}

// ComparisonRetry is how a claimed comparison goes back to NEW.
type ComparisonRetry struct {
	At     time.Time // not claimed again before
	Reason string
	// Failed counts the attempt as a judge failure.
	Failed bool
	// AB, when set, keeps the first order's verdict so the next attempt asks only the second.
	AB      *PairHalf
	CostUSD float64 // what this attempt's calls cost
}

// RetryComparison puts a claimed comparison back to NEW with a retry time.
func (s *Store) RetryComparison(ctx context.Context, c *Comparison, r ComparisonRetry) error {
	updates := map[string]any{"status": ComparisonNew, "next_retry_at": r.At, "error": r.Reason, "worker_id": "", "lease_until": nil,
		"cost_usd": gorm.Expr("cost_usd + ?", r.CostUSD)}
	if r.Failed {
		updates["failures"] = gorm.Expr("failures + 1")
	}
	if r.AB != nil {
		updates["verdict_ab"], updates["reasoning_ab"], updates["raw_ab"] = r.AB.Pick, r.AB.Reasoning, r.AB.Raw
	}
	return s.updateComparison(ctx, c, updates)
}

// FailComparison marks a claimed comparison FAILED with the reason.
func (s *Store) FailComparison(ctx context.Context, c *Comparison, reason string, costUSD float64) error {
	return s.updateComparison(ctx, c, map[string]any{"status": ComparisonFailed, "error": reason, "worker_id": "", "lease_until": nil,
		"cost_usd": gorm.Expr("cost_usd + ?", costUSD)})
}

// rescueComparisons returns comparisons whose lease ran out to NEW; its
// WHERE is the lease index's own predicate.
func (s *Store) rescueComparisons(ctx context.Context, now time.Time) (int64, error) {
	res := s.conn(ctx).Exec(`UPDATE comparisons SET status = 'NEW', worker_id = '', lease_until = NULL, updated_at = ?
		WHERE status = 'JUDGING' AND lease_until < ?`, now, now)
	if res.Error != nil {
		return 0, fmt.Errorf("store: rescue comparisons: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// WorkComparison is a claimed comparison with the task and both answers.
type WorkComparison struct {
	Comparison
	Task RunTask
	A, B Item
}

// WorkComparisons loads the task and the two items of each claimed comparison.
func (s *Store) WorkComparisons(ctx context.Context, cs []Comparison) ([]WorkComparison, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	taskIDs := make([]int64, 0, len(cs))
	itemIDs := make([]int64, 0, 2*len(cs))
	for _, c := range cs {
		taskIDs = append(taskIDs, c.RunTaskID)
		itemIDs = append(itemIDs, c.ItemA, c.ItemB)
	}
	var tasks []RunTask
	if err := s.conn(ctx).Where("id IN ?", taskIDs).Find(&tasks).Error; err != nil {
		return nil, fmt.Errorf("store: comparison tasks: %w", err)
	}
	var items []Item
	if err := s.conn(ctx).Where("id IN ?", itemIDs).Find(&items).Error; err != nil {
		return nil, fmt.Errorf("store: comparison items: %w", err)
	}
	tm := make(map[int64]RunTask, len(tasks))
	for _, t := range tasks {
		tm[t.ID] = t
	}
	im := make(map[int64]Item, len(items))
	for _, it := range items {
		im[it.ID] = it
	}
	out := make([]WorkComparison, len(cs))
	for i, c := range cs {
		out[i] = WorkComparison{Comparison: c, Task: tm[c.RunTaskID], A: im[c.ItemA], B: im[c.ItemB]}
	}
	return out, nil
}

// ComparisonCounts counts a run's comparisons by status.
type ComparisonCounts struct {
	Total   int64 `json:"total"`
	New     int64 `json:"new"`
	Judging int64 `json:"judging"`
	Done    int64 `json:"done"`
	Failed  int64 `json:"failed"`
	// Flipped counts DONE comparisons whose two orders disagreed.
	Flipped int64   `json:"flipped"`
	CostUSD float64 `json:"cost_usd"`
}

// Pending counts comparisons that still need a judge: NEW (perhaps waiting
// for a retry time) or JUDGING.
func (c ComparisonCounts) Pending() int64 { return c.New + c.Judging }

// ComparisonProgress counts a run's comparisons by status.
func (s *Store) ComparisonProgress(ctx context.Context, runID int64) (ComparisonCounts, error) {
	var rows []struct {
		Status  ComparisonStatus
		N       int64
		Flipped int64
		Cost    float64
	}
	err := s.conn(ctx).Model(&Comparison{}).
		Select("status, COUNT(*) AS n, SUM(CASE WHEN flipped THEN 1 ELSE 0 END) AS flipped, COALESCE(SUM(cost_usd), 0) AS cost").
		Where("run_id = ?", runID).Group("status").Scan(&rows).Error
	if err != nil {
		return ComparisonCounts{}, fmt.Errorf("store: comparison progress: %w", err)
	}
	var c ComparisonCounts
	for _, r := range rows {
		c.Total += r.N
		c.CostUSD += r.Cost
		switch r.Status {
		case ComparisonNew:
			c.New = r.N
		case ComparisonJudging:
			c.Judging = r.N
		case ComparisonDone:
			c.Done, c.Flipped = r.N, r.Flipped
		case ComparisonFailed:
			c.Failed = r.N
		}
	}
	return c, nil
}

// RunComparisons lists a run's comparisons in id order (for exports and tests).
func (s *Store) RunComparisons(ctx context.Context, runID int64) ([]Comparison, error) {
	var out []Comparison
	if err := s.conn(ctx).Where("run_id = ?", runID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("store: run comparisons: %w", err)
	}
	return out, nil
}

// PairTally counts a run's DONE comparisons with one outcome.
type PairTally struct {
	TargetA    int64 `gorm:"column:target_a"`
	TargetB    int64 `gorm:"column:target_b"`
	RunJudgeID int64
	Winner     string
	Flipped    bool
	N          int
}

// PairTallies groups a run's DONE comparisons by pair, judge and outcome.
func (s *Store) PairTallies(ctx context.Context, runID int64) ([]PairTally, error) {
	var out []PairTally
	err := s.conn(ctx).Model(&Comparison{}).
		Select("target_a, target_b, run_judge_id, winner, flipped, COUNT(*) AS n").
		Where("run_id = ? AND status = ?", runID, ComparisonDone).
		Group("target_a, target_b, run_judge_id, winner, flipped").
		Order("target_a, target_b, run_judge_id, winner, flipped").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: pair tallies: %w", err)
	}
	return out, nil
}

// PairwiseRating is a target's place on a pairwise leaderboard: its
// Bradley–Terry rating on the Elo scale (mean 1000) with a 95% bootstrap
// interval, and its record (a tie counts half a win in the fit).
type PairwiseRating struct {
	TargetID int64   `json:"target_id"`
	Provider string  `json:"provider"`
	Model    string  `json:"model"`
	Rating   float64 `json:"rating"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Wins     int     `json:"wins"`
	Losses   int     `json:"losses"`
	Ties     int     `json:"ties"`
	N        int     `json:"n"`
}

// JudgeFlips is a judge's position-flip record: of its DONE comparisons, how
// many got different picks when the answers swapped places.
type JudgeFlips struct {
	RunJudgeID  int64    `json:"judge_id"`
	Judge       string   `json:"judge"`
	Comparisons int      `json:"comparisons"`
	Flipped     int      `json:"flipped"`
	FlipRate    *float64 `json:"flip_rate"` // nil before any comparison is done
}

// PairwiseReport is a pairwise run's leaderboard, its judges' flip rates and
// its comparison counts.
type PairwiseReport struct {
	Leaderboard []PairwiseRating `json:"leaderboard"`
	Judges      []JudgeFlips     `json:"judges"`
	Comparisons ComparisonCounts `json:"comparisons"`
}

// RunPairwise builds a run's pairwise report; run must come with its targets and judges (Store.Run).
func (s *Store) RunPairwise(ctx context.Context, run *Run) (*PairwiseReport, error) {
	counts, err := s.ComparisonProgress(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	tallies, err := s.PairTallies(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	r := PairwiseLeaderboard(run.Targets, run.Judges, tallies, uint64(run.ID))
	r.Comparisons = counts
	return &r, nil
}

// PairwiseLeaderboard fits stats.BradleyTerryCI to the tallies (every judge's
// comparisons pooled, deterministic for a seed) and ranks the targets by
// rating, best first; a target without comparisons sits at 1000 with N 0.
// It also tallies each judge's flips.
func PairwiseLeaderboard(targets []RunTarget, judges []RunJudge, tallies []PairTally, seed uint64) PairwiseReport {
	index := make(map[int64]int, len(targets))
	out := PairwiseReport{Leaderboard: make([]PairwiseRating, len(targets)), Judges: make([]JudgeFlips, len(judges))}
	for i, t := range targets {
		index[t.ID] = i
		out.Leaderboard[i] = PairwiseRating{TargetID: t.ID, Provider: t.ProviderName, Model: t.Model}
	}
	judgeIndex := make(map[int64]int, len(judges))
	for i, j := range judges {
		judgeIndex[j.ID] = i
		out.Judges[i] = JudgeFlips{RunJudgeID: j.ID, Judge: j.Name}
	}
	var cs []stats.Comparison
	for _, t := range tallies {
		a, okA := index[t.TargetA]
		b, okB := index[t.TargetB]
		if !okA || !okB || t.N <= 0 {
			continue
		}
		win := stats.Tie
		ra, rb := &out.Leaderboard[a], &out.Leaderboard[b]
		switch t.Winner {
		case rubric.PickA:
			win = stats.WinA
			ra.Wins += t.N
			rb.Losses += t.N
		case rubric.PickB:
			win = stats.WinB
			rb.Wins += t.N
			ra.Losses += t.N
		default:
			ra.Ties += t.N
			rb.Ties += t.N
		}
		for range t.N {
			cs = append(cs, stats.Comparison{A: a, B: b, Winner: win})
		}
		if j, ok := judgeIndex[t.RunJudgeID]; ok {
			out.Judges[j].Comparisons += t.N
			if t.Flipped {
				out.Judges[j].Flipped += t.N
			}
		}
	}
	for i, e := range stats.BradleyTerryCI(len(targets), cs, seed) {
		r := &out.Leaderboard[i]
		r.Rating, r.Lo, r.Hi, r.N = e.Mean, e.Lo, e.Hi, e.N
	}
	for i := range out.Judges {
		if j := &out.Judges[i]; j.Comparisons > 0 {
			rate := float64(j.Flipped) / float64(j.Comparisons)
			j.FlipRate = &rate
		}
	}
	slices.SortStableFunc(out.Leaderboard, func(x, y PairwiseRating) int { return cmp.Compare(y.Rating, x.Rating) })
	return out
}

// RunJudgeFlips is each judge's position-flip record in a run, for the
// judge reliability card; judges without DONE comparisons are left out.
func (s *Store) RunJudgeFlips(ctx context.Context, runID int64) ([]JudgeFlips, error) {
	var out []JudgeFlips
	err := s.conn(ctx).Table("comparisons c").
		Select("c.run_judge_id, j.name AS judge, COUNT(*) AS comparisons, SUM(CASE WHEN c.flipped THEN 1 ELSE 0 END) AS flipped").
		Joins("JOIN run_judges j ON j.id = c.run_judge_id").
		Where("c.run_id = ? AND c.status = ?", runID, ComparisonDone).
		Group("c.run_judge_id, j.name, j.position").Order("j.position").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("store: judge flips: %w", err)
	}
	for i := range out {
		rate := float64(out[i].Flipped) / float64(out[i].Comparisons)
		out[i].FlipRate = &rate
	}
	return out, nil
}
