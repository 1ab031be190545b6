-- A run may wait for people: status `waiting`, with what it waits on in `waiting_json` (the
-- pending calls and questions, the schemas to check edited arguments against, the deadline)
-- and the deadline again in `waiting_until_ms` for the sweep that rejects calls nobody decided.
-- A waiting run is active (it holds its thread) but executed nowhere (no lease).
ALTER TABLE runs ADD COLUMN waiting_json TEXT;
ALTER TABLE runs ADD COLUMN waiting_until_ms BIGINT;

ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
    CHECK (status IN ('pending', 'running', 'waiting', 'success', 'error', 'cancelled',
                      'timeout', 'interrupted'));
ALTER TABLE runs DROP CONSTRAINT runs_finished_when_terminal;
ALTER TABLE runs ADD CONSTRAINT runs_finished_when_terminal
    CHECK ((status IN ('pending', 'running', 'waiting')) = (finished_at IS NULL));
-- A run waits exactly when it says on what.
ALTER TABLE runs ADD CONSTRAINT runs_waiting_on_something
    CHECK ((status = 'waiting') = (waiting_json IS NOT NULL));

-- At most one active run per thread, a waiting one included.
DROP INDEX runs_one_active_per_thread;
CREATE UNIQUE INDEX runs_one_active_per_thread ON runs (thread_id)
    WHERE status IN ('pending', 'running', 'waiting');
CREATE INDEX runs_waiting_until ON runs (waiting_until_ms) WHERE status = 'waiting';
