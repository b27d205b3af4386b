-- Evaluation depth: judgement styles with versions, judges with personalities,
-- judge panels, reference checks, richer tasks, human grades and cost.

-- A style keeps its id while edits add versions; runs freeze the version they used.
CREATE TABLE judgement_styles (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    version INTEGER NOT NULL DEFAULT 1,
    builtin BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

CREATE TABLE judgement_style_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    style_id INTEGER NOT NULL REFERENCES judgement_styles(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    scale_min INTEGER NOT NULL,
    scale_max INTEGER NOT NULL CHECK (scale_max > scale_min),
    -- [{name, description, weight}]
    metrics TEXT NOT NULL CHECK (json_valid(metrics)),
    prompt_template TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    UNIQUE (style_id, version)
);

CREATE TABLE judges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    provider_id INTEGER REFERENCES providers(id) ON DELETE SET NULL,
    model TEXT NOT NULL,
    personality_name TEXT NOT NULL DEFAULT '',
    personality_description TEXT NOT NULL DEFAULT '',
    style_id INTEGER NOT NULL REFERENCES judgement_styles(id),
    -- generation settings of the judge's calls (temperature, max_tokens, ...)
    settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
    -- bumped on every edit: a run records which version judged it
    version INTEGER NOT NULL DEFAULT 1,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);

-- A run's judges freeze the judge and style version they used.
ALTER TABLE run_judges ADD COLUMN judge_id INTEGER REFERENCES judges(id) ON DELETE SET NULL;
ALTER TABLE run_judges ADD COLUMN judge_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_judges ADD COLUMN personality_name TEXT NOT NULL DEFAULT '';
ALTER TABLE run_judges ADD COLUMN personality_description TEXT NOT NULL DEFAULT '';
ALTER TABLE run_judges ADD COLUMN style_id INTEGER;
ALTER TABLE run_judges ADD COLUMN style_name TEXT NOT NULL DEFAULT '';
ALTER TABLE run_judges ADD COLUMN style_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_judges ADD COLUMN scale_min INTEGER NOT NULL DEFAULT 1;
ALTER TABLE run_judges ADD COLUMN scale_max INTEGER NOT NULL DEFAULT 10;
ALTER TABLE run_judges ADD COLUMN metrics TEXT NOT NULL DEFAULT '[{"name":"score","description":"","weight":1}]' CHECK (json_valid(metrics));
ALTER TABLE run_judges ADD COLUMN prompt_template TEXT NOT NULL DEFAULT '';

-- Richer tasks (seeds 001, 003, 004); lists and maps are JSON.
ALTER TABLE tasks ADD COLUMN reference TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN turns TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(turns));
ALTER TABLE tasks ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN usecase TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
ALTER TABLE tasks ADD COLUMN constraints TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN examples TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN judge_instructions TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN comments TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN checks TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(checks));
ALTER TABLE tasks ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata));
CREATE INDEX idx_tasks_usecase ON tasks (usecase, category);

ALTER TABLE run_tasks ADD COLUMN reference TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN turns TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(turns));
ALTER TABLE run_tasks ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN usecase TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags));
ALTER TABLE run_tasks ADD COLUMN constraints TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN examples TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN judge_instructions TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN comments TEXT NOT NULL DEFAULT '';
ALTER TABLE run_tasks ADD COLUMN checks TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(checks));

-- Run options: repeats, which metrics and checks are on, weights of the overall score.
ALTER TABLE runs ADD COLUMN repeats INTEGER NOT NULL DEFAULT 1 CHECK (repeats >= 1);
ALTER TABLE runs ADD COLUMN options TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(options));
ALTER TABLE runs ADD COLUMN source_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL;

-- Prices frozen per target (USD per million tokens); NULL = unknown.
ALTER TABLE run_targets ADD COLUMN input_per_mtok REAL;
ALTER TABLE run_targets ADD COLUMN output_per_mtok REAL;
ALTER TABLE run_judges ADD COLUMN input_per_mtok REAL;
ALTER TABLE run_judges ADD COLUMN output_per_mtok REAL;

-- judge_pos: the panel judge an item waits for (judges work through items in turn).
-- score: the item's overall judge score (mean over the panel), kept for fast aggregates.
ALTER TABLE items ADD COLUMN judge_pos INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN score REAL;
ALTER TABLE items ADD COLUMN cost_usd REAL;
ALTER TABLE items ADD COLUMN judge_cost_usd REAL NOT NULL DEFAULT 0;
-- a multi-turn task's answers, one per user turn (JSON); response holds the last
ALTER TABLE items ADD COLUMN answers TEXT;

CREATE TABLE provider_prices (
    provider_id INTEGER NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    input_per_mtok REAL NOT NULL CHECK (input_per_mtok >= 0),
    output_per_mtok REAL NOT NULL CHECK (output_per_mtok >= 0),
    -- MANUAL, or OPENROUTER when picked up from its models endpoint
    source TEXT NOT NULL DEFAULT 'MANUAL',
    PRIMARY KEY (provider_id, model)
);

-- Human grades; the last write wins.
CREATE TABLE grades (
    item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    grade TEXT NOT NULL CHECK (grade IN ('correct', 'partial', 'wrong')),
    notes TEXT NOT NULL DEFAULT '',
    updated_at DATETIME NOT NULL
);
CREATE INDEX idx_grades_run ON grades (run_id);
CREATE INDEX idx_scores_item ON scores (item_id, metric);
