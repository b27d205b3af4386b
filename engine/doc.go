// Package engine runs benchmark runs: it claims items from the database,
// calls the target models and the judge, and stores every outcome.
//
// All coordination goes through the database, so any number of engines (the
// server and `tribunal worker` processes) can share one PostgreSQL.
//
// Item states (store.ItemStatus):
//
//	NEW ──claim──▶ IN_PROGRESS ──answer──▶ WAITING_FOR_JUDGE ──claim──▶ JUDGING ──verdict──▶ COMPLETED
//	 ▲                 │                          ▲                         │
//	 └──retry (backoff)┘                          └──── retry (backoff) ────┘
//	                   │                                                    │
//	                   └──────────── permanent error / attempts used ───────┴──▶ FAILED
//
// A claim is a lease (worker_id, claimed_at, lease_until) that the worker
// renews while the call is in flight. If the worker dies the lease runs out
// and the rescuer returns the item to NEW or WAITING_FOR_JUDGE. Results are
// written only while the claim still holds (same worker and attempt), so an
// item's result is written exactly once. The attempt is that claim token and
// counts every claim; what users see is answer_attempts and judge_attempts,
// the provider calls of each phase, which the claim raises with it and a
// claim handed back unworked, or failed before its call, takes back.
//
// The dispatcher claims items in batches as slots free up. From then on a
// slot keeps itself busy: the statement that writes a call's result also
// claims the next item for the same target (or judge), which the same
// goroutine calls at once (Engine.chain). Swapping one holder for another
// never raises a slot's count, so it needs no lock; it stops when the run is
// paused, the engine stops, nothing is left, or the provider's concurrency
// went down. Calls thus follow each other with no claim round trip between
// them, which is what keeps a latency-bound run near its ideal rate. Chains
// that finish together write their results and claim their successors in
// one batch (batch.go): one transaction on SQLite, one statement on
// PostgreSQL whose text does not depend on the batch's size.
//
// Judge panels: an item waits for each judge of the run in turn (items.judge_pos);
// each judge claims the items waiting for it under its own (provider, model)
// concurrency, and the last verdict completes the item. The item's score is
// the running mean of the panel's overall scores. A run with reference checks
// only completes items after benchmarking; checks are scored in-process when
// the answer is stored. A pairwise run compares answers instead (pairwise.go).
//
// Run phases: BENCHMARKING asks every target in (provider, model) groups,
// each after a warm-up call (retried like an item's: a group fails only
// when its warm-up cannot succeed). Groups wait in lanes (lanes.go,
// store.RunTarget.Lane): a provider's groups run one after another in the
// order the user chose, so a local server never swaps models mid-group,
// while the groups of different providers run at once, each under its own
// provider's concurrency and requests per minute; an http-executor agent
// and an imported target are lanes of their own. Every process reads the
// lanes' current groups from the database (store.PendingTargets: the first
// target of each lane with items NEW or IN_PROGRESS), so several processes
// agree on them, and warm-ups are claimed per target. A process splits its
// MaxInFlight slots between the lanes running at once by max-min fairness,
// and a chain claims no successor while its lane holds more than its share,
// so a provider that started first makes room for one that warms up after.
// JUDGING starts only when every lane's groups are done (no item NEW or
// IN_PROGRESS). With the run option pipeline, judges also claim during
// BENCHMARKING: an item is judged as soon as its answer exists (a pairwise
// task's comparisons once all its targets answered), each judge a lane of
// its own, so a provider that finishes early lends its slots to judging.
// Until then a judge asks for no more slots than it has answers waiting and
// calls in flight, and one with nothing to judge takes no share: targets
// keep every slot until an answer waits, then make room at their next call.
// The run is FINISHED when every item is COMPLETED or FAILED (FAILED when
// none completed); the process that ends it then calls Config.RunEndedFunc
// in the background (the server stores the run's summary and statistics
// with it).
// A FAILED item keeps the phase it failed in (failed_phase); retry-failed
// sends each back there, to NEW (its group warms up afresh) or to
// WAITING_FOR_JUDGE at the judge it failed with, with its attempts renewed,
// and the ended run is RUNNING again.
// PAUSED and CANCELLED runs are not claimed from; the call in flight finishes.
package engine
