-- Use cases as things of their own (issue 16 §2, seed 004 §11): what a
-- group of tasks is for, its constraints, and the defaults that drive
-- prompts and model recommendation. Tasks still name their use case by
-- text (tasks.usecase); a use case without a row here has no such fields.
CREATE TABLE usecases (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    goal TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    constraints TEXT NOT NULL DEFAULT '{}',
    default_judge_model TEXT NOT NULL DEFAULT '',
    default_candidate_models TEXT NOT NULL DEFAULT '[]',
    cost_priority TEXT NOT NULL DEFAULT 'balanced' CHECK (cost_priority IN ('low', 'balanced', 'high')),
    context_needed_tokens BIGINT NOT NULL DEFAULT 0 CHECK (context_needed_tokens >= 0),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
COMMENT ON COLUMN usecases.constraints IS 'JSON object of scalar constraints, e.g. {"chunk_min": 500, "coverage_required": true}';
COMMENT ON COLUMN usecases.cost_priority IS 'low: cheapest that is good enough; balanced; high: quality first';
