-- Pairwise judging (issue 7, MT-Bench style): a judge sees two targets'
-- answers to the same task and picks one or a tie. Each comparison is asked
-- in both orders within one claim, so position bias shows (as a flip) and an
-- inconsistent pair counts as a tie. A row is the unit of work of a pairwise
-- run's judging phase, leased and guarded by its claim token like an item.
CREATE TABLE comparisons (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    run_task_id INTEGER NOT NULL REFERENCES run_tasks(id) ON DELETE CASCADE,
    repeat_index INTEGER NOT NULL,
    -- target_a is shown first in the A-B order; always the lower id
    target_a INTEGER NOT NULL REFERENCES run_targets(id) ON DELETE CASCADE,
    target_b INTEGER NOT NULL REFERENCES run_targets(id) ON DELETE CASCADE,
    -- the two targets' answers to the task and repeat
    item_a INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    item_b INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    run_judge_id INTEGER NOT NULL REFERENCES run_judges(id) ON DELETE CASCADE,
    status TEXT NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'JUDGING', 'DONE', 'FAILED')),
    -- the lease, as on items; attempts (never reset) is the claim token
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until DATETIME,
    attempts INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    next_retry_at DATETIME,
    -- picks from target_a's side: A-B order, then B-A order un-swapped;
    -- winner is their common pick, TIE when they disagree (flipped)
    verdict_ab TEXT NOT NULL DEFAULT '' CHECK (verdict_ab IN ('', 'A', 'B', 'TIE')),
    verdict_ba TEXT NOT NULL DEFAULT '' CHECK (verdict_ba IN ('', 'A', 'B', 'TIE')),
    winner TEXT NOT NULL DEFAULT '' CHECK (winner IN ('', 'A', 'B', 'TIE')),
    flipped BOOLEAN NOT NULL DEFAULT FALSE,
    reasoning_ab TEXT NOT NULL DEFAULT '',
    reasoning_ba TEXT NOT NULL DEFAULT '',
    raw_ab TEXT NOT NULL DEFAULT '',
    raw_ba TEXT NOT NULL DEFAULT '',
    -- judge cost of every call made for this comparison, retries included
    cost_usd REAL NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    -- provider_id:model whose concurrency slot a JUDGING comparison holds
    slot_key TEXT NOT NULL DEFAULT '',
    updated_at DATETIME NOT NULL,
    CHECK (target_a < target_b),
    UNIQUE (run_id, run_task_id, repeat_index, target_a, target_b, run_judge_id)
);
-- Each judge of the panel claims its own comparisons in id order.
CREATE INDEX idx_comparisons_claim ON comparisons (run_id, run_judge_id, status, id);
-- Only comparisons being judged hold a lease or a concurrency slot.
CREATE INDEX idx_comparisons_lease ON comparisons (lease_until) WHERE status = 'JUDGING';
CREATE INDEX idx_comparisons_inflight ON comparisons (slot_key) WHERE status = 'JUDGING';
