//! Every query the stores run, written once for both databases.
//!
//! Placeholders are `$1, $2, …`: PostgreSQL reads them natively and sqlx's SQLite driver binds
//! `$N` to argument N, so one string serves both. Booleans are written `TRUE`/`FALSE` (SQLite
//! knows them as 1/0). Only the migrations differ per database, plus how each serializes
//! default-agent changes (PostgreSQL takes an advisory lock; SQLite's write lock already does)
//! and, in `kb_sql` (knowledge bases' queries, beside this file), how a claim of a document
//! skips rows another claim holds.
//!
//! **Invariant:** the visibility filter of [`LIST_AGENTS`], [`LIST_SKILLS`],
//! [`LIST_MCP_SERVERS`] and the knowledge base list (one macro, `visible_to!`) is
//! `ars_domain::Caller::can_view` for a non-admin caller; the conformance suite checks the two
//! agree.

/// The user columns, in [`crate::rows::UserRow`] order.
macro_rules! user_columns {
    () => {
        "id, username, role, disabled, created_at, updated_at"
    };
}

/// The agent columns, in [`crate::rows::AgentRow`] order; unqualified so they also serve
/// `RETURNING` clauses.
macro_rules! agent_columns {
    () => {
        "id, slug, name, description, backend_id, is_subagent, config_json, visibility, \
         owner_id, is_default, is_builtin, created_at, updated_at"
    };
}

/// Whether the user `$viewer` (a placeholder; NULL for every row) sees a row of the shared
/// resource `$table`, whose share rows are in `$shares`, keyed by `$key`: a user sees public
/// rows, their own, those they manage, and `users` rows that list them.
macro_rules! visible_to {
    ($table:literal, $shares:literal, $key:literal, $viewer:literal) => {
        concat!(
            "(",
            $viewer,
            " IS NULL OR ",
            $table,
            ".visibility = 'public' OR ",
            $table,
            ".owner_id = ",
            $viewer,
            " OR EXISTS (SELECT 1 FROM ",
            $shares,
            " vs WHERE vs.",
            $key,
            " = ",
            $table,
            ".id AND vs.user_id = ",
            $viewer,
            " AND (vs.role = 'manager' OR ",
            $table,
            ".visibility = 'users')))"
        )
    };
}

/// So `kb_sql` states who sees a knowledge base with the same macro.
pub(crate) use visible_to;

/// The agents a list returns. `$1`: include subagents; `$2`: the viewing user's id, or NULL
/// for every agent.
macro_rules! listed_agents_filter {
    () => {
        concat!(
            "($1 OR NOT is_subagent) AND ",
            visible_to!("agents", "agent_shares", "agent_id", "$2")
        )
    };
}

// Users.

pub(crate) const INSERT_USER: &str = "INSERT INTO users \
     (id, username, password_hash, role, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";

pub(crate) const USER_BY_ID: &str =
    concat!("SELECT ", user_columns!(), " FROM users WHERE id = $1");

pub(crate) const CREDENTIALS_BY_USERNAME: &str = concat!(
    "SELECT ",
    user_columns!(),
    ", password_hash FROM users WHERE username = $1"
);

pub(crate) const LIST_USERS: &str = concat!(
    "SELECT ",
    user_columns!(),
    " FROM users ORDER BY username, id"
);

pub(crate) const COUNT_USERS: &str = "SELECT COUNT(*) FROM users";

/// `$1`: the user; `$2`: role; `$3`: disabled; `$4`: now.
pub(crate) const UPDATE_USER: &str = concat!(
    "UPDATE users SET role = $2, disabled = $3, updated_at = $4 WHERE id = $1 RETURNING ",
    user_columns!()
);

/// Active (enabled) admins other than `$1`.
pub(crate) const OTHER_ACTIVE_ADMINS: &str =
    "SELECT COUNT(*) FROM users WHERE id <> $1 AND role = 'admin' AND NOT disabled";

/// `$1`: the user; `$2`: the new password hash; `$3`: now.
pub(crate) const SET_PASSWORD: &str =
    "UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1";

/// `$1`: the user; `$2`: the one token to keep, or NULL for none.
pub(crate) const REVOKE_OTHER_TOKENS: &str =
    "DELETE FROM api_tokens WHERE user_id = $1 AND ($2 IS NULL OR id <> $2)";

/// `SELECT id FROM users WHERE id IN ($1, …, $n)` for `n` ids (`n` ≥ 1).
pub(crate) fn existing_users(n: usize) -> String {
    let placeholders: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    format!(
        "SELECT id FROM users WHERE id IN ({})",
        placeholders.join(", ")
    )
}

// API tokens.

pub(crate) const INSERT_TOKEN: &str = "INSERT INTO api_tokens \
     (id, user_id, name, token_hash, created_at, expires_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";

/// `$1`: token hash; `$2`: now. A token expiring exactly now is already expired. Disabled
/// users' tokens are found too: the caller refuses them, saying why.
pub(crate) const TOKEN_USER: &str = "SELECT u.id, u.username, u.role, u.disabled, u.created_at, \
     u.updated_at, t.id AS token_id, t.name AS token_name, t.created_at AS token_created_at, \
     t.expires_at AS token_expires_at, t.last_used_at AS token_last_used_at \
     FROM api_tokens t JOIN users u ON u.id = t.user_id \
     WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)";

pub(crate) const LIST_TOKENS: &str = "SELECT id, user_id, name, created_at, expires_at, \
     last_used_at FROM api_tokens WHERE user_id = $1 ORDER BY created_at, id";

/// `$1`: the token; `$2`: when it was used.
pub(crate) const TOUCH_TOKEN: &str = "UPDATE api_tokens SET last_used_at = $2 WHERE id = $1";

pub(crate) const REVOKE_TOKEN: &str = "DELETE FROM api_tokens WHERE id = $1 AND user_id = $2";

// Agents.

pub(crate) const INSERT_AGENT: &str = "INSERT INTO agents \
     (id, slug, name, description, backend_id, is_subagent, config_json, visibility, owner_id, \
      is_default, is_builtin, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, FALSE, $11, $11)";

/// Replaces every writable column; `is_builtin`, `owner_id` and `created_at` stay as stored.
pub(crate) const UPDATE_AGENT: &str = concat!(
    "UPDATE agents SET slug = $2, name = $3, description = $4, backend_id = $5, \
     is_subagent = $6, config_json = $7, visibility = $8, is_default = $9, updated_at = $10 \
     WHERE id = $1 RETURNING ",
    agent_columns!()
);

pub(crate) const AGENT_BY_ID: &str =
    concat!("SELECT ", agent_columns!(), " FROM agents WHERE id = $1");

pub(crate) const AGENT_BY_SLUG: &str =
    concat!("SELECT ", agent_columns!(), " FROM agents WHERE slug = $1");

pub(crate) const DEFAULT_AGENT: &str =
    concat!("SELECT ", agent_columns!(), " FROM agents WHERE is_default");

/// Built-in rows first, then by name and id. Names sort by byte order in both databases (the
/// PostgreSQL column uses the "C" collation), so both stores list in the same order.
pub(crate) const LIST_AGENTS: &str = concat!(
    "SELECT ",
    agent_columns!(),
    " FROM agents WHERE ",
    listed_agents_filter!(),
    " ORDER BY is_builtin DESC, name, id"
);

/// The shares of every agent [`LIST_AGENTS`] returns for the same binds: one query, not one
/// per agent.
pub(crate) const LIST_AGENTS_SHARES: &str = concat!(
    "SELECT agent_id AS resource_id, user_id, role FROM agent_shares WHERE agent_id IN \
     (SELECT id FROM agents WHERE ",
    listed_agents_filter!(),
    ")"
);

pub(crate) const DELETE_AGENT: &str = "DELETE FROM agents WHERE id = $1";

/// `$1`: the agent that keeps (or gets) the default; `$2`: now.
pub(crate) const CLEAR_OTHER_DEFAULTS: &str =
    "UPDATE agents SET is_default = FALSE, updated_at = $2 WHERE is_default AND id <> $1";

pub(crate) const SET_DEFAULT: &str = concat!(
    "UPDATE agents SET is_default = TRUE, updated_at = $2 WHERE id = $1 RETURNING ",
    agent_columns!()
);

// Agent shares.

pub(crate) const SHARES_OF_AGENT: &str =
    "SELECT agent_id AS resource_id, user_id, role FROM agent_shares WHERE agent_id = $1";

pub(crate) const INSERT_SHARE: &str =
    "INSERT INTO agent_shares (agent_id, user_id, role) VALUES ($1, $2, $3)";

pub(crate) const DELETE_SHARES: &str = "DELETE FROM agent_shares WHERE agent_id = $1";

// Skills.

/// The skill columns, in [`crate::rows::SkillRow`] order; unqualified so they also serve
/// `RETURNING` clauses.
macro_rules! skill_columns {
    () => {
        "id, name, description, license, compatibility, metadata, allowed_tools, visibility, \
         owner_id, version, file_count, size_bytes, created_at, updated_at"
    };
}

/// `$13`: now, both timestamps.
pub(crate) const INSERT_SKILL: &str = "INSERT INTO skills \
     (id, name, description, license, compatibility, metadata, allowed_tools, visibility, \
      owner_id, version, file_count, size_bytes, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)";

/// A new version of skill `$1`, only while its name is `$2` (no row otherwise); `$11`: now.
pub(crate) const REPLACE_SKILL_CONTENT: &str = concat!(
    "UPDATE skills SET description = $3, license = $4, compatibility = $5, metadata = $6, \
     allowed_tools = $7, version = $8, file_count = $9, size_bytes = $10, updated_at = $11 \
     WHERE id = $1 AND name = $2 RETURNING ",
    skill_columns!()
);

/// `$1`: the skill; `$2`: visibility; `$3`: now. The share rows are replaced beside it.
pub(crate) const UPDATE_SKILL_VISIBILITY: &str = concat!(
    "UPDATE skills SET visibility = $2, updated_at = $3 WHERE id = $1 RETURNING ",
    skill_columns!()
);

pub(crate) const SKILL_NAME: &str = "SELECT name FROM skills WHERE id = $1";

pub(crate) const SKILL_BY_ID: &str =
    concat!("SELECT ", skill_columns!(), " FROM skills WHERE id = $1");

pub(crate) const SKILL_BY_NAME: &str =
    concat!("SELECT ", skill_columns!(), " FROM skills WHERE name = $1");

/// `$1`: the viewing user's id, or NULL for every skill. By name, in byte order in both
/// databases (the PostgreSQL column uses the "C" collation); names are unique.
pub(crate) const LIST_SKILLS: &str = concat!(
    "SELECT ",
    skill_columns!(),
    " FROM skills WHERE ",
    visible_to!("skills", "skill_shares", "skill_id", "$1"),
    " ORDER BY name"
);

/// The shares of every skill [`LIST_SKILLS`] returns for the same bind.
pub(crate) const LIST_SKILLS_SHARES: &str = concat!(
    "SELECT skill_id AS resource_id, user_id, role FROM skill_shares WHERE skill_id IN \
     (SELECT id FROM skills WHERE ",
    visible_to!("skills", "skill_shares", "skill_id", "$1"),
    ")"
);

/// Files and shares go with the row (ON DELETE CASCADE), in the same statement.
pub(crate) const DELETE_SKILL: &str = "DELETE FROM skills WHERE id = $1";

pub(crate) const SHARES_OF_SKILL: &str =
    "SELECT skill_id AS resource_id, user_id, role FROM skill_shares WHERE skill_id = $1";

pub(crate) const INSERT_SKILL_SHARE: &str =
    "INSERT INTO skill_shares (skill_id, user_id, role) VALUES ($1, $2, $3)";

pub(crate) const DELETE_SKILL_SHARES: &str = "DELETE FROM skill_shares WHERE skill_id = $1";

pub(crate) const INSERT_SKILL_FILE: &str =
    "INSERT INTO skill_files (skill_id, path, content, size_bytes) VALUES ($1, $2, $3, $4)";

pub(crate) const DELETE_SKILL_FILES: &str = "DELETE FROM skill_files WHERE skill_id = $1";

/// Paths sort by byte order in both databases (the PostgreSQL column uses the "C" collation).
pub(crate) const SKILL_FILE_INFOS: &str =
    "SELECT path, size_bytes FROM skill_files WHERE skill_id = $1 ORDER BY path";

pub(crate) const SKILL_FILE: &str =
    "SELECT content FROM skill_files WHERE skill_id = $1 AND path = $2";

pub(crate) const SKILL_CONTENTS: &str =
    "SELECT path, content FROM skill_files WHERE skill_id = $1 ORDER BY path";

// MCP servers.

/// The MCP server columns, in [`crate::mcp_rows::McpServerRow`] order; unqualified so they
/// also serve `RETURNING` clauses.
macro_rules! mcp_server_columns {
    () => {
        "id, slug, name, description, transport, enabled_tools, visibility, owner_id, \
         created_at, updated_at"
    };
}

/// `$10`: now, both timestamps.
pub(crate) const INSERT_MCP_SERVER: &str = concat!(
    "INSERT INTO mcp_servers (id, slug, name, description, transport_type, transport, \
     enabled_tools, visibility, owner_id, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ",
    mcp_server_columns!()
);

/// Everything but the id, the slug, the owner and `created_at`. `$8`: now.
pub(crate) const UPDATE_MCP_SERVER: &str = concat!(
    "UPDATE mcp_servers SET name = $2, description = $3, transport_type = $4, transport = $5, \
     enabled_tools = $6, visibility = $7, updated_at = $8 WHERE id = $1 RETURNING ",
    mcp_server_columns!()
);

pub(crate) const MCP_SERVER_BY_ID: &str = concat!(
    "SELECT ",
    mcp_server_columns!(),
    " FROM mcp_servers WHERE id = $1"
);

pub(crate) const MCP_SERVER_BY_SLUG: &str = concat!(
    "SELECT ",
    mcp_server_columns!(),
    " FROM mcp_servers WHERE slug = $1"
);

/// `$1`: the viewing user's id, or NULL for every server. By slug, in byte order in both
/// databases (the PostgreSQL column uses the "C" collation).
pub(crate) const LIST_MCP_SERVERS: &str = concat!(
    "SELECT ",
    mcp_server_columns!(),
    " FROM mcp_servers WHERE ",
    visible_to!("mcp_servers", "mcp_server_shares", "mcp_server_id", "$1"),
    " ORDER BY slug"
);

/// The shares of every server [`LIST_MCP_SERVERS`] returns for the same bind.
pub(crate) const LIST_MCP_SERVERS_SHARES: &str = concat!(
    "SELECT mcp_server_id AS resource_id, user_id, role FROM mcp_server_shares WHERE \
     mcp_server_id IN (SELECT id FROM mcp_servers WHERE ",
    visible_to!("mcp_servers", "mcp_server_shares", "mcp_server_id", "$1"),
    ")"
);

pub(crate) const SHARES_OF_MCP_SERVER: &str = "SELECT mcp_server_id AS resource_id, user_id, \
     role FROM mcp_server_shares WHERE mcp_server_id = $1";

pub(crate) const INSERT_MCP_SERVER_SHARE: &str =
    "INSERT INTO mcp_server_shares (mcp_server_id, user_id, role) VALUES ($1, $2, $3)";

pub(crate) const DELETE_MCP_SERVER_SHARES: &str =
    "DELETE FROM mcp_server_shares WHERE mcp_server_id = $1";

/// Shares go with the row (ON DELETE CASCADE), in the same statement.
pub(crate) const DELETE_MCP_SERVER: &str = "DELETE FROM mcp_servers WHERE id = $1";

// Sessions of ARS's own MCP endpoint and their calls in flight.

pub(crate) const UPSERT_MCP_SESSION: &str = "INSERT INTO mcp_sessions (id, state, created_at) \
     VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET state = excluded.state";

/// Calls go with their sessions (ON DELETE CASCADE).
pub(crate) const EXPIRE_MCP_SESSIONS: &str = "DELETE FROM mcp_sessions WHERE created_at < $1";

pub(crate) const MCP_SESSION: &str = "SELECT state FROM mcp_sessions WHERE id = $1";

pub(crate) const DELETE_MCP_SESSION: &str = "DELETE FROM mcp_sessions WHERE id = $1";

/// Only a session nobody owns yet takes an owner.
pub(crate) const BIND_MCP_SESSION: &str =
    "UPDATE mcp_sessions SET user_id = $2 WHERE id = $1 AND user_id IS NULL";

pub(crate) const MCP_SESSION_OWNER: &str =
    "SELECT user_id FROM mcp_sessions WHERE id = $1 AND user_id IS NOT NULL";

pub(crate) const UPSERT_MCP_CALL: &str = "INSERT INTO mcp_calls (session_id, request_id, run_id) \
     VALUES ($1, $2, $3) ON CONFLICT (session_id, request_id) DO UPDATE SET run_id = excluded.run_id";

pub(crate) const MCP_CALL_RUN: &str =
    "SELECT run_id FROM mcp_calls WHERE session_id = $1 AND request_id = $2";

pub(crate) const DELETE_MCP_CALL: &str =
    "DELETE FROM mcp_calls WHERE session_id = $1 AND request_id = $2";

// Model providers and the model settings.

/// The provider columns, in [`crate::rows::ModelProviderRow`] order; unqualified so they also
/// serve `RETURNING` clauses.
macro_rules! provider_columns {
    () => {
        "id, name, kind, base_url, api_key, headers, models, models_refreshed_at, created_by, \
         created_at, updated_at"
    };
}

/// `$9`: now, both timestamps.
pub(crate) const INSERT_MODEL_PROVIDER: &str = concat!(
    "INSERT INTO model_providers (id, name, kind, base_url, api_key, headers, models, \
     created_by, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ",
    provider_columns!()
);

pub(crate) const MODEL_PROVIDER_BY_ID: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM model_providers WHERE id = $1"
);

/// By name, in byte order in both databases (the PostgreSQL column uses the "C" collation).
pub(crate) const LIST_MODEL_PROVIDERS: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM model_providers ORDER BY name"
);

/// Replaces every writable column of provider `$1`; `$8`: now. `models_refreshed_at` is kept
/// while the models are unchanged, since they are then still the fetched ones.
pub(crate) const UPDATE_MODEL_PROVIDER: &str = concat!(
    "UPDATE model_providers SET name = $2, kind = $3, base_url = $4, api_key = $5, \
     headers = $6, \
     models_refreshed_at = CASE WHEN models = $7 THEN models_refreshed_at ELSE NULL END, \
     models = $7, updated_at = $8 WHERE id = $1 RETURNING ",
    provider_columns!()
);

/// `$1`: the provider; `$2`: its models, as fetched; `$3`: now.
pub(crate) const SET_MODEL_PROVIDER_MODELS: &str = concat!(
    "UPDATE model_providers SET models = $2, models_refreshed_at = $3, updated_at = $3 \
     WHERE id = $1 RETURNING ",
    provider_columns!()
);

pub(crate) const MODEL_PROVIDER_NAME: &str = "SELECT name FROM model_providers WHERE id = $1";

pub(crate) const DELETE_MODEL_PROVIDER: &str = "DELETE FROM model_providers WHERE id = $1";

pub(crate) const MODEL_SETTINGS: &str =
    "SELECT version, default_model, updated_at FROM model_settings WHERE id = 1";

pub(crate) const MODEL_SETTINGS_VERSION: &str = "SELECT version FROM model_settings WHERE id = 1";

/// Raises the version: every change to the providers or settings runs it in its transaction.
/// On PostgreSQL it also takes the row's lock, so such changes queue. `$1`: now.
pub(crate) const BUMP_MODEL_SETTINGS: &str =
    "UPDATE model_settings SET version = version + 1, updated_at = $1 WHERE id = 1";

/// `$1`: the default model (`provider/model`) or NULL; `$2`: now.
pub(crate) const SET_DEFAULT_MODEL: &str = "UPDATE model_settings SET default_model = $1, \
     version = version + 1, updated_at = $2 WHERE id = 1 \
     RETURNING version, default_model, updated_at";

/// A default model of provider `$1` becomes one of provider `$2` (a rename).
pub(crate) const RENAME_DEFAULT_MODEL_PROVIDER: &str = "UPDATE model_settings \
     SET default_model = $2 || substr(default_model, length($1) + 1) \
     WHERE id = 1 AND substr(default_model, 1, length($1) + 1) = $1 || '/'";

/// Clears a default model of provider `$1` (deleted).
pub(crate) const CLEAR_DEFAULT_MODEL_OF: &str = "UPDATE model_settings SET default_model = NULL \
     WHERE id = 1 AND substr(default_model, 1, length($1) + 1) = $1 || '/'";

// Threads.

/// The thread columns, in [`crate::rows::ThreadRow`] order.
macro_rules! thread_columns {
    () => {
        "id, user_id, agent_id, title, parent_thread_id, subagent_slug, runtime_scope_id, \
         workdir_path, created_at, updated_at"
    };
}

pub(crate) const INSERT_THREAD: &str = concat!(
    "INSERT INTO threads (",
    thread_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ",
    thread_columns!()
);

pub(crate) const THREAD_BY_ID: &str =
    concat!("SELECT ", thread_columns!(), " FROM threads WHERE id = $1");

/// A user's top-level threads, most recently updated first.
pub(crate) const LIST_THREADS: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE user_id = $1 AND parent_thread_id IS NULL \
     ORDER BY updated_at DESC, id DESC"
);

/// A thread's direct children, oldest first.
pub(crate) const CHILD_THREADS: &str = concat!(
    "SELECT ",
    thread_columns!(),
    " FROM threads WHERE parent_thread_id = $1 ORDER BY created_at, id"
);

/// `$1`: the thread; `$2`: the new title; `$3`: now.
pub(crate) const RENAME_THREAD: &str = concat!(
    "UPDATE threads SET title = $2, updated_at = $3 WHERE id = $1 RETURNING ",
    thread_columns!()
);

/// Child threads, messages and runs go with the row (ON DELETE CASCADE, recursively), in the
/// same statement.
pub(crate) const DELETE_THREAD: &str = "DELETE FROM threads WHERE id = $1";

/// `$1`: the thread; `$2`: now. Inside `append_message`'s transaction this also locks the thread
/// row (PostgreSQL), so appends to one thread take their turns.
pub(crate) const TOUCH_THREAD: &str = "UPDATE threads SET updated_at = $2 WHERE id = $1";

// Messages.

/// The message columns an append writes, in [`crate::rows::MessageRow`] order.
macro_rules! message_insert_columns {
    () => {
        "id, thread_id, run_id, seq, role, content, tool_calls, tool_call_id, tool_name, \
         is_error, notice, created_at"
    };
}

/// The message columns, in [`crate::rows::MessageRow`] order.
macro_rules! message_columns {
    () => {
        concat!(message_insert_columns!(), ", replaced_by_run_id")
    };
}

/// Appends a message at the thread's next seq (previous maximum + 1, from 1, replaced messages
/// counted too). `$1`: id; `$2`: thread; `$3`: run; `$4`: role; `$5`: content; `$6`: tool
/// calls; `$7`: tool call id; `$8`: tool name; `$9`: is error; `$10`: notice; `$11`: now.
/// Callers hold the thread's lock (see [`TOUCH_THREAD`]).
pub(crate) const APPEND_MESSAGE: &str = concat!(
    "INSERT INTO messages (",
    message_insert_columns!(),
    ") SELECT $1, $2, $3, COALESCE(MAX(seq), 0) + 1, $4, $5, $6, $7, $8, $9, $10, $11 \
     FROM messages WHERE thread_id = $2 RETURNING ",
    message_columns!()
);

/// The thread's history: its messages no run has replaced.
pub(crate) const THREAD_MESSAGES: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 AND replaced_by_run_id IS NULL ORDER BY seq"
);

/// Every message of the thread, replaced ones included.
pub(crate) const ALL_THREAD_MESSAGES: &str = concat!(
    "SELECT ",
    message_columns!(),
    " FROM messages WHERE thread_id = $1 ORDER BY seq"
);

/// What a `replace_from` must be checked against: the message's thread, seq, role and whether
/// it was replaced already.
pub(crate) const MESSAGE_TO_REPLACE: &str =
    "SELECT thread_id, seq, role, replaced_by_run_id FROM messages WHERE id = $1";

/// Takes every message of thread `$1` from seq `$2` on out of its history, as replaced by run
/// `$3`; messages replaced earlier keep the run that replaced them.
pub(crate) const REPLACE_MESSAGES: &str = "UPDATE messages SET replaced_by_run_id = $3 \
     WHERE thread_id = $1 AND seq >= $2 AND replaced_by_run_id IS NULL";

// Runs.

/// The run columns, in [`crate::rows::RunRow`] order.
macro_rules! run_columns {
    () => {
        "id, thread_id, agent_id, user_id, status, input, output, error, prompt_tokens, \
         completion_tokens, parent_run_id, parent_tool_call_id, created_at, started_at, \
         finished_at, delivery, error_code"
    };
}

/// The statuses of an active run, as SQL; the same predicate as the one-active-run index.
macro_rules! active {
    () => {
        "status IN ('pending', 'running')"
    };
}

/// Creates a pending run unless the thread already has an active one, in which case nothing is
/// written and no row returned. `$1`: id; `$2`: thread; `$3`: agent; `$4`: user; `$5`: input;
/// `$6`: parent run; `$7`: parent tool call; `$8`: now; `$9`: delivery; `$10`, `$11`: lease
/// owner and expiry. `ON CONFLICT` names the partial unique
/// index, so a concurrent creator (PostgreSQL waits for it to commit) is a quiet miss rather
/// than an error.
pub(crate) const INSERT_RUN: &str = concat!(
    "INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, parent_run_id, \
     parent_tool_call_id, created_at, delivery, lease_owner, lease_expires_ms) \
     VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11) \
     ON CONFLICT (thread_id) WHERE ",
    active!(),
    " DO NOTHING RETURNING ",
    run_columns!()
);

pub(crate) const RUN_BY_ID: &str = concat!("SELECT ", run_columns!(), " FROM runs WHERE id = $1");

pub(crate) const ACTIVE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id = $1 AND ",
    active!()
);

/// Just the id of the thread's active run, to name it in `StoreError::Busy`.
/// An active run on any thread a deletion of agent `$1` would take with it: the agent's own
/// threads and the child threads below them (one level: subagents start no subagents).
pub(crate) const AGENT_ACTIVE_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE ",
    active!(),
    " AND thread_id IN (SELECT id FROM threads WHERE agent_id = $1 \
       OR parent_thread_id IN (SELECT id FROM threads WHERE agent_id = $1)) LIMIT 1"
);

pub(crate) const ACTIVE_RUN_ID: &str =
    concat!("SELECT id FROM runs WHERE thread_id = $1 AND ", active!());

pub(crate) const THREAD_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id = $1 ORDER BY created_at, id"
);

pub(crate) const CHILD_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id"
);

/// Runs on the direct child threads of `$1`, oldest first.
pub(crate) const SUBAGENT_RUNS: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE thread_id IN (SELECT id FROM threads WHERE parent_thread_id = $1) \
     ORDER BY created_at, id"
);

/// `$1`: the run; `$2`: now. Only a pending run starts; otherwise no row is returned.
pub(crate) const MARK_RUN_RUNNING: &str = concat!(
    "UPDATE runs SET status = 'running', started_at = $2 WHERE id = $1 AND status = 'pending' \
     RETURNING ",
    run_columns!()
);

/// `$1`: the run; `$2`, `$3`: prompt and completion tokens. Only an active run's usage moves.
pub(crate) const SET_RUN_USAGE: &str = concat!(
    "UPDATE runs SET prompt_tokens = $2, completion_tokens = $3 WHERE id = $1 AND ",
    active!()
);

/// Whether run `$1` is active: the fence every message of a run passes inside
/// `append_message`'s transaction. A no-op `UPDATE` rather than a `SELECT`, because it holds
/// the run's row lock until the message commits: on PostgreSQL a run's end (its own, a cancel,
/// a reap) written meanwhile waits for the message, and one written first is re-read here and
/// refuses it, so no message of a run commits after the run ended. (`SELECT … FOR SHARE` would
/// do on PostgreSQL, but SQLite has no such clause; its one writer serialises anyway.)
pub(crate) const RUN_IS_ACTIVE: &str = concat!(
    "UPDATE runs SET status = status WHERE id = $1 AND ",
    active!(),
    " RETURNING id"
);

/// Extends every active run's lease held by `$1` to `$2` (Unix ms); answers the runs renewed.
pub(crate) const RENEW_LEASES: &str = concat!(
    "UPDATE runs SET lease_expires_ms = $2 WHERE lease_owner = $1 AND ",
    active!(),
    " RETURNING id"
);

/// Ends as `interrupted` every active run whose lease ran out before `$3` (Unix ms), or that
/// has none. `$1`: now; `$2`: the error.
pub(crate) const REAP_EXPIRED_RUNS: &str = concat!(
    "UPDATE runs SET status = 'interrupted', error = $2, finished_at = $1 WHERE ",
    active!(),
    " AND (lease_expires_ms IS NULL OR lease_expires_ms < $3) RETURNING id"
);

/// `$1`: the run; `$2`: the terminal status; `$3`: output; `$4`: error; `$5`, `$6`: prompt and
/// completion tokens; `$7`: now; `$8`: the error's code. Only an active run finishes: the first
/// writer wins, and on PostgreSQL a second writer waits for the first's row lock, then finds
/// the run terminal.
pub(crate) const FINISH_RUN: &str = concat!(
    "UPDATE runs SET status = $2, output = $3, error = $4, prompt_tokens = $5, \
     completion_tokens = $6, finished_at = $7, error_code = $8 WHERE id = $1 AND ",
    active!(),
    " RETURNING ",
    run_columns!()
);

/// `$1`: now; `$2`: the error to record.
pub(crate) const INTERRUPT_ACTIVE_RUNS: &str = concat!(
    "UPDATE runs SET status = 'interrupted', error = $2, finished_at = $1 WHERE ",
    active!(),
    " RETURNING id"
);
