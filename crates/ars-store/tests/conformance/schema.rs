//! What the schema itself enforces, written behind the trait's back, and value round trips.

use ars_domain::Visibility;
use ars_domain::ids::GENERAL_PURPOSE_ID;
use ars_store::test_support::RawSql;
use ars_store::{NewToken, Store, StoreError};
use chrono::{DateTime, Duration, Utc};

use crate::fixtures::{draft, new_run, owner, root_thread, shares, user};

/// An `INSERT` of an agent row with the given backend, flags and visibility.
fn insert_agent(slug: &str, backend: &str, subagent: bool, default: bool, vis: &str) -> String {
    format!(
        "INSERT INTO agents (id, slug, name, description, backend_id, is_subagent, config_json, \
         visibility, owner_id, is_default, is_builtin, created_at, updated_at) VALUES \
         ('{}', '{slug}', 'Raw', '', '{backend}', {subagent}, '{{\"context\":{{}}}}', '{vis}', \
         NULL, {default}, FALSE, '2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00')",
        ars_domain::AgentId::new()
    )
}

async fn assert_invalid<S: RawSql>(store: &S, sql: &str) {
    let result = store.execute_raw(sql).await;
    assert!(
        matches!(result, Err(StoreError::Invalid(_))),
        "{sql}: {result:?}"
    );
}

pub async fn check_schema_rejects_forbidden_rows<S: Store + RawSql>(store: &S) {
    // The raw insert itself is well-formed.
    let fine = insert_agent("raw-ok", "DefaultBackend", false, false, "public");
    assert_eq!(store.execute_raw(&fine).await.unwrap(), 1);

    let sub = "SubAgentBackend";
    let def = "DefaultBackend";
    assert_invalid(store, &insert_agent("masked", sub, false, false, "public")).await;
    assert_invalid(
        store,
        &insert_agent("masquerade", def, true, false, "public"),
    )
    .await;
    assert_invalid(
        store,
        &insert_agent("sub-default", sub, true, true, "public"),
    )
    .await;
    assert_invalid(
        store,
        &insert_agent("secretive", def, false, false, "secret"),
    )
    .await;
    assert_invalid(
        store,
        &insert_agent("unknown", "OtherBackend", false, false, "public"),
    )
    .await;
    let gp_default =
        format!("UPDATE agents SET is_default = TRUE WHERE id = '{GENERAL_PURPOSE_ID}'");
    assert_invalid(store, &gp_default).await;

    let root = "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) \
                VALUES ('00000000-0000-7000-8000-0000000000aa', 'root', 'x', 'root', \
                '2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00')";
    assert_invalid(store, root).await;

    let owner = user(store, "owner").await;
    let agent = store.create_agent(&draft("shared"), None).await.unwrap();
    let share = |user: String, role: &str| {
        format!(
            "INSERT INTO agent_shares (agent_id, user_id, role) VALUES ('{}', '{user}', '{role}')",
            agent.id
        )
    };
    assert_invalid(store, &share(owner.id.to_string(), "owner")).await;
    assert_invalid(store, &share(ars_domain::UserId::new().to_string(), "user")).await;
    assert_eq!(
        store
            .execute_raw(&share(owner.id.to_string(), "user"))
            .await
            .unwrap(),
        1
    );

    // A second default collides with the first on the partial unique index.
    store.set_default_agent(agent.id).await.unwrap();
    let second = "UPDATE agents SET is_default = TRUE WHERE slug = 'raw-ok'";
    let result = store.execute_raw(second).await;
    assert!(
        matches!(
            result,
            Err(StoreError::Conflict {
                field: "is_default"
            })
        ),
        "{result:?}"
    );
    assert_eq!(
        store.default_agent().await.unwrap().map(|a| a.id),
        Some(agent.id)
    );
}

pub async fn check_deleting_a_user_clears_ownership_and_shares<S: Store + RawSql>(store: &S) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let mut kept = draft("kept");
    kept.share_config = shares(Visibility::Users, &[friend.id], &[friend.id]);
    let kept = store.create_agent(&kept, Some(owner.id)).await.unwrap();
    store
        .create_token(NewToken {
            user_id: friend.id,
            name: "t".into(),
            token_hash: "friend-token".into(),
            expires_at: None,
        })
        .await
        .unwrap();

    for gone in [owner.id, friend.id] {
        let sql = format!("DELETE FROM users WHERE id = '{gone}'");
        assert_eq!(store.execute_raw(&sql).await.unwrap(), 1);
    }
    let after = store.agent(kept.id).await.unwrap().unwrap();
    assert_eq!(after.owner_id, None, "ON DELETE SET NULL");
    assert_eq!(after.share_config, shares(Visibility::Users, &[], &[]));
    let now = ars_domain::time::now();
    assert_eq!(store.token_user("friend-token", now).await.unwrap(), None);
}

pub async fn check_timestamps_round_trip(store: &dyn Store) {
    let alice = user(store, "alice").await;
    assert_eq!(store.user(alice.id).await.unwrap(), Some(alice.clone()));

    // A caller-supplied instant with nanoseconds comes back truncated to microseconds.
    let expires = DateTime::<Utc>::from_timestamp(4_102_444_800, 123_456_789).unwrap();
    let token = store
        .create_token(NewToken {
            user_id: alice.id,
            name: "t".into(),
            token_hash: "h".into(),
            expires_at: Some(expires),
        })
        .await
        .unwrap();
    let micros = DateTime::<Utc>::from_timestamp(4_102_444_800, 123_456_000).unwrap();
    assert_eq!(token.expires_at, Some(micros));
    assert_eq!(
        store.list_tokens(alice.id).await.unwrap(),
        vec![token.clone()]
    );
    let lookup = store
        .token_user("h", micros - Duration::microseconds(1))
        .await;
    assert_eq!(lookup.unwrap(), Some((alice.clone(), token.clone())));
    assert_eq!(store.token_user("h", micros).await.unwrap(), None);

    let agent = store.create_agent(&draft("timed"), None).await.unwrap();
    assert_eq!(store.agent(agent.id).await.unwrap(), Some(agent.clone()));
    let updated = store.update_agent(agent.id, &draft("timed")).await.unwrap();
    assert_eq!(store.agent(agent.id).await.unwrap(), Some(updated.clone()));
    assert_eq!(updated.created_at, agent.created_at);
    assert!(updated.updated_at >= agent.updated_at);
    let gp = store.agent(GENERAL_PURPOSE_ID).await.unwrap().unwrap();
    assert!(gp.created_at <= ars_domain::time::now());
}

async fn assert_conflict<S: RawSql>(store: &S, sql: &str) {
    let result = store.execute_raw(sql).await;
    assert!(
        matches!(result, Err(StoreError::Conflict { .. })),
        "{sql}: {result:?}"
    );
}

pub async fn check_schema_rejects_forbidden_conversation_rows<S: Store + RawSql>(store: &S) {
    let alice = owner(store, "alice").await;
    let busy = root_thread(store, &alice, "busy").await;
    let idle = root_thread(store, &alice, "idle").await;
    store.create_run(&new_run(&busy, "go")).await.unwrap();
    let at = "'2025-01-01T00:00:00+00:00'";

    let message = |seq: i64, role: &str, calls: &str| {
        format!(
            "INSERT INTO messages (id, thread_id, run_id, seq, role, content, tool_calls, \
             tool_call_id, tool_name, is_error, created_at) VALUES ('{}', '{}', NULL, {seq}, \
             '{role}', 'x', '{calls}', NULL, NULL, FALSE, {at})",
            ars_domain::MessageId::new(),
            busy.id
        )
    };
    assert_eq!(
        store.execute_raw(&message(1, "user", "[]")).await.unwrap(),
        1
    );
    assert_conflict(store, &message(1, "assistant", "[]")).await;
    assert_invalid(store, &message(2, "robot", "[]")).await;
    assert_invalid(store, &message(2, "assistant", r#"{"id":"call"}"#)).await;
    assert_invalid(store, &message(0, "user", "[]")).await;
    // A thread's last seq (the next message's, less one) is never negative.
    assert_invalid(
        store,
        &format!("UPDATE threads SET last_seq = -1 WHERE id = '{}'", idle.id),
    )
    .await;

    let run = |thread: &ars_domain::ThreadId, status: &str, tokens: i64, finished: &str| {
        format!(
            "INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, prompt_tokens, \
             created_at, finished_at) VALUES ('{}', '{thread}', '{}', '{}', '{status}', 'x', \
             {tokens}, {at}, {finished})",
            ars_domain::RunId::new(),
            alice.agent.id,
            alice.user.id
        )
    };
    // A second active run collides with the first on the partial unique index; finished runs
    // do not count.
    assert_conflict(store, &run(&busy.id, "running", 0, "NULL")).await;
    assert_eq!(
        store
            .execute_raw(&run(&busy.id, "success", 0, at))
            .await
            .unwrap(),
        1
    );
    assert_invalid(store, &run(&idle.id, "paused", 0, at)).await;
    // Finished exactly when terminal.
    assert_invalid(store, &run(&idle.id, "success", 0, "NULL")).await;
    assert_invalid(store, &run(&idle.id, "pending", 0, at)).await;
    assert_invalid(store, &run(&idle.id, "running", -1, "NULL")).await;
    assert_eq!(store.active_run(&idle.id).await.unwrap(), None);
}
