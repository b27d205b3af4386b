// Package runs is Tribunal's use-case layer: what a user can do with runs
// and every number Tribunal shows about them. Handlers, the CLI, the
// scheduler (package watch) and the exports (package report) call it; none
// of them assembles a summary or computes a statistic on its own, and the
// store below it only reads and writes rows.
//
// Where each number is defined:
//
//	progress, percent and ETA        progress.go   Progress, Service.Progress
//	groups running now (provider,    running.go    Service.Running (one per provider
//	  model, phase, done of total)                 lane, judges beside them)
//	an item's overall (weights)      summary.go    ItemWeights (applied in one SQL
//	                                               clause, store.itemOveralls, and
//	                                               its Go twin store.Weigh, with
//	                                               which the engine keeps each
//	                                               item's overall as it writes
//	                                               its scores; TaskOveralls reads
//	                                               those)
//	one item in full, its place      item.go       Service.Item
//	an item's place in grading       grading.go    Service.GradingPlace (store.GradingPlace)
//	a model's overall and interval   summary.go    overallsOf (the database sums
//	                                               the task overalls of a model
//	                                               with many tasks, see
//	                                               analysis.MeanCIOfSums)
//	best overall, best value         summary.go    pickBest (MinScored items per model)
//	per-metric table                 summary.go    metricRows
//	violations per model and         violations.go violationsOf (the judges'
//	  category                                     violations, counted in SQL by
//	                                               store.RunViolationCounts)
//	use-case and category totals     usecases.go   useCaseTotals (items, scored,
//	  (with costs)                                 passed, mean score, costs)
//	a model's time and tokens        analytics.go  spreadOf (mean, median of the middle
//	  (mean, median, std, min, max)                two, population std; store.RunFigures
//	                                               counts each measure's distinct values
//	                                               per target in SQL, and sums and picks
//	                                               the medians from the counts)
//	a model's human grades,          analytics.go  gradesOf (correct ÷ graded; correct 1,
//	  accuracy and weighted score                  partial 0.5, wrong 0)
//	an agent's tool analytics        agent.go      toolStatsOf (calls and turns per item,
//	  (per model)                                  errors ÷ calls, top tools, no final
//	                                               answer; one streamed scan of the
//	                                               trajectories, store.EachTrace)
//	an agent item's trajectory       agent.go      AgentTrace (item rows, item detail,
//	                                               exports)
//	a run's row in the runs list     glance.go     Service.Glance (no scan for live runs)
//	gates' and KPIs' metric values   metrics.go    MetricsOf, NormalizedMetricsOf
//	failure groups                   progress.go   Service.Failures
//	statistics, verdicts, agreement  analysis.go   Service.Analysis (package analysis computes)
//	comparisons of runs              compare.go    Service.Compare, Service.Diff
//	pairwise leaderboards            pairwise.go   Service.Pairwise
//	CSV export                       export.go     Service.WriteCSV
//	which model to use for a use     recommend.go  Service.Recommend (overall, CI, cost
//	  case or category                             per 1k tasks, median latency, Pareto
//	                                               front, filters, order by cost
//	                                               priority; suggestions from model
//	                                               lists in recommend_suggest.go)
//
// Runs of answers that exist already start here too: a file of your own
// outputs becomes an IMPORTED run in outputs.go (ImportOutputs), which
// handlers, the CLI and the Import page call alike.
//
// Summaries, analyses, comparisons and leaderboards are cached by a stamp
// of what they depend on (a run's item counts, grades); an ended run's
// summary and statistics are also stored (Snapshot, StoreAnalysis; the
// engine that ends a run calls StoreEnded), so their first view in any
// process is a read, not a scan. A summary's stamp has two parts: a grade moves only the
// second, which recounts the grades (and restores the snapshot) without
// rescanning the items.
package runs
