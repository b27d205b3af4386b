-- Provider calls per phase (issue 12): attempts counts the claims of both
-- phases, so an item answered and judged at the first call read 2. It stays
-- the claim token that guards result writes; these two are what users see.
ALTER TABLE items ADD COLUMN answer_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN judge_attempts INTEGER NOT NULL DEFAULT 0;
COMMENT ON COLUMN items.answer_attempts IS 'calls to the target model: one per claim of the answer phase, taken back when the claim is handed back unworked; a multi-turn conversation counts once';
COMMENT ON COLUMN items.judge_attempts IS 'calls to the judges: one per claim of the judging phase (each panel judge''s), taken back when no call was made';

-- Older items split their claims as well as the rows allow: an item without
-- an answer, or of a run without judges, only ever asked its model; an
-- answered item of a judged run counts one answer (the usual first call)
-- and the rest as judge calls.
UPDATE items SET answer_attempts = attempts
WHERE response IS NULL OR NOT EXISTS (SELECT 1 FROM run_judges j WHERE j.run_id = items.run_id);
UPDATE items SET answer_attempts = 1, judge_attempts = attempts - 1
WHERE response IS NOT NULL AND attempts > 0 AND EXISTS (SELECT 1 FROM run_judges j WHERE j.run_id = items.run_id);
