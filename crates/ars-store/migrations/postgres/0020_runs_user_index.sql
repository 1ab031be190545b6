-- `runs_user_created (user_id, created_at)` answers every lookup by user that `runs_user_id
-- (user_id)` did (its first column), so the older index only cost each run's insert a B-tree
-- write of its own.
DROP INDEX IF EXISTS runs_user_id;
