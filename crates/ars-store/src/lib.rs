//! The `Store` seam: everything ARS persists, behind one object-safe trait.
//!
//! Two real implementations share one body of SQL: [`SqliteStore`] (the embedded default, WAL
//! mode) and [`PgStore`] (scaled deployments). Each runs its own migrations at connect time;
//! [`connect`] picks one by URL scheme. With the `test-utils` feature, `test_support` gives
//! each test a fresh database of either kind.
//!
//! Code map: `sql` holds every query (written once, `$N` placeholders; `kb_sql` those of
//! knowledge bases), `store_impl` the one `Store` body expanded per database, `rows` the
//! decoding into domain types (`mcp_rows`, `kb_rows` for MCP servers and knowledge bases),
//! `error` the mapping of constraint violations; `sqlite` and `postgres` only open pools (SQLite: readers
//! plus one writer connection) and migrate; `metrics` names what `CancelSafe` measures of
//! every write (latency by operation, the writer queue's depth).
//!
//! **Boundary:** this is the only crate that knows sqlx or SQL. Callers get domain types.
//! **Invariant:** a write either happens whole or not at all (one transaction per call).
//! **Invariant:** a skill's row, shares and files change together: a new version replaces every
//! file in the same transaction, so each read (`skill_contents` is one statement) sees one
//! version whole.
//! **Invariant:** a thread has at most one active (pending or running) run, and its messages
//! are numbered 1, 2, 3, … without gaps: the schema enforces both, so they hold across the
//! several instances sharing one PostgreSQL database.
//! **Invariant:** a replaced message keeps its row and its seq; it only leaves the history
//! (`messages`), in the same transaction that creates the run replacing it and commits that
//! run's input, so the history never shows a half-made replacement.
//! **Invariant:** every change to a document's chunks (its finish, its deletion) appends to the
//! change log (`kb_changes`) in the same transaction, and `seq` order is commit order, so an
//! instance applying the log in order never misses one. A deleted knowledge base takes its
//! chunks without an entry: it is noticed by its absence.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{
    AccountChange, Agent, AgentDraft, AgentId, ApiToken, KbChunk, KbDocument, KbDocumentId,
    KnowledgeBase, KnowledgeBaseFields, KnowledgeBaseId, McpServer, McpServerFields, McpServerId,
    Message, MessageId, ModelProvider, ModelProviderFields, ModelProviderId, NewKbChunk,
    NewKbDocument, NewMessage, NewRun, NewSkill, Role, Run, RunId, RunOutcome, ShareConfig, Skill,
    SkillContent, SkillFile, SkillFileInfo, SkillId, Thread, ThreadId, TokenId, Usage, User,
    UserId,
};

mod cancel_safe;
mod checkpoint;
mod control;
mod error;
mod kb_rows;
mod kb_sql;
mod mcp_rows;
pub mod metrics;
mod postgres;
mod provider_rows;
mod rows;
mod sql;
mod sqlite;
mod store_impl;
#[cfg(feature = "test-utils")]
pub mod test_support;

pub use cancel_safe::CancelSafe;
pub use control::PgControl;
pub use error::{StoreError, Unreplaceable};
pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// A store call's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The error `interrupt_active_runs` records on the runs it ends.
pub const INTERRUPTED_ERROR: &str = "the server stopped while this run was active";

/// How many times `create_run` tries again when the run that blocked it ended before it could
/// be named. Each retry means another run was created and finished in between, so a few
/// suffice.
const CREATE_RUN_ATTEMPTS: usize = 8;

/// How many ids one `existing_users` statement checks: far below SQLite's and PostgreSQL's
/// bind-parameter limits.
const EXISTING_USERS_CHUNK: usize = 500;

/// Connects to the store a database URL names and migrates it: `sqlite:…` (the parent
/// directory of the file is created if needed) or `postgres://…` / `postgresql://…`.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>> {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme {
        "sqlite" => Ok(CancelSafe::wrap(Arc::new(SqliteStore::connect(url).await?))),
        "postgres" | "postgresql" => Ok(CancelSafe::wrap(Arc::new(PgStore::connect(url).await?))),
        // Only the scheme is echoed: the rest of a URL may hold a password.
        _ => Err(StoreError::Database(sqlx::Error::Configuration(
            format!(
                "unsupported database URL scheme `{scheme}`: expected sqlite:, postgres: or \
                 postgresql:"
            )
            .into(),
        ))),
    }
}

/// A user to create. The password arrives already hashed.
#[derive(Clone, Debug)]
pub struct NewUser {
    /// Already validated (`ars_domain::user::validate_username`).
    pub username: String,
    /// The PHC string of the password hash; the store never sees the password.
    pub password_hash: String,
    pub role: Role,
}

/// A token to create. Only the hash of the secret is stored.
#[derive(Clone, Debug)]
pub struct NewToken {
    /// The owner: the token authenticates as this user.
    pub user_id: UserId,
    /// A label the user chose, to tell tokens apart.
    pub name: String,
    /// The hash of the secret, which is what lookups match.
    pub token_hash: String,
    /// `None` for a token that never expires.
    pub expires_at: Option<DateTime<Utc>>,
}

/// Which agents a list returns.
#[derive(Clone, Copy, Debug)]
pub struct AgentFilter {
    /// Only agents this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every agent (admins).
    pub visible_to: Option<UserId>,
    /// Whether subagents are included; normal agents always are.
    pub include_subagents: bool,
}

/// Which skills a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkillFilter {
    /// Only skills this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every skill (admins).
    pub visible_to: Option<UserId>,
}

/// Which MCP servers a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct McpServerFilter {
    /// Only servers this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every server (admins).
    pub visible_to: Option<UserId>,
}

/// Which knowledge bases a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct KnowledgeBaseFilter {
    /// Only knowledge bases this user can see (`ars_domain::Caller::can_view` for a
    /// non-admin); `None` lists every knowledge base (admins).
    pub visible_to: Option<UserId>,
}

/// An entry of the knowledge base change log: document `document_id` of `kb_id` was finished
/// or deleted, so its chunks in a search index are stale (read them again; none left means
/// drop them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KbChange {
    /// Rises with every entry, in commit order: whoever has applied every entry up to `seq`
    /// has seen every change committed before it.
    pub seq: i64,
    pub kb_id: KnowledgeBaseId,
    pub document_id: KbDocumentId,
}

/// The server-wide model settings, with the version that every change to them or to a stored
/// model provider raises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSettings {
    /// Goes up in the transaction of every change to the settings or to `model_providers`;
    /// an unchanged version means cached providers are current.
    pub version: i64,
    /// `provider/model`: the model of agents that name none, over the configuration's.
    pub default_model: Option<String>,
    /// When anything of the settings or providers last changed; `None` before the first change.
    pub updated_at: Option<DateTime<Utc>>,
}

/// What [`Store::delete_model_provider`] did besides deleting the row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeletedProvider {
    /// The default model named the deleted provider and is now unset.
    pub default_model_cleared: bool,
}

/// Everything ARS persists. Object-safe: the server holds an `Arc<dyn Store>`.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// `"sqlite"` or `"postgres"`, for logs and health output.
    fn kind(&self) -> &'static str;

    // Users.

    /// Creates a user; a taken username is `StoreError::Conflict { field: "username" }`.
    async fn create_user(&self, new: NewUser) -> Result<User>;
    /// The user with this id, if any (request authentication, share checks).
    async fn user(&self, id: UserId) -> Result<Option<User>>;
    /// The user and their password hash, for login.
    async fn user_credentials(&self, username: &str) -> Result<Option<(User, String)>>;
    /// Every user, by username.
    async fn list_users(&self) -> Result<Vec<User>>;
    /// How many users exist (zero means first start: create the admin).
    async fn count_users(&self) -> Result<u64>;
    /// Which of `ids` name existing users, in the order given (to validate share lists).
    async fn existing_users(&self, ids: &[UserId]) -> Result<Vec<UserId>>;
    /// Applies `change` (role, disabled) and sets `updated_at`, unless it would leave no
    /// active (enabled) admin: then nothing changes and the answer is
    /// [`UserUpdate::LastAdmin`]. Account changes are serialized (PostgreSQL: an advisory
    /// lock), so two admins demoting each other at once cannot both succeed. `NotFound` when
    /// there is no such user.
    async fn update_user(&self, id: UserId, change: AccountChange) -> Result<UserUpdate>;
    /// Sets the password hash and `updated_at` and revokes every token of the user except
    /// `keep` (the session that made the change), in one transaction; `false` when there is
    /// no such user.
    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        keep: Option<TokenId>,
    ) -> Result<bool>;

    // API tokens.

    /// Stores a token; a hash already stored is `Conflict { field: "token_hash" }`, an unknown
    /// user `Invalid`. `expires_at` is kept to the microsecond.
    async fn create_token(&self, new: NewToken) -> Result<ApiToken>;
    /// The user owning an unexpired token with this hash, and the token. A token is unexpired
    /// when `expires_at` is NULL or later than `now`. A disabled user's tokens are found too
    /// (`User::disabled` says so; the caller refuses them).
    async fn token_user(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(User, ApiToken)>>;
    /// Records that the token was used at `at`; a token that is gone is no error.
    async fn touch_token(&self, id: TokenId, at: DateTime<Utc>) -> Result<()>;
    /// `user`'s tokens, oldest first, expired ones included (so they can be cleaned up).
    async fn list_tokens(&self, user: UserId) -> Result<Vec<ApiToken>>;
    /// Revokes (deletes) one of `user`'s tokens; `false` when there is no such token.
    async fn revoke_token(&self, user: UserId, id: TokenId) -> Result<bool>;

    // Agents.

    /// Creates an agent owned by `owner` (`None`: system-owned). A taken slug is
    /// `StoreError::Conflict { field: "slug" }`; `draft.is_default` clears the previous default
    /// in the same transaction.
    async fn create_agent(&self, draft: &AgentDraft, owner: Option<UserId>) -> Result<Agent>;
    /// The agent with this id, shares included; no visibility check (callers apply
    /// `ars_domain::Caller`).
    async fn agent(&self, id: AgentId) -> Result<Option<Agent>>;
    /// The agent with this slug (`subagent_slug` lookups), shares included.
    async fn agent_by_slug(&self, slug: &str) -> Result<Option<Agent>>;
    /// Agents matching `filter`: built-in rows first, then by name (byte order), then id.
    async fn list_agents(&self, filter: AgentFilter) -> Result<Vec<Agent>>;
    /// Replaces every writable field (shares included) and sets `updated_at`; `owner_id`,
    /// `is_builtin` and `created_at` never change. `NotFound` when the row is gone; a taken slug
    /// is `Conflict { field: "slug" }`; `draft.is_default` clears the previous default. One
    /// transaction: on any error nothing changes.
    async fn update_agent(&self, id: AgentId, draft: &AgentDraft) -> Result<Agent>;
    /// Deletes an agent with its shares and every thread that talks to it (so their messages,
    /// runs and child threads too, whoever owns them); `false` when there was no such row.
    /// Callers check `ars_domain::Caller::can_delete` first (built-in rows are never deleted).
    async fn delete_agent(&self, id: AgentId) -> Result<bool>;
    /// Makes `id` the one default agent, clearing any other, in one transaction. `NotFound`
    /// for a missing row; `Invalid` for a subagent (the schema refuses it).
    async fn set_default_agent(&self, id: AgentId) -> Result<Agent>;
    /// The default agent, if one is set.
    async fn default_agent(&self) -> Result<Option<Agent>>;

    // Skills: the row, its shares and its files change together.

    /// Creates a skill with all its files in one transaction. A taken name is
    /// `StoreError::Conflict { field: "name" }`; a path given twice, an unknown owner or share
    /// user, or a name outside 1-64 characters is `Invalid`. Nothing is written on any error.
    async fn create_skill(&self, new: &NewSkill) -> Result<Skill>;
    /// The skill with this id, shares included; no visibility check (callers apply
    /// `ars_domain::Caller`).
    async fn skill(&self, id: SkillId) -> Result<Option<Skill>>;
    /// The skill with this name, shares included.
    async fn skill_by_name(&self, name: &str) -> Result<Option<Skill>>;
    /// Skills matching `filter`, by name (byte order).
    async fn list_skills(&self, filter: SkillFilter) -> Result<Vec<Skill>>;
    /// Replaces a skill's content with a new version: manifest fields, version and every file
    /// (the old files are gone), `updated_at` set, in one transaction. The name never changes:
    /// a different `content.name` is `Invalid`. `NotFound` when the skill is gone; a path given
    /// twice is `Invalid`. On any error nothing changes.
    async fn replace_skill_content(&self, id: SkillId, content: &SkillContent) -> Result<Skill>;
    /// Replaces the skill's shares and sets `updated_at`; `NotFound` when the skill is gone, an
    /// unknown user `Invalid`.
    async fn update_skill_share(&self, id: SkillId, share: &ShareConfig) -> Result<Skill>;
    /// Deletes a skill with its shares and files; `false` when there was no such skill.
    /// Callers check `ars_domain::Caller::can_delete` first.
    async fn delete_skill(&self, id: SkillId) -> Result<bool>;
    /// The skill's files without their bytes, by path (byte order); empty for an unknown skill.
    async fn skill_files(&self, id: SkillId) -> Result<Vec<SkillFileInfo>>;
    /// One file's bytes; `None` when the skill or the path is not there.
    async fn skill_file(&self, id: SkillId, path: &str) -> Result<Option<Vec<u8>>>;
    /// Every file of the skill with its bytes, by path (byte order); empty for an unknown skill.
    async fn skill_contents(&self, id: SkillId) -> Result<Vec<SkillFile>>;

    // MCP servers: the row and its shares change together; secret values inside the
    // transport arrive and leave sealed.

    /// Creates an MCP server with this id (its secrets are sealed for it). A taken slug is
    /// `Conflict { field: "slug" }`; an unknown owner or share user is `Invalid`. Nothing is
    /// written on any error.
    async fn create_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
        owner: Option<UserId>,
    ) -> Result<McpServer>;
    /// The server with this id, shares included; no visibility check.
    async fn mcp_server(&self, id: McpServerId) -> Result<Option<McpServer>>;
    /// The server with this slug, shares included; no visibility check.
    async fn mcp_server_by_slug(&self, slug: &str) -> Result<Option<McpServer>>;
    /// Servers matching `filter`, by slug (byte order).
    async fn list_mcp_servers(&self, filter: McpServerFilter) -> Result<Vec<McpServer>>;
    /// Replaces every field but the slug (which never changes: `fields.slug` is ignored) and
    /// the shares, sets `updated_at`, in one transaction; `NotFound` when the server is gone,
    /// an unknown share user `Invalid`.
    async fn update_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
    ) -> Result<McpServer>;
    /// Deletes a server with its shares; `false` when there was none.
    async fn delete_mcp_server(&self, id: McpServerId) -> Result<bool>;

    // Knowledge bases: the row and its shares change together; documents, their files and
    // chunks go with it. Writes that change what is searchable (a document finished or
    // deleted) append to the change log in their transaction.

    /// Creates a knowledge base with this id. A taken slug is `Conflict { field: "slug" }`; an
    /// unknown owner or share user is `Invalid`. Nothing is written on any error.
    async fn create_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
        owner: Option<UserId>,
    ) -> Result<KnowledgeBase>;
    /// The knowledge base with this id, shares and counts included; no visibility check.
    async fn knowledge_base(&self, id: KnowledgeBaseId) -> Result<Option<KnowledgeBase>>;
    /// The knowledge base with this slug, shares and counts included; no visibility check.
    async fn knowledge_base_by_slug(&self, slug: &str) -> Result<Option<KnowledgeBase>>;
    /// Knowledge bases matching `filter`, by slug (byte order).
    async fn list_knowledge_bases(&self, filter: KnowledgeBaseFilter)
    -> Result<Vec<KnowledgeBase>>;
    /// Replaces every field but the slug (which never changes: `fields.slug` is ignored) and
    /// the shares, sets `updated_at`, in one transaction; `NotFound` when the knowledge base is
    /// gone, an unknown share user `Invalid`. Documents are not touched: changed chunk
    /// settings apply to documents ingested from then on.
    async fn update_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
    ) -> Result<KnowledgeBase>;
    /// Deletes a knowledge base with its shares, documents, files and chunks; `false` when
    /// there was none. Nothing goes to the change log: an instance drops the index of a
    /// knowledge base it finds gone.
    async fn delete_knowledge_base(&self, id: KnowledgeBaseId) -> Result<bool>;

    // Documents of knowledge bases, and their ingestion. Several instances may ingest at once:
    // a document is taken with a lease ([`Store::claim_kb_document`]), and every later write
    // of the worker names the version it claimed, so a re-upload (a new version) or a
    // deletion meanwhile turns those writes into no-ops.

    /// Uploads a document into knowledge base `kb_id`, in one transaction: inserted as `new.id`
    /// at version 1, or, when the knowledge base already holds a document of that name,
    /// replacing it in place (it keeps its id; new bytes, size, hash, format and uploader;
    /// version + 1). Either way it is `pending` with progress 0, no error, no attempts and no
    /// lease. A replaced document's chunks stay (searches find the old version) until the new
    /// version is finished. `NotFound` when the knowledge base is gone.
    async fn put_kb_document(
        &self,
        kb_id: KnowledgeBaseId,
        new: NewKbDocument,
    ) -> Result<KbDocument>;
    /// The documents of a knowledge base, by name (byte order); empty for an unknown one.
    async fn kb_documents(&self, kb_id: KnowledgeBaseId) -> Result<Vec<KbDocument>>;
    /// The document with this id, if any.
    async fn kb_document(&self, id: KbDocumentId) -> Result<Option<KbDocument>>;
    /// The bytes uploaded for the document's current version; `None` when it is gone.
    async fn kb_document_file(&self, id: KbDocumentId) -> Result<Option<Vec<u8>>>;
    /// Deletes a document with its file and chunks and appends it to the change log, in one
    /// transaction; `false` when there was none.
    async fn delete_kb_document(&self, id: KbDocumentId) -> Result<bool>;
    /// Whether [`Store::claim_kb_document`] at `now` would find a document: a read, so an idle
    /// worker polls without taking a place in the write queue.
    async fn kb_claimable(&self, now: DateTime<Utc>) -> Result<bool>;
    /// Takes one document for ingestion, atomically: the one least recently updated among
    /// those `pending` and those `processing` whose lease ran out before `now` (their worker
    /// died). It becomes `processing` with its lease until `now + lease` and one more attempt,
    /// and is answered as claimed (with the version to name in later writes); `None` when
    /// nothing is claimable. Of concurrent callers, on any instance, exactly one gets a given
    /// document. Callers give up on a document whose attempts pass their limit
    /// ([`Store::fail_kb_document`]).
    async fn claim_kb_document(
        &self,
        now: DateTime<Utc>,
        lease: std::time::Duration,
    ) -> Result<Option<KbDocument>>;
    /// Records the progress (clamped to 0..=1) of ingesting `version` and extends its lease to
    /// `lease_until`; `false` when the document is gone, has another version or is no longer
    /// `processing`: the worker stops.
    async fn renew_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        progress: f32,
        lease_until: DateTime<Utc>,
    ) -> Result<bool>;
    /// Stores the chunks of `version`, in one transaction, only while the document still has
    /// that version and is `processing`: its previous chunks are replaced by `chunks`, it
    /// becomes `ready` (progress 1, `chunk_count`, no lease, no error) and the change log gets
    /// an entry. `false` (nothing written) when it was re-uploaded, deleted or is no longer
    /// processing. Two chunks with one ordinal, or a chunk ending before it starts, are
    /// `Invalid`.
    async fn finish_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        chunks: &[NewKbChunk],
    ) -> Result<bool>;
    /// Marks `version` failed with `error` (status `error`, no lease) while it is
    /// `processing`; its previous chunks, if any, stay searchable. `false` as for
    /// [`Store::renew_kb_document`].
    async fn fail_kb_document(&self, id: KbDocumentId, version: u32, error: &str) -> Result<bool>;
    /// Gives a claim of `version` back while it is `processing` (a worker stopping with its
    /// server): `pending` again, no lease, and the claim's attempt not counted. `false` as
    /// for [`Store::renew_kb_document`].
    async fn release_kb_document(&self, id: KbDocumentId, version: u32) -> Result<bool>;
    /// Puts a failed document back to `pending` with no error, progress 0 and no attempts;
    /// `false` when it is gone or not `error`.
    async fn retry_kb_document(&self, id: KbDocumentId) -> Result<bool>;

    // Chunks and the change log, for searching and for keeping search indexes current.

    /// The chunks of a document, by ordinal; empty for an unknown one.
    async fn kb_chunks(&self, document_id: KbDocumentId) -> Result<Vec<KbChunk>>;
    /// The chunks named by `ids` (document, ordinal), in the order first named; those not
    /// stored are left out.
    async fn kb_chunks_by_ids(&self, ids: &[(KbDocumentId, u32)]) -> Result<Vec<KbChunk>>;
    /// Up to `limit` chunks of a knowledge base in (document id, ordinal) order, starting after
    /// `after`: pages for rebuilding a search index.
    async fn kb_chunks_page(
        &self,
        kb_id: KnowledgeBaseId,
        after: Option<(KbDocumentId, u32)>,
        limit: u32,
    ) -> Result<Vec<KbChunk>>;
    /// Up to `limit` change log entries after `seq`, oldest first.
    async fn kb_changes_since(&self, seq: i64, limit: u32) -> Result<Vec<KbChange>>;
    /// The last change log entry's `seq`; 0 when there is none. An index rebuilt from the
    /// chunks read after this answer is current up to it.
    async fn kb_change_head(&self) -> Result<i64>;

    // Sessions of ARS's own MCP endpoint and the calls in flight in them, shared by every
    // instance: a session opened on one is served by any, a cancellation reaching any cancels
    // the run.

    /// Saves an MCP session's state (JSON text), replacing any under `id`; sessions opened
    /// before `expire_before` (and their calls) go in the same transaction.
    async fn save_mcp_session(
        &self,
        id: &str,
        state: &str,
        expire_before: DateTime<Utc>,
    ) -> Result<()>;
    /// An MCP session's state; `None` when unknown (or expired).
    async fn mcp_session(&self, id: &str) -> Result<Option<String>>;
    /// Deletes an MCP session and its calls.
    async fn delete_mcp_session(&self, id: &str) -> Result<()>;
    /// Makes `user` the owner of MCP session `id`; `false` when the session is unknown or
    /// has an owner already (a session's owner never changes).
    async fn bind_mcp_session(&self, id: &str, user: UserId) -> Result<bool>;
    /// The user MCP session `id` belongs to; `None` when it is unknown or has no owner.
    async fn mcp_session_owner(&self, id: &str) -> Result<Option<UserId>>;
    /// Records that request `request_id` of MCP session `session_id` runs `run`; `Invalid`
    /// when the session or the run is unknown.
    async fn save_mcp_call(&self, session_id: &str, request_id: &str, run: RunId) -> Result<()>;
    /// The run request `request_id` of MCP session `session_id` started, while recorded.
    async fn mcp_call_run(&self, session_id: &str, request_id: &str) -> Result<Option<RunId>>;
    /// Forgets a call (it ended).
    async fn delete_mcp_call(&self, session_id: &str, request_id: &str) -> Result<()>;

    // Model providers (secrets arrive and leave sealed) and the model settings. Every write
    // raises `ModelSettings::version` in its own transaction.

    /// Creates a provider with this id. A taken name is `Conflict { field: "name" }`, an unknown
    /// creator `Invalid`.
    async fn create_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
        created_by: Option<UserId>,
    ) -> Result<ModelProvider>;
    /// The provider with this id, if any.
    async fn model_provider(&self, id: ModelProviderId) -> Result<Option<ModelProvider>>;
    /// Every stored provider, by name (byte order).
    async fn list_model_providers(&self) -> Result<Vec<ModelProvider>>;
    /// Replaces every field and sets `updated_at` (`models_refreshed_at` is kept only while the
    /// models are unchanged). When the name changes, a default model of the old name follows it,
    /// in the same transaction. `NotFound` when the row is gone; a taken name is
    /// `Conflict { field: "name" }`.
    async fn update_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
    ) -> Result<ModelProvider>;
    /// Stores the models the provider itself listed, with `refreshed_at`. `NotFound` when the
    /// row is gone.
    async fn set_model_provider_models(
        &self,
        id: ModelProviderId,
        models: &[String],
        refreshed_at: DateTime<Utc>,
    ) -> Result<ModelProvider>;
    /// Deletes a provider; a default model naming it is cleared in the same transaction.
    /// `None` when there was no such provider.
    async fn delete_model_provider(&self, id: ModelProviderId) -> Result<Option<DeletedProvider>>;
    /// The model settings.
    async fn model_settings(&self) -> Result<ModelSettings>;
    /// Just [`ModelSettings::version`]: one read of one row, for deciding whether cached
    /// providers are stale.
    async fn model_settings_version(&self) -> Result<i64>;
    /// Sets the default model (`provider/model`; the caller checked it) or, with `None`, clears
    /// it; answers the settings as stored.
    async fn set_default_model(&self, model: Option<&str>) -> Result<ModelSettings>;

    // Threads.

    /// Stores `thread` as given (timestamps kept to the microsecond) and returns it as stored.
    /// A taken id is `Conflict { field: "id" }`; an unknown user, agent or parent thread, or a
    /// child thread without a subagent slug (or a top-level one with a slug), is `Invalid`.
    async fn create_thread(&self, thread: &Thread) -> Result<Thread>;
    /// The thread with this id, top-level or child; no ownership check.
    async fn thread(&self, id: &ThreadId) -> Result<Option<Thread>>;
    /// `user`'s top-level threads (child threads are reached through their parent), most
    /// recently updated first.
    async fn list_threads(&self, user: UserId) -> Result<Vec<Thread>>;
    /// The direct child threads of `parent`, oldest first.
    async fn child_threads(&self, parent: &ThreadId) -> Result<Vec<Thread>>;
    /// Sets the title and `updated_at`; `NotFound` when the thread is gone.
    async fn rename_thread(&self, id: &ThreadId, title: &str) -> Result<Thread>;
    /// Deletes the thread with its child threads (recursively) and all their messages and runs,
    /// in one statement; `false` when there was no such thread. Active runs are not stopped:
    /// callers cancel them first.
    async fn delete_thread(&self, id: &ThreadId) -> Result<bool>;

    // Messages: the checkpoint. Each call commits one complete message.

    /// Appends a message at the thread's next `seq` (previous maximum + 1, from 1), assigned in
    /// the same transaction that writes it, so concurrent appends, from any instance, never
    /// share or skip a seq. Bumps the thread's `updated_at` to the message's `created_at`.
    /// `NotFound` when the thread is gone. A message of a run (`run_id` set) is written only
    /// while that run is active: otherwise `RunEnded` (the fence), and for an unknown run too.
    async fn append_message(&self, message: &NewMessage) -> Result<Message>;
    /// A thread's history: its messages in `seq` order, without those a later run replaced
    /// (empty for an unknown thread). This is what the model sees.
    async fn messages(&self, thread: &ThreadId) -> Result<Vec<Message>>;
    /// Every message of a thread in `seq` order, replaced ones included (they carry
    /// `replaced_by_run_id`).
    async fn all_messages(&self, thread: &ThreadId) -> Result<Vec<Message>>;

    // Runs.

    /// Creates a `pending` run. When the thread already has an active (pending or running) run,
    /// nothing is written and the result is `StoreError::Busy` naming that run; a unique index
    /// decides, so of several concurrent creators (on any instance) exactly one wins. An unknown
    /// thread, agent, user or parent run is `Invalid`.
    async fn create_run(&self, new: &NewRun) -> Result<Run>;
    /// Creates a `pending` run and commits its input (`new.input`) as the thread's next user
    /// message, in one transaction, so a run never exists without its input. With
    /// `replace_from` (a user message of the thread's history), that message and every message
    /// after it leave the history first, marked as replaced by the new run (regenerate,
    /// edit-and-resend). Nothing is written on any error: `Busy` exactly as [`Store::create_run`]
    /// (checked first), `NotReplaceable` for a `replace_from` that is not in the thread, not a
    /// user message or already replaced, `Invalid` for an unknown thread, agent, user or parent
    /// run.
    async fn create_run_with_input(
        &self,
        new: &NewRun,
        replace_from: Option<MessageId>,
    ) -> Result<RunWithInput>;
    /// The run with this id, if any.
    async fn run(&self, id: RunId) -> Result<Option<Run>>;
    /// The thread's active (pending or running) run, if any; there is at most one.
    async fn active_run(&self, thread: &ThreadId) -> Result<Option<Run>>;
    /// An active run on a thread that deleting `agent` would delete (its threads and their
    /// child threads), if any.
    async fn agent_active_run(&self, agent: AgentId) -> Result<Option<Run>>;
    /// Every run of the thread, oldest first.
    async fn thread_runs(&self, thread: &ThreadId) -> Result<Vec<Run>>;
    /// The runs started by `parent_run` (their `parent_run_id`), oldest first.
    async fn child_runs(&self, parent_run: RunId) -> Result<Vec<Run>>;
    /// The runs on the direct child threads of `thread` (its subagents' runs), oldest first.
    async fn subagent_runs(&self, thread: &ThreadId) -> Result<Vec<Run>>;
    /// Moves a pending run to `running` and sets `started_at`. A run in any other status is
    /// returned unchanged; `NotFound` when there is no such run.
    async fn mark_run_running(&self, id: RunId) -> Result<Run>;
    /// Records an active run's usage so far (live accounting). A run that has already finished
    /// keeps the usage its outcome wrote; `NotFound` when there is no such run.
    async fn set_run_usage(&self, id: RunId, usage: Usage) -> Result<()>;
    /// Ends an active run with `outcome` (status, output, error, usage, `finished_at`). The first
    /// writer wins: a run already terminal is returned unchanged as
    /// [`FinishedRun::AlreadyEnded`], so a cancel racing a success records exactly one of them
    /// and exactly one caller learns it wrote the end. `NotFound` when there is no such run.
    async fn finish_run(&self, id: RunId, outcome: &RunOutcome) -> Result<FinishedRun>;
    /// Ends every active run as `interrupted`, with `finished_at` and [`INTERRUPTED_ERROR`], and
    /// returns their ids. Meant for startup after a stop: it ends the active runs of every
    /// instance sharing the database, so a scaled deployment calls it only when no other
    /// instance is running any.
    async fn interrupt_active_runs(&self) -> Result<Vec<RunId>>;
    /// Extends to `expires_ms` (Unix ms) the lease of every active run `owner` holds, and
    /// answers those runs: an executing run missing from the answer has been ended elsewhere
    /// (cancelled, or reaped after its lease ran out).
    async fn renew_leases(&self, owner: &str, expires_ms: i64) -> Result<Vec<RunId>>;
    /// Ends as `interrupted` (with [`INTERRUPTED_ERROR`]) every active run whose lease ran out
    /// before `now_ms` or that has none — the runs of a crashed instance — and answers them.
    /// Runs of live instances, whose leases are renewed, are never touched.
    async fn reap_expired_runs(&self, now_ms: i64) -> Result<Vec<RunId>>;
}

/// What [`Store::update_user`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserUpdate {
    /// The user as changed.
    Updated(User),
    /// Nothing changed: the user is the last active admin, and the change would demote or
    /// disable them. The user as they stand.
    LastAdmin(User),
}

/// What [`Store::create_run_with_input`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct RunWithInput {
    /// The new run, `pending`.
    pub run: Run,
    /// Its input, the thread's newest message.
    pub input: Message,
    /// How many messages left the history for it (0 without `replace_from`).
    pub replaced: u64,
}

/// What [`Store::finish_run`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum FinishedRun {
    /// This call wrote the run's end.
    Ended(Run),
    /// The run had already ended (another writer won); it is returned as it stands.
    AlreadyEnded(Run),
}

impl FinishedRun {
    pub fn run(&self) -> &Run {
        match self {
            Self::Ended(run) | Self::AlreadyEnded(run) => run,
        }
    }

    pub fn into_run(self) -> Run {
        match self {
            Self::Ended(run) | Self::AlreadyEnded(run) => run,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn connect_picks_sqlite_and_creates_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("nested/deeper/ars.db");
        let store = connect(&format!("sqlite://{}", file.display()))
            .await
            .unwrap();
        assert_eq!(store.kind(), "sqlite");
        assert!(file.exists());
        assert_eq!(store.count_users().await.unwrap(), 0);
    }

    #[tokio::test]
    async fn in_memory_sqlite_keeps_its_data() {
        let store = connect("sqlite::memory:").await.unwrap();
        let user = NewUser {
            username: "a".into(),
            password_hash: "h".into(),
            role: Role::User,
        };
        store.create_user(user).await.unwrap();
        assert_eq!(store.count_users().await.unwrap(), 1);
        assert!(
            store
                .agent(ars_domain::ids::GENERAL_PURPOSE_ID)
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn unknown_schemes_are_refused_without_echoing_the_url() {
        let Err(error) = connect("mysql://root:hunter2@db/ars").await else {
            panic!("mysql is not a supported store");
        };
        let message = error.to_string();
        assert!(message.contains("`mysql`"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }
}
