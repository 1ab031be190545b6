-- The three commonest writes as one round trip each: a message's append, a run created with its
-- input, a run's end with its final answer. Each was a transaction of two to four statements,
-- every one a round trip with `BEGIN` and `COMMIT` besides (four to six per write). Each is now
-- one function called by one statement, which is its own transaction; the statements inside
-- are the same, in the same order, with the same locks. A function that may not write raises
-- SQLSTATE `ARS01`, so the whole statement is rolled back and nothing of it stays; the store
-- then reads why, as it does on SQLite (`sql_store::REFUSED`).
--
-- The functions are VOLATILE (the default): under READ COMMITTED each statement inside takes
-- a new snapshot, so a statement after a row lock sees what the lock's holder committed, as
-- the statement-by-statement path did (a run's end sees a message sent into the run while it
-- waited for the thread's lock).
--
-- These bodies are the store's statements (`runs/queries.rs`, `conversations/queries.rs`)
-- written out; a change to one of those on these paths is a new migration here.

-- `append_message` for a message that tells no parent anything: the thread's `updated_at` and
-- next seq (its row lock, so appends to one thread take their turns), the run's usage when the
-- message carries it (else a no-op update that locks the run's row: the run cannot end before
-- the message commits), refused unless the run is active; then the message at that seq.
-- Returns the message.
CREATE FUNCTION ars_append_message(
    p_id text, p_thread text, p_run text, p_role text, p_content text, p_tool_calls jsonb,
    p_tool_call_id text, p_tool_name text, p_is_error boolean, p_notice jsonb, p_steer boolean,
    p_now timestamptz, p_prompt bigint, p_completion bigint, p_model text, p_spent boolean
) RETURNS SETOF messages
LANGUAGE plpgsql AS $$
DECLARE
    m messages;
BEGIN
    UPDATE threads SET updated_at = p_now, last_seq = last_seq + 1 WHERE id = p_thread;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no thread %', p_thread USING ERRCODE = 'ARS01';
    END IF;
    IF p_run IS NOT NULL THEN
        IF p_spent THEN
            UPDATE runs SET prompt_tokens = p_prompt, completion_tokens = p_completion,
                            model = COALESCE(p_model, model)
            WHERE id = p_run AND status IN ('pending', 'running', 'waiting');
        ELSE
            UPDATE runs SET status = status
            WHERE id = p_run AND status IN ('pending', 'running', 'waiting');
        END IF;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'run % is not active', p_run USING ERRCODE = 'ARS01';
        END IF;
    END IF;
    INSERT INTO messages (id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id,
                          tool_name, is_error, notice, steer, created_at)
    SELECT p_id, p_thread, p_run, last_seq, p_role, p_content, p_tool_calls, p_tool_call_id,
           p_tool_name, p_is_error, p_notice, p_steer, p_now
    FROM threads WHERE id = p_thread
    RETURNING * INTO m;
    RETURN NEXT m;
END
$$;

-- A run and a message as rows of one result: the run's columns, then the message's own (`id`,
-- `thread_id` and `created_at` are each row's own). A run's row leaves the message's columns
-- NULL and a message's the run's; the store reads each row by the names of its own columns.
CREATE TYPE ars_run_or_message AS (
    id text, thread_id text, agent_id text, user_id text, status text, input text,
    output text, error text, prompt_tokens bigint, completion_tokens bigint,
    parent_run_id text, parent_tool_call_id text, created_at timestamptz,
    started_at timestamptz, finished_at timestamptz, delivery text, error_code text,
    waiting_json text,
    run_id text, seq bigint, role text, content text, tool_calls jsonb, tool_call_id text,
    tool_name text, is_error boolean, notice jsonb, steer boolean, replaced_by_run_id text
);

-- Run `r` as a row of `ars_run_or_message` (the row its write returned: no read again).
CREATE FUNCTION ars_run_row(r runs) RETURNS ars_run_or_message
LANGUAGE sql IMMUTABLE AS $$
    SELECT r.id, r.thread_id, r.agent_id, r.user_id, r.status, r.input, r.output, r.error,
           r.prompt_tokens, r.completion_tokens, r.parent_run_id, r.parent_tool_call_id,
           r.created_at, r.started_at, r.finished_at, r.delivery, r.error_code, r.waiting_json,
           NULL::text, NULL::bigint, NULL::text, NULL::text, NULL::jsonb, NULL::text,
           NULL::text, NULL::boolean, NULL::jsonb, NULL::boolean, NULL::text
$$;

-- Message `m` as a row of `ars_run_or_message`.
CREATE FUNCTION ars_message_row(m messages) RETURNS ars_run_or_message
LANGUAGE sql IMMUTABLE AS $$
    SELECT m.id, m.thread_id, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text,
           NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, m.created_at,
           NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::text, NULL::text, m.run_id,
           m.seq, m.role, m.content, m.tool_calls, m.tool_call_id, m.tool_name, m.is_error,
           m.notice, m.steer, m.replaced_by_run_id
$$;

-- `create_run_with_input` for a run that neither wakes a parent nor replaces messages: the
-- run's new thread when it has one (`p_thread_id` not NULL: its columns), the thread's
-- `updated_at` and next seq (its row lock first, as every append takes it), the run (refused
-- while another run holds the thread: the one-active-run index), then its input, a user
-- message at that seq. Returns the run's row, then the message's.
CREATE FUNCTION ars_create_run_with_input(
    p_id text, p_thread text, p_agent text, p_user text, p_input text, p_parent_run text,
    p_parent_tool_call text, p_now timestamptz, p_delivery text, p_lease_owner text,
    p_lease_expires_ms bigint, p_wake_of text, p_status text, p_started_at timestamptz,
    p_message text,
    p_thread_id text DEFAULT NULL, p_thread_user text DEFAULT NULL,
    p_thread_agent text DEFAULT NULL, p_thread_title text DEFAULT NULL,
    p_thread_parent text DEFAULT NULL, p_thread_slug text DEFAULT NULL,
    p_thread_scope text DEFAULT NULL, p_thread_workdir text DEFAULT NULL,
    p_thread_created_at timestamptz DEFAULT NULL, p_thread_updated_at timestamptz DEFAULT NULL
) RETURNS SETOF ars_run_or_message
LANGUAGE plpgsql AS $$
DECLARE
    r runs;
    m messages;
BEGIN
    IF p_thread_id IS NOT NULL THEN
        INSERT INTO threads (id, user_id, agent_id, title, parent_thread_id, subagent_slug,
                             runtime_scope_id, workdir_path, created_at, updated_at)
        VALUES (p_thread_id, p_thread_user, p_thread_agent, p_thread_title, p_thread_parent,
                p_thread_slug, p_thread_scope, p_thread_workdir, p_thread_created_at,
                p_thread_updated_at);
    END IF;
    UPDATE threads SET updated_at = p_now, last_seq = last_seq + 1 WHERE id = p_thread;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no thread %', p_thread USING ERRCODE = 'ARS01';
    END IF;
    INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, parent_run_id,
                      parent_tool_call_id, created_at, delivery, lease_owner, lease_expires_ms,
                      wake_of, started_at)
    VALUES (p_id, p_thread, p_agent, p_user, p_status, p_input, p_parent_run,
            p_parent_tool_call, p_now, p_delivery, p_lease_owner, p_lease_expires_ms,
            p_wake_of, p_started_at)
    ON CONFLICT (thread_id) WHERE status IN ('pending', 'running', 'waiting') DO NOTHING
    RETURNING * INTO r;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'thread % has an active run', p_thread USING ERRCODE = 'ARS01';
    END IF;
    INSERT INTO messages (id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id,
                          tool_name, is_error, notice, steer, created_at)
    SELECT p_message, p_thread, p_id, last_seq, 'user', p_input, '[]'::jsonb, NULL, NULL,
           FALSE, NULL, FALSE, p_now
    FROM threads WHERE id = p_thread
    RETURNING * INTO m;
    RETURN NEXT ars_run_row(r);
    RETURN NEXT ars_message_row(m);
END
$$;

-- `finish_run_with_answer`: the thread's `updated_at` and next seq (its row lock first: a
-- message sent into the run is committed before this end, and refuses it, or after, and finds
-- the run ended), the run's end — refused unless the run is active on the answer's thread and
-- nothing was sent into it after seq `p_seen` —, then the answer at that seq. Returns the
-- answer's row, then the run's.
CREATE FUNCTION ars_finish_run_with_answer(
    p_id text, p_thread text, p_run text, p_role text, p_content text, p_tool_calls jsonb,
    p_tool_call_id text, p_tool_name text, p_is_error boolean, p_notice jsonb, p_steer boolean,
    p_now timestamptz, p_prompt bigint, p_completion bigint, p_model text, p_seen bigint,
    p_status text, p_output text, p_error text, p_error_code text
) RETURNS SETOF ars_run_or_message
LANGUAGE plpgsql AS $$
DECLARE
    r runs;
    m messages;
BEGIN
    UPDATE threads SET updated_at = p_now, last_seq = last_seq + 1 WHERE id = p_thread;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no thread %', p_thread USING ERRCODE = 'ARS01';
    END IF;
    UPDATE runs SET status = p_status, output = p_output, error = p_error,
                    prompt_tokens = p_prompt, completion_tokens = p_completion,
                    finished_at = p_now, error_code = p_error_code,
                    model = COALESCE(p_model, model), waiting_json = NULL,
                    waiting_until_ms = NULL, lease_owner = NULL, lease_expires_ms = NULL
    WHERE id = p_run AND thread_id = p_thread AND status IN ('pending', 'running', 'waiting')
      AND NOT EXISTS (SELECT 1 FROM messages
                      WHERE thread_id = p_thread AND seq > p_seen AND steer)
    RETURNING * INTO r;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run % may not end with this answer', p_run USING ERRCODE = 'ARS01';
    END IF;
    INSERT INTO messages (id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id,
                          tool_name, is_error, notice, steer, created_at)
    SELECT p_id, p_thread, p_run, last_seq, p_role, p_content, p_tool_calls, p_tool_call_id,
           p_tool_name, p_is_error, p_notice, p_steer, p_now
    FROM threads WHERE id = p_thread
    RETURNING * INTO m;
    RETURN NEXT ars_message_row(m);
    RETURN NEXT ars_run_row(r);
END
$$;
