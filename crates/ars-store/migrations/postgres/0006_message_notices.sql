-- A completion notice (a system message written when a background subagent run ends after its
-- parent's run) names the child run it reports on: {run_id, thread_id, subagent_slug, status},
-- so clients link to the child without reading the text. NULL on every other message.
ALTER TABLE messages ADD COLUMN notice JSONB
    CHECK (notice IS NULL OR jsonb_typeof(notice) = 'object');
