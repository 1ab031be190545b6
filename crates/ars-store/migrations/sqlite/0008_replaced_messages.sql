-- A message a later run replaced (regenerate, edit-and-resend: `replace_from`) leaves the
-- thread's history but keeps its row: `replaced_by_run_id` names the run that replaced it.
-- NULL for the current history, which is all a thread's history reads and the model sees.
-- No foreign key on purpose: a replaced message stays replaced whatever happens to runs (a
-- run row goes only with its thread, which takes the message too), where ON DELETE SET NULL
-- would bring it back into the history.
ALTER TABLE messages ADD COLUMN replaced_by_run_id TEXT;
