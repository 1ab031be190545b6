-- Accounts can be disabled: a disabled user cannot log in and every request with one of their
-- tokens is refused; the tokens are kept, so enabling the account again restores them.
-- Tokens record when they were last used (updated at most once a minute per token).
-- Independent of every other migration after 0005: it only adds columns.
ALTER TABLE users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE api_tokens ADD COLUMN last_used_at TIMESTAMPTZ;
