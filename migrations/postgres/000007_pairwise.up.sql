-- Pairwise judging (issue 7, MT-Bench style): a judge sees two targets'
-- answers to the same task and picks one or a tie. Each comparison is asked
-- in both orders within one claim, so position bias shows (as a flip) and an
-- inconsistent pair counts as a tie. A row is the unit of work of a pairwise
-- run's judging phase, leased and guarded by its claim token like an item.
CREATE TABLE comparisons (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    run_task_id BIGINT NOT NULL REFERENCES run_tasks(id) ON DELETE CASCADE,
    repeat_index INTEGER NOT NULL,
    target_a BIGINT NOT NULL REFERENCES run_targets(id) ON DELETE CASCADE,
    target_b BIGINT NOT NULL REFERENCES run_targets(id) ON DELETE CASCADE,
    item_a BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    item_b BIGINT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    run_judge_id BIGINT NOT NULL REFERENCES run_judges(id) ON DELETE CASCADE,
    status TEXT NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'JUDGING', 'DONE', 'FAILED')),
    worker_id TEXT NOT NULL DEFAULT '',
    lease_until TIMESTAMPTZ,
    attempts INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    next_retry_at TIMESTAMPTZ,
    verdict_ab TEXT NOT NULL DEFAULT '' CHECK (verdict_ab IN ('', 'A', 'B', 'TIE')),
    verdict_ba TEXT NOT NULL DEFAULT '' CHECK (verdict_ba IN ('', 'A', 'B', 'TIE')),
    winner TEXT NOT NULL DEFAULT '' CHECK (winner IN ('', 'A', 'B', 'TIE')),
    flipped BOOLEAN NOT NULL DEFAULT FALSE,
    reasoning_ab TEXT NOT NULL DEFAULT '',
    reasoning_ba TEXT NOT NULL DEFAULT '',
    raw_ab TEXT NOT NULL DEFAULT '',
    raw_ba TEXT NOT NULL DEFAULT '',
    cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    slot_key TEXT NOT NULL DEFAULT '',
    updated_at TIMESTAMPTZ NOT NULL,
    CHECK (target_a < target_b),
    UNIQUE (run_id, run_task_id, repeat_index, target_a, target_b, run_judge_id)
);
-- Each judge of the panel claims its own comparisons in id order.
CREATE INDEX idx_comparisons_claim ON comparisons (run_id, run_judge_id, status, id);
-- Only comparisons being judged hold a lease or a concurrency slot.
CREATE INDEX idx_comparisons_lease ON comparisons (lease_until) WHERE status = 'JUDGING';
CREATE INDEX idx_comparisons_inflight ON comparisons (slot_key) WHERE status = 'JUDGING';

COMMENT ON TABLE comparisons IS 'one pairwise question (task, repeat, two targets) to one judge, asked in both orders';
COMMENT ON COLUMN comparisons.target_a IS 'run target shown first in the A-B order; always the lower id';
COMMENT ON COLUMN comparisons.item_a IS 'target_a''s answer to the task and repeat';
COMMENT ON COLUMN comparisons.item_b IS 'target_b''s answer to the task and repeat';
COMMENT ON COLUMN comparisons.attempts IS 'claims so far, never reset: the claim token that guards the result write';
COMMENT ON COLUMN comparisons.failures IS 'judge-call failures; a lost claim does not count';
COMMENT ON COLUMN comparisons.verdict_ab IS 'pick with target_a shown first: A (target_a), B (target_b) or TIE; kept across a retry once asked';
COMMENT ON COLUMN comparisons.verdict_ba IS 'pick with target_b shown first, un-swapped to target_a''s side';
COMMENT ON COLUMN comparisons.winner IS 'the verdict when both orders agree, else TIE';
COMMENT ON COLUMN comparisons.flipped IS 'the two orders disagreed: the judge''s position-flip signal';
COMMENT ON COLUMN comparisons.cost_usd IS 'judge cost of every call made for this comparison, retries included';
COMMENT ON COLUMN comparisons.slot_key IS 'provider_id:model whose concurrency slot a JUDGING comparison holds';
COMMENT ON INDEX idx_comparisons_claim IS 'claims: a judge''s NEW comparisons of a run in id order';
COMMENT ON INDEX idx_comparisons_lease IS 'the rescuer''s scan for expired leases';
COMMENT ON INDEX idx_comparisons_inflight IS 'per-(provider, model) slot counts, together with idx_items_inflight';
