-- Model providers an admin manages from the API, beside those of the server configuration;
-- the server-wide model settings; and a stable code on failed runs. Same conventions as 0001:
-- ids are UUID text, timestamps RFC 3339 UTC text, JSON as text.
--
-- Secrets (`api_key`, the values of `headers`) are stored sealed with the server key
-- (`v1.<key id>.<nonce and ciphertext>`), never in clear; the names of headers are plain.

CREATE TABLE model_providers (
    id                  TEXT PRIMARY KEY NOT NULL,
    name                TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    kind                TEXT NOT NULL CHECK (kind IN ('openai-compatible')),
    base_url            TEXT NOT NULL
        CHECK (base_url LIKE 'http://%' OR base_url LIKE 'https://%'),
    api_key             TEXT,
    headers             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(headers)),
    models              TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(models)),
    models_refreshed_at TEXT,
    created_by          TEXT REFERENCES users (id) ON DELETE SET NULL,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);

-- One row. `default_model` (`provider/model`), when set, is the model of agents that name
-- none, over the configuration's `default_model`. `version` goes up in the transaction of
-- every change to this row or to `model_providers`, so an instance learns that its cached
-- providers are stale from one read of one row.
CREATE TABLE model_settings (
    id            INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    version       INTEGER NOT NULL,
    default_model TEXT CHECK (default_model IS NULL OR instr(default_model, '/') > 1),
    updated_at    TEXT
);

INSERT INTO model_settings (id, version) VALUES (1, 0);

-- Why a failed run failed, as a code clients translate (`no_model_configured`, …); `error`
-- keeps the words.
ALTER TABLE runs ADD COLUMN error_code TEXT;
