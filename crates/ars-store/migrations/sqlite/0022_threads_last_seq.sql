-- A thread keeps the seq of its last message: an append takes the next one from the thread's
-- row, which it updates anyway (`updated_at`), instead of reading `messages` for its maximum.
-- An `INSERT INTO messages … SELECT` that read `messages` was filled into a temporary table
-- first, on every message written.
ALTER TABLE threads ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0);
UPDATE threads
SET last_seq = COALESCE((SELECT MAX(seq) FROM messages WHERE messages.thread_id = threads.id), 0);
