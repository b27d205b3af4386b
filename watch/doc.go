// Package watch keeps watch over Tribunal's runs (issue 6, seed 002 §6–§8):
// a scheduler that fires saved run templates on cron expressions, an
// evaluator that stores each finished run's metrics and KPI values and
// checks its alerts, and a deliverer that sends the resulting
// notifications. Each is a loop over the database, so every process
// (`tribunal` and `tribunal worker`) runs all three and they share the work.
//
// Scheduling. A schedule's next_run_at is its next occurrence. A due
// schedule is claimed with a conditional UPDATE on its revision, which moves
// next_run_at to the first occurrence after now: among processes racing for
// an occurrence exactly one wins (store.ClaimOccurrence). The claim and a
// firing row (status STARTING) land in one transaction; creating the run
// then moves the firing on:
//
//	STARTING ──run created──▶ STARTED ──run ends──▶ outcome SUCCEEDED | FAILED | CANCELLED
//	    │
//	    ├──active-run limit──▶ WAITING ──retried every RetryInterval──▶ STARTING …
//	    │                         └──next occurrence came first──▶ SKIPPED
//	    └──template invalid──▶ ERROR (counts as a failure)
//
// Occurrences that fell due while no scheduler ran (the server was down) are
// folded into one run, fired at once on start, whose firing, run log and an
// in-app notification say how many were missed. A process that stops
// between claiming and creating the run leaves the firing STARTING; after
// StartTimeout another process links the run if it was created, or fires
// the occurrence again. A FAILED run or a template that cannot start counts
// toward the schedule's consecutive failures and may disable it (seed 002
// §8.4); a FINISHED run resets them; cancelled runs and occurrences skipped
// because another run held the slot count neither way.
//
// Triggers. A schedule's trigger is CRON (the above), WEBHOOK or EVENT. A
// WEBHOOK schedule is started by Trigger, given the token it was created
// with (only its SHA-256 is stored, compared in constant time); its run and
// firing say WEBHOOK. An EVENT schedule listens for import.finished
// (optionally from one trace source) or run.finished; Fire starts every
// enabled listener, with triggered_by EVENT. The evaluator fires
// run.finished for each FINISHED run it evaluates (so once per finish,
// across processes); a run an event started fires nothing, so listeners
// cannot chain into a loop. Neither trigger waits for a run slot: a full
// active-run limit answers a webhook call 409 and records an event's firing
// as SKIPPED.
//
// Evaluation. FINISHED and FAILED runs get their metrics (runs.NormalizedMetrics)
// stored, every KPI that applies computed for the run and each model, and
// every enabled alert created before the run finished checked. Runs are
// claimed in run_evaluations, keyed by finished_at, so a run is evaluated
// once per time it finishes (again after judging is retried).
//
// Delivery. A firing's channels become deliveries: in_app at once, the
// others PENDING until the deliverer sends them, retrying with backoff
// (BackoffBase·attempt⁴, capped) up to MaxAttempts. Nothing here runs
// inside the engine, so a slow or failing channel never holds a run up.
package watch
