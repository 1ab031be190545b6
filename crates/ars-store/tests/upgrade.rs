//! Upgrades: a database written at an older schema version is migrated to the current one when
//! the store opens it, keeps every row, and its old rows behave like new ones.
//!
//! The old database is made the way an older ARS made it: sqlx's migrator runs only the first
//! two migration files (copied byte for byte, so `_sqlx_migrations` records the checksums the
//! embedded migrator expects), then plain SQL written against the 0002 schema stores the data.
//! Opening the store the normal way applies the remaining migrations. Everything after that is
//! checked through the `Store` trait only. Each check runs against SQLite, and against
//! PostgreSQL (in a fresh schema, dropped afterwards) when `ARS_TEST_DATABASE_URL` is set.

// The checks are plain async fns rather than `#[test]`s, so clippy's test exemption for
// `unwrap` does not reach them; a failed call should fail the test loudly all the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use chrono::Utc;
use sqlx::migrate::Migrator;

use ars_domain::ids::GENERAL_PURPOSE_ID;
use ars_domain::{
    Lease, MessageRole, NewMessage, NewRun, NewSkill, Run, RunId, RunStatus, ShareConfig,
    SkillContent, SkillFile, Thread,
};
use ars_store::{INTERRUPTED_ERROR, SkillFilter, Store, StoreError, Written};

#[path = "upgrade/old_data.rs"]
mod old_data;

use old_data::{Old, PASSWORD_HASH, TOKEN_HASH, old_data_sql};

/// How many migrations the old database has: 0001 (users, tokens, agents) and 0002 (threads,
/// messages, runs). Skills (0003), run delivery (0004), run leases (0005) and message notices
/// (0006) come later.
const OLD_VERSION: usize = 2;

/// Runs each check once per database kind, each time on a fresh database at 0002.
macro_rules! upgrade_checks {
    ($($check:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $check() {
                    let (store, _dir) = super::sqlite_upgraded().await;
                    super::$check(store, super::Startup::InterruptAllActive).await;
                }
            )*
        }

        mod postgres {
            $(
                #[tokio::test]
                async fn $check() {
                    let Some(url) = ars_store::test_support::pg_url() else {
                        return;
                    };
                    super::with_pg_upgraded(&url, |store| {
                        super::$check(store, super::Startup::ReapExpiredLeases)
                    })
                    .await;
                }
            )*
        }
    };
}

upgrade_checks!(
    a_database_at_0002_upgrades_to_the_current_schema_keeping_its_data,
    an_upgraded_database_stores_mcp_servers_shared_with_its_old_users,
    an_upgraded_database_stores_knowledge_bases_of_its_old_users,
    an_upgraded_run_that_was_active_is_recovered_and_its_thread_takes_new_runs,
    an_upgraded_database_stores_skills,
    a_run_active_before_leases_existed_counts_as_expired_but_leased_runs_do_not,
);

/// How a deployment of this database kind ends, at startup, the runs a stop cut off: one
/// SQLite file has one server, so everything active was cut off; instances sharing PostgreSQL
/// end only runs whose lease ran out (`ars::config` picks the same way).
#[derive(Clone, Copy, Debug)]
enum Startup {
    InterruptAllActive,
    ReapExpiredLeases,
}

impl Startup {
    async fn recover(self, store: &dyn Store) -> Vec<RunId> {
        match self {
            Self::InterruptAllActive => store.interrupt_active_runs().await,
            Self::ReapExpiredLeases => store.reap_expired_runs(Utc::now().timestamp_millis()).await,
        }
        .unwrap()
    }
}

// The checks.

async fn a_database_at_0002_upgrades_to_the_current_schema_keeping_its_data(
    store: Arc<dyn Store>,
    _startup: Startup,
) {
    let old = Old::expected();

    assert_eq!(
        store.user(old.user.id).await.unwrap(),
        Some(old.user.clone())
    );
    assert_eq!(store.list_users().await.unwrap(), vec![old.user.clone()]);
    let (user, hash) = store.user_credentials("alice").await.unwrap().unwrap();
    assert_eq!((user, hash.as_str()), (old.user.clone(), PASSWORD_HASH));
    assert_eq!(
        store.list_tokens(old.user.id).await.unwrap(),
        vec![old.token.clone()]
    );
    assert_eq!(
        store.token_user(TOKEN_HASH, Utc::now()).await.unwrap(),
        Some((old.user.clone(), old.token.clone()))
    );

    assert_eq!(
        store.agent(old.agent.id).await.unwrap(),
        Some(old.agent.clone())
    );
    assert_eq!(
        store.default_agent().await.unwrap(),
        Some(old.agent.clone())
    );
    let general_purpose = store.agent(GENERAL_PURPOSE_ID).await.unwrap().unwrap();
    assert!(general_purpose.is_builtin && general_purpose.is_subagent);

    assert_eq!(
        store.thread(&old.root.id).await.unwrap(),
        Some(old.root.clone())
    );
    assert_eq!(
        store.thread(&old.child.id).await.unwrap(),
        Some(old.child.clone())
    );
    assert_eq!(
        store.list_threads(old.user.id).await.unwrap(),
        vec![old.root.clone()]
    );
    assert_eq!(
        store.child_threads(&old.root.id).await.unwrap(),
        vec![old.child.clone()]
    );

    // The runs read back whole, and the delivery column 0004 added is empty for all of them:
    // a run from before it has no recorded delivery.
    assert_eq!(
        store.thread_runs(&old.root.id).await.unwrap(),
        vec![old.finished.clone(), old.active.clone()]
    );
    assert_eq!(
        store.run(old.child_run.id).await.unwrap(),
        Some(old.child_run.clone())
    );
    assert_eq!(
        store.child_runs(old.finished.id).await.unwrap(),
        vec![old.child_run.clone()]
    );
    assert_eq!(
        store.subagent_runs(&old.root.id).await.unwrap(),
        vec![old.child_run.clone()]
    );
    assert_eq!(
        store.active_run(&old.root.id).await.unwrap(),
        Some(old.active.clone())
    );
    assert_eq!(
        store.agent_active_run(old.agent.id).await.unwrap(),
        Some(old.active.clone())
    );

    assert_eq!(
        store.messages(&old.root.id).await.unwrap(),
        old.root_messages
    );
    assert_eq!(
        store.messages(&old.child.id).await.unwrap(),
        old.child_messages
    );
}

async fn an_upgraded_run_that_was_active_is_recovered_and_its_thread_takes_new_runs(
    store: Arc<dyn Store>,
    startup: Startup,
) {
    let old = Old::expected();

    assert_eq!(startup.recover(store.as_ref()).await, vec![old.active.id]);
    let recovered = store.run(old.active.id).await.unwrap().unwrap();
    assert!(recovered.finished_at.is_some());
    assert_eq!(
        recovered,
        Run {
            status: RunStatus::Interrupted,
            error: Some(INTERRUPTED_ERROR.into()),
            finished_at: recovered.finished_at,
            ..old.active.clone()
        },
        "recovery changes only the status, the error and the end"
    );
    assert_eq!(store.active_run(&old.root.id).await.unwrap(), None);
    // The finished run is not touched, and a second recovery finds nothing left to end.
    assert_eq!(
        store.run(old.finished.id).await.unwrap(),
        Some(old.finished.clone())
    );
    assert_eq!(startup.recover(store.as_ref()).await, Vec::<RunId>::new());

    // The fence holds for the old run: it can write no more messages.
    let late = NewMessage::text(
        old.root.id.clone(),
        Some(old.active.id),
        MessageRole::Assistant,
        "too late".into(),
    );
    assert!(matches!(
        store.append_message(&late).await,
        Err(StoreError::RunEnded { run }) if run == old.active.id
    ));

    let new = store
        .create_run(&new_run(&old.root, "Try again"))
        .await
        .unwrap();
    assert_eq!(new.status, RunStatus::Pending);
    assert_eq!(new.delivery(), None);
    assert_eq!(
        store.active_run(&old.root.id).await.unwrap(),
        Some(new.clone())
    );
    let running = store.mark_run_running(new.id).await.unwrap();
    assert_eq!(running.status, RunStatus::Running);

    // New messages continue the old numbering without a gap.
    let message = NewMessage::text(
        old.root.id.clone(),
        Some(new.id),
        MessageRole::User,
        "Try again".into(),
    );
    let appended = store.append_message(&message).await.unwrap();
    let old_count = i64::try_from(old.root_messages.len()).unwrap();
    assert_eq!(appended.seq, old_count + 1);
    let messages = store.messages(&old.root.id).await.unwrap();
    assert_eq!(messages[..old.root_messages.len()], old.root_messages[..]);
    assert_eq!(messages.last(), Some(&appended));
    let thread = store.thread(&old.root.id).await.unwrap().unwrap();
    assert_eq!(thread.updated_at, appended.created_at);

    let runs = store.thread_runs(&old.root.id).await.unwrap();
    let ids: Vec<RunId> = runs.iter().map(|r| r.id).collect();
    assert_eq!(ids, vec![old.finished.id, old.active.id, new.id]);
}

async fn an_upgraded_database_stores_skills(store: Arc<dyn Store>, _startup: Startup) {
    let old = Old::expected();
    assert!(
        store
            .list_skills(SkillFilter::default())
            .await
            .unwrap()
            .is_empty()
    );

    let content = SkillContent {
        name: "summarize".into(),
        description: "Summarizes a file.".into(),
        license: Some("MIT".into()),
        compatibility: None,
        metadata: BTreeMap::from([("author".to_string(), "alice".to_string())]),
        allowed_tools: vec!["read_file".into()],
        version: "v1".into(),
        files: vec![
            SkillFile {
                path: "SKILL.md".into(),
                content: b"---\nname: summarize\n---\n".to_vec(),
            },
            SkillFile {
                path: "scripts/run.sh".into(),
                content: vec![0, 159, 146, 150],
            },
        ],
    };
    // Owned by the user from before the upgrade: the new tables reference the old ones.
    let skill = store
        .create_skill(&NewSkill {
            owner_id: Some(old.user.id),
            share_config: ShareConfig::default(),
            content: content.clone(),
        })
        .await
        .unwrap();
    assert_eq!(skill.owner_id, Some(old.user.id));
    assert_eq!(skill.file_count, 2);
    assert_eq!(
        store.skill_by_name("summarize").await.unwrap(),
        Some(skill.clone())
    );
    assert_eq!(store.skill_contents(skill.id).await.unwrap(), content.files);
}

async fn a_run_active_before_leases_existed_counts_as_expired_but_leased_runs_do_not(
    store: Arc<dyn Store>,
    _startup: Startup,
) {
    let old = Old::expected();
    // A run on the child thread, held by a live instance for another hour.
    let now_ms = Utc::now().timestamp_millis();
    let leased = NewRun {
        lease: Some(Lease {
            owner: "instance-b".into(),
            expires_ms: now_ms + 3_600_000,
        }),
        ..new_run(&old.child, "Look again")
    };
    let leased = store.create_run(&leased).await.unwrap();

    // At the earliest instant, only a run with no lease at all has run out: the old run, which
    // 0005 left without one, so some instance's reaper ends it rather than nobody ever.
    assert_eq!(
        store.reap_expired_runs(0).await.unwrap(),
        vec![old.active.id]
    );
    let reaped = store.run(old.active.id).await.unwrap().unwrap();
    assert_eq!(reaped.status, RunStatus::Interrupted);
    assert_eq!(reaped.error.as_deref(), Some(INTERRUPTED_ERROR));

    // No owner holds the old run, so no heartbeat could ever have renewed it; the leased run
    // is renewed by its owner and survives a reap at the current time.
    assert_eq!(
        store
            .renew_leases("instance-b", now_ms + 7_200_000)
            .await
            .unwrap(),
        vec![leased.id]
    );
    assert_eq!(
        store.reap_expired_runs(now_ms).await.unwrap(),
        Vec::<RunId>::new()
    );
    assert_eq!(store.active_run(&old.child.id).await.unwrap(), Some(leased));
}

// The old database.

/// A SQLite store opened the normal way (`ars_store::connect`) on a file that holds the old
/// data at 0002; keep the directory alive as long as the store.
async fn sqlite_upgraded() -> (Arc<dyn Store>, tempfile::TempDir) {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ars.db");
    let options = SqliteConnectOptions::new()
        .filename(&file)
        .create_if_missing(true)
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .unwrap();
    old_migrator("sqlite").await.run(&pool).await.unwrap();
    sqlx::raw_sql(&old_data_sql()).execute(&pool).await.unwrap();
    pool.close().await;

    let store = ars_store::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    (store, dir)
}

/// Runs `check` on a PostgreSQL store that opened a new schema holding the old data at 0002,
/// then drops the schema, whether the check passed or not.
async fn with_pg_upgraded<F, Fut>(url: &str, check: F)
where
    F: FnOnce(Arc<dyn Store>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    use ars_store::test_support::{
        pg_drop_schema, pg_new_schema, pg_open_schema, pg_schema_options,
    };
    use sqlx::Connection;

    let schema = pg_new_schema(url).await;
    let mut conn = sqlx::PgConnection::connect_with(&pg_schema_options(url, &schema))
        .await
        .unwrap();
    old_migrator("postgres").await.run(&mut conn).await.unwrap();
    sqlx::raw_sql(&old_data_sql())
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();

    let store: Arc<dyn Store> = Arc::new(pg_open_schema(url, &schema).await);
    // The check runs as its own task so that a failed assertion comes back here as an error,
    // after which the schema is dropped and the panic resumed. The task owns the store, so
    // nothing uses the schema any more by then.
    let outcome = tokio::spawn(check(store)).await;
    pg_drop_schema(url, &schema).await;
    if let Err(error) = outcome {
        std::panic::resume_unwind(error.into_panic());
    }
}

/// A migrator holding only the first [`OLD_VERSION`] migrations of `kind` (`sqlite` or
/// `postgres`), read from copies of the crate's files: the same bytes, so the same checksums
/// the embedded migrator later compares with what `_sqlx_migrations` records.
async fn old_migrator(kind: &str) -> Migrator {
    let migrator = migrator_up_to(kind, OLD_VERSION).await;
    let versions: Vec<i64> = migrator.iter().map(|m| m.version).collect();
    assert_eq!(versions, [1, 2], "the old schema is 0001 and 0002");
    migrator
}

/// A migrator holding only the first `count` migrations of `kind`, as [`old_migrator`] reads
/// them.
async fn migrator_up_to(kind: &str, count: usize) -> Migrator {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(kind);
    let mut files: Vec<_> = std::fs::read_dir(&source)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
        .collect();
    files.sort();
    let old = tempfile::tempdir().unwrap();
    for file in &files[..count] {
        std::fs::copy(file, old.path().join(file.file_name().unwrap())).unwrap();
    }
    // `Migrator::new` reads the files now, so the copies may go when it returns.
    Migrator::new(old.path()).await.unwrap()
}

/// Every row of `table`, each as a JSON array of all its columns (by name, so a rebuilt table
/// is read in the same order), ordered by id.
async fn rows_as_json(pool: &sqlx::SqlitePool, table: &str) -> Vec<String> {
    let columns: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT name FROM pragma_table_info('{table}') ORDER BY name"
    ))
    .fetch_all(pool)
    .await
    .unwrap();
    for column in &columns {
        let set: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM {table} WHERE {column} IS NOT NULL"
        ))
        .fetch_one(pool)
        .await
        .unwrap();
        assert!(
            set > 0,
            "no row of {table} sets {column}: the check could not see it lost"
        );
    }
    sqlx::query_scalar(&format!(
        "SELECT json_array({}) FROM {table} ORDER BY id",
        columns.join(", ")
    ))
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Migration 0021 rebuilds `runs` and `messages` (their lists of values as comparisons): a
/// database at 0020 whose runs and messages set every column keeps every value.
#[tokio::test]
async fn a_database_at_0020_keeps_every_column_of_its_runs_and_messages_through_their_rebuild() {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ars.db");
    let open = |read_only: bool| {
        SqlitePoolOptions::new().max_connections(1).connect_with(
            SqliteConnectOptions::new()
                .filename(&file)
                .create_if_missing(true)
                .read_only(read_only)
                .foreign_keys(false),
        )
    };
    let pool = open(false).await.unwrap();
    migrator_up_to("sqlite", 20).await.run(&pool).await.unwrap();
    sqlx::raw_sql(&old_data_sql()).execute(&pool).await.unwrap();
    // Every column of both tables set somewhere (a waiting run too), so a value the rebuild
    // dropped or moved to another column shows.
    sqlx::raw_sql(
        "UPDATE runs SET delivery = 'background', lease_owner = 'instance', \
             lease_expires_ms = 12345, error_code = 'code', model = 'provider/model', \
             parent_told = TRUE, wake_of = (SELECT MIN(id) FROM runs), \
             output = COALESCE(output, 'out'), error = COALESCE(error, 'err'), \
             started_at = COALESCE(started_at, created_at), \
             parent_tool_call_id = COALESCE(parent_tool_call_id, 'call'), \
             parent_run_id = COALESCE(parent_run_id, (SELECT MIN(id) FROM runs)); \
         UPDATE runs SET status = 'waiting', waiting_json = '{\"calls\":[]}', \
             waiting_until_ms = 99 WHERE status IN ('pending', 'running'); \
         UPDATE messages SET notice = '{\"run_id\":\"r\"}', replaced_by_run_id = 'r', \
             steer = TRUE, is_error = TRUE, tool_call_id = COALESCE(tool_call_id, 'c'), \
             tool_name = COALESCE(tool_name, 't'), run_id = COALESCE(run_id, \
             (SELECT MIN(id) FROM runs));",
    )
    .execute(&pool)
    .await
    .unwrap();
    let before = (
        rows_as_json(&pool, "runs").await,
        rows_as_json(&pool, "messages").await,
    );
    pool.close().await;

    let store = ars_store::connect(&format!("sqlite://{}", file.display()))
        .await
        .unwrap();
    let pool = open(true).await.unwrap();
    let after = (
        rows_as_json(&pool, "runs").await,
        rows_as_json(&pool, "messages").await,
    );
    assert!(!before.0.is_empty() && !before.1.is_empty());
    assert_eq!(after, before);
    let version: i64 = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!(version >= 21, "0021 ran: {version}");
    drop(store);
}

/// A top-level run on `thread` by its user and agent, without a lease.
fn new_run(thread: &Thread, input: &str) -> NewRun {
    NewRun {
        thread_id: thread.id.clone(),
        agent_id: thread.agent_id,
        user_id: thread.user_id,
        input: input.into(),
        lineage: None,
        lease: None,
        woken_by: None,
        new_thread: None,
        running: false,
    }
}

async fn an_upgraded_database_stores_mcp_servers_shared_with_its_old_users(
    store: Arc<dyn Store>,
    _startup: Startup,
) {
    use ars_domain::mcp_server::HttpTransport;
    use ars_domain::{McpServerFields, McpServerId, McpTransport, Visibility};
    let old = Old::expected();
    let filter = ars_store::McpServerFilter::default();
    assert!(store.list_mcp_servers(filter).await.unwrap().is_empty());
    // Owned by and shared with the user from before the upgrade (0010 references `users`).
    let fields = McpServerFields {
        slug: "remote".into(),
        name: "Remote".into(),
        description: String::new(),
        transport: McpTransport::StreamableHttp(HttpTransport {
            url: "http://127.0.0.1:3001/mcp".into(),
            headers: BTreeMap::new(),
        }),
        enabled_tools: None,
        share_config: ShareConfig {
            visibility: Visibility::Users,
            user_ids: vec![old.user.id],
            manager_ids: Vec::new(),
        },
    };
    let server = store
        .create_mcp_server(McpServerId::new(), &fields, Some(old.user.id))
        .await
        .unwrap();
    assert_eq!(server.fields, fields);
    let visible = ars_store::McpServerFilter {
        visible_to: Some(old.user.id),
    };
    assert_eq!(store.list_mcp_servers(visible).await.unwrap(), vec![server]);
}

async fn an_upgraded_database_stores_knowledge_bases_of_its_old_users(
    store: Arc<dyn Store>,
    _startup: Startup,
) {
    use ars_domain::{
        KbDocumentId, KbSettings, KnowledgeBaseFields, KnowledgeBaseId, NewKbChunk, NewKbDocument,
        Visibility,
    };
    let old = Old::expected();
    let filter = ars_store::KnowledgeBaseFilter {
        visible_to: Some(old.user.id),
    };
    assert!(store.list_knowledge_bases(filter).await.unwrap().is_empty());
    assert_eq!(store.kb_change_head().await.unwrap(), 0);
    // Owned by, shared with and uploaded by the user from before the upgrade (0012
    // references `users`).
    let fields = KnowledgeBaseFields {
        slug: "handbook".into(),
        name: "Handbook".into(),
        description: String::new(),
        settings: KbSettings::default(),
        share_config: ShareConfig {
            visibility: Visibility::Users,
            user_ids: vec![old.user.id],
            manager_ids: Vec::new(),
        },
    };
    let kb = store
        .create_knowledge_base(KnowledgeBaseId::new(), &fields, Some(old.user.id))
        .await
        .unwrap();
    let upload = NewKbDocument {
        id: KbDocumentId::new(),
        name: "policy.md".into(),
        format: "md".into(),
        bytes: b"# Policy".to_vec(),
        sha256: "0".repeat(64),
        uploaded_by: Some(old.user.id),
    };
    let document = store.put_kb_document(kb.id, upload).await.unwrap();
    assert_eq!(document.uploaded_by, Some(old.user.id));
    let claimed = store
        .claim_kb_document(Utc::now(), std::time::Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    let chunk = NewKbChunk {
        ordinal: 0,
        heading_path: vec!["Policy".into()],
        start: 0,
        end: 8,
        text: "# Policy".into(),
        embedding: None,
    };
    assert_eq!(
        store
            .finish_kb_document(claimed.id, claimed.version, &[chunk])
            .await
            .unwrap(),
        Written::Applied
    );
    let listed = store.list_knowledge_bases(filter).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].counts.documents, listed[0].counts.chunks),
        (1, 1)
    );
    assert_eq!(store.kb_change_head().await.unwrap(), 1);
}

/// No index of the schema (as an upgraded SQLite database has it) is a leading part of
/// another full index on its table: the longer one answers every lookup the shorter did, and
/// the shorter only costs each insert and update a B-tree write. Unique and partial indexes
/// state rules or cover other rows, so they stand on their own.
#[tokio::test]
async fn no_index_is_a_leading_part_of_another_on_its_table() {
    let (store, dir) = sqlite_upgraded().await;
    drop(store);
    let url = format!("sqlite://{}", dir.path().join("ars.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let columns: Vec<(String, String, bool, String)> = sqlx::query_as(
        "SELECT m.name, il.name, il.\"unique\" OR il.partial, ii.name \
         FROM sqlite_master m, pragma_index_list(m.name) il, pragma_index_info(il.name) ii \
         WHERE m.type = 'table' ORDER BY m.name, il.name, ii.seqno",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_no_leading_parts(columns);
}

/// The same rule on PostgreSQL's schema (skipped without `ARS_TEST_DATABASE_URL`); an index on
/// an expression stands on its own too.
#[tokio::test]
async fn no_index_is_a_leading_part_of_another_on_its_table_on_postgresql() {
    use ars_store::test_support::{
        pg_drop_schema, pg_new_schema, pg_open_schema, pg_schema_options, pg_url,
    };
    use sqlx::Connection;

    let Some(url) = pg_url() else { return };
    let schema = pg_new_schema(&url).await;
    drop(pg_open_schema(&url, &schema).await);
    let mut conn = sqlx::PgConnection::connect_with(&pg_schema_options(&url, &schema))
        .await
        .unwrap();
    let columns: sqlx::Result<Vec<(String, String, bool, String)>> = sqlx::query_as(
        "SELECT t.relname::text, i.relname::text, \
         ix.indisunique OR ix.indpred IS NOT NULL OR ix.indexprs IS NOT NULL, a.attname::text \
         FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid \
         JOIN pg_class t ON t.oid = ix.indrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema() \
         CROSS JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord) \
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
         ORDER BY 1, 2, k.ord",
    )
    .fetch_all(&mut conn)
    .await;
    conn.close().await.unwrap();
    pg_drop_schema(&url, &schema).await;
    assert_no_leading_parts(columns.unwrap());
}

/// Fails naming every index (of `(table, index, unique or partial, column)` rows, each
/// index's columns in order) whose columns lead another full index of its table.
fn assert_no_leading_parts(columns: Vec<(String, String, bool, String)>) {
    // table → index → (unique or partial, its columns in order)
    let mut indexes: BTreeMap<String, BTreeMap<String, (bool, Vec<String>)>> = BTreeMap::new();
    for (table, index, special, column) in columns {
        let index = indexes
            .entry(table)
            .or_default()
            .entry(index)
            .or_insert_with(|| (special, Vec::new()));
        index.1.push(column);
    }
    assert!(indexes["runs"].contains_key("runs_user_created"));
    let mut redundant = Vec::new();
    for (table, of_table) in &indexes {
        for (short, (short_special, short_cols)) in of_table {
            for (long, (long_special, long_cols)) in of_table {
                if short != long
                    && !short_special
                    && !long_special
                    && long_cols.starts_with(short_cols)
                {
                    redundant.push(format!(
                        "{table}: {short} {short_cols:?} leads {long} {long_cols:?}"
                    ));
                }
            }
        }
    }
    assert!(redundant.is_empty(), "{redundant:#?}");
}
