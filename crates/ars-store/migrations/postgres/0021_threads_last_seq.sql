-- A thread keeps the seq of its last message: an append takes the next one from the thread's
-- row, which it updates (and locks) first anyway, instead of reading `messages` for its
-- maximum.
ALTER TABLE threads ADD COLUMN last_seq BIGINT NOT NULL DEFAULT 0 CHECK (last_seq >= 0);
UPDATE threads
SET last_seq = COALESCE((SELECT MAX(seq) FROM messages WHERE messages.thread_id = threads.id), 0);
