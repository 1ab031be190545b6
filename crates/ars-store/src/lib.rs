//! The store seams: everything ARS persists, behind one object-safe trait per aggregate.
//!
//! Each aggregate is a trait of its own, so a caller names the part it uses: [`AccountStore`]
//! (users, API tokens), [`AgentStore`], [`SkillStore`], [`McpStore`] (MCP servers and the
//! sessions of ARS's own MCP endpoint), [`KnowledgeStore`] (knowledge bases, documents and
//! their ingestion, chunks, the change log), [`ProviderStore`] (model providers and settings),
//! [`ConversationStore`] (threads, messages) and [`RunStore`]. [`Store`] is all of them (and
//! [`StoreKind`]); every type implementing them all is one, so the server holds an
//! `Arc<dyn Store>` and hands a part of it (`&dyn RunStore`) to code that needs no more.
//!
//! Two real implementations share one body of SQL: [`SqliteStore`] (the embedded default, WAL
//! mode) and [`PgStore`] (scaled deployments). Each runs its own migrations at connect time;
//! [`connect`] picks one by URL scheme. With the `test-utils` feature, `test_support` gives
//! each test a fresh database of either kind.
//!
//! Statements are written once for both databases: placeholders are `$1, $2, …` (PostgreSQL
//! reads them natively and sqlx's SQLite driver binds `$N` to argument N) and booleans
//! `TRUE`/`FALSE` (SQLite knows them as 1/0). Only the migrations differ per database, plus
//! how each serializes some writes (PostgreSQL takes advisory locks; SQLite's write lock already
//! does) and how a claim of a knowledge document skips rows another claim holds.
//!
//! Code map: one folder per aggregate (`accounts`, `agents`, `skills`, `mcp`, `knowledge`,
//! `providers`, `conversations`, `runs`), each with the trait and its types (`mod.rs`), its
//! statements (`queries.rs`), the decoding of its rows into domain types (`rows.rs`) and its
//! implementation for the SQL family (`sql.rs`, a macro). `shares` is the one piece the four
//! shared resources (agents, skills, MCP servers, knowledge bases) have in common: share rows
//! and the visibility filter. `sql_store` expands every aggregate for both stores; `write` is
//! the path every write takes (its own task, so a dropped caller never leaves a write
//! half-done, timed and counted by `metrics`); `outcome` names what a write did when nothing
//! happening is an answer; `rows` parses ids; `error` maps constraint violations; `sqlite` and
//! `postgres` only open pools (SQLite: readers plus one writer connection) and migrate.
//!
//! **Boundary:** this is the only crate that knows sqlx or SQL. Callers get domain types.
//! **Invariant:** a write either happens whole or not at all (one transaction per call), and a
//! caller that stops waiting cannot stop it halfway.
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

mod accounts;
mod agents;
mod checkpoint;
mod control;
mod conversations;
mod error;
mod group_commit;
mod kept;
mod knowledge;
mod mcp;
pub mod metrics;
mod outcome;
mod postgres;
mod protocols;
mod providers;
mod rows;
mod runs;
mod shares;
mod skills;
mod sql_store;
mod sqlite;
#[cfg(feature = "test-utils")]
pub mod test_support;
mod usage;
mod write;

pub use accounts::{AccountStore, NewToken, NewUser, UserUpdate};
pub use agents::{AgentFilter, AgentKinds, AgentStore};
pub use control::PgControl;
pub use conversations::{ConversationStore, ThreadCursor};
pub use error::{StoreError, Unreplaceable};
pub use knowledge::{KbChange, KnowledgeBaseFilter, KnowledgeStore};
pub use mcp::{McpServerFilter, McpStore};
pub use outcome::{Bound, Deleted, Retried, Updated, Written};
pub use postgres::{DEFAULT_MAX_CONNECTIONS as PG_DEFAULT_MAX_CONNECTIONS, PgStore};
pub use protocols::ProtocolStore;
pub use providers::{DeletedProvider, ModelSettings, ProviderStore};
pub use runs::{
    AnsweredRun, FinishedRun, INTERRUPTED_ERROR, RunStore, RunWithInput, StoredWaiting,
};
pub use skills::{SkillFilter, SkillStore};
pub use sqlite::SqliteStore;
pub use usage::{UsageFilter, UsageRow, UsageStore};

/// A store call's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Which database a store is, for logs and health output.
pub trait StoreKind: Send + Sync {
    /// `"sqlite"` or `"postgres"`.
    fn kind(&self) -> &'static str;
    /// The writes (each one transaction, one commit) this store made so far, by operation.
    fn writes(&self) -> std::collections::BTreeMap<&'static str, u64>;
}

/// Everything ARS persists: every aggregate's trait. Object-safe: the server holds an
/// `Arc<dyn Store>`, and a `&dyn Store` is a `&dyn RunStore` (or any other part) where a
/// caller needs only that part.
pub trait Store:
    StoreKind
    + AccountStore
    + AgentStore
    + SkillStore
    + McpStore
    + KnowledgeStore
    + ProviderStore
    + ConversationStore
    + RunStore
    + ProtocolStore
    + UsageStore
    + 'static
{
}

impl<T> Store for T where
    T: StoreKind
        + AccountStore
        + AgentStore
        + SkillStore
        + McpStore
        + KnowledgeStore
        + ProviderStore
        + ConversationStore
        + RunStore
        + ProtocolStore
        + UsageStore
        + ?Sized
        + 'static
{
}

/// Connects to the store a database URL names and migrates it: `sqlite:…` (the parent
/// directory of the file is created if needed) or `postgres://…` / `postgresql://…`.
pub async fn connect(url: &str) -> Result<Arc<dyn Store>> {
    connect_sized(url, None).await
}

/// Like [`connect`]; a PostgreSQL store keeps at most `pg_max_connections` open (default
/// [`PG_DEFAULT_MAX_CONNECTIONS`]). SQLite has its one writer and its readers.
pub async fn connect_sized(url: &str, pg_max_connections: Option<u32>) -> Result<Arc<dyn Store>> {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    match scheme {
        "sqlite" => Ok(Arc::new(SqliteStore::connect(url).await?)),
        "postgres" | "postgresql" => Ok(Arc::new(
            PgStore::connect_sized(
                url,
                pg_max_connections.unwrap_or(postgres::DEFAULT_MAX_CONNECTIONS),
            )
            .await?,
        )),
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

#[cfg(test)]
mod tests {
    use ars_domain::Role;

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
