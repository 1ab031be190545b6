-- A background child's end is told to its parent thread once (a completion notice, a message
-- into the parent's running run, or a new run that acts on it): `parent_told` is set in the
-- same transaction that writes what tells it, so a crash between the child's end and the
-- telling leaves the end untold for any instance to tell, and two tellers cannot both tell.
-- Runs that ended before this release were told the old way.
ALTER TABLE runs ADD COLUMN parent_told BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE runs SET parent_told = TRUE WHERE status NOT IN ('pending', 'running', 'waiting');
CREATE INDEX runs_untold ON runs (finished_at)
    WHERE delivery = 'background' AND parent_told = FALSE AND finished_at IS NOT NULL;

-- A run a background child's end started on its parent thread (a wake) names that child; the
-- wakes of a thread in the last hour are counted against `max_wakes_per_hour`.
ALTER TABLE runs ADD COLUMN wake_of TEXT REFERENCES runs (id) ON DELETE SET NULL;
CREATE INDEX runs_wakes ON runs (thread_id, created_at) WHERE wake_of IS NOT NULL;
