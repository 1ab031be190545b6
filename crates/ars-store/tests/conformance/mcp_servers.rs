//! MCP servers: round trips with sealed secrets kept as written, unique slugs, updates that
//! keep the slug, shares, deletion, and the list filter agreeing with `Caller::can_view`.

use std::collections::BTreeMap;

use ars_domain::mcp_server::{HttpTransport, StdioTransport};
use ars_domain::{
    Caller, McpServerFields, McpServerId, McpTransport, McpValue, Role, Sealed, Visibility,
};
use ars_store::test_support::RawSql;
use ars_store::{Bound, Deleted, McpServerFilter, Store, StoreError};

use crate::fixtures::{shares, user, wide_shares};

fn stdio(slug: &str) -> McpServerFields {
    McpServerFields {
        slug: slug.into(),
        name: format!("Server {slug}"),
        description: "读写文件 / reads files".into(),
        transport: McpTransport::Stdio(StdioTransport {
            command: "npx".into(),
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-filesystem".into(),
            ],
            env: BTreeMap::from([
                ("LOG_LEVEL".into(), McpValue::Plain("debug".into())),
                (
                    "API_TOKEN".into(),
                    McpValue::Secret(Sealed::from_stored("v1.key1.sealed-bytes".into())),
                ),
            ]),
            cwd: Some("/home/gem/user-data".into()),
            network: false,
        }),
        enabled_tools: Some(vec!["read_text_file".into(), "write_file".into()]),
        share_config: Default::default(),
    }
}

fn http(slug: &str) -> McpServerFields {
    McpServerFields {
        slug: slug.into(),
        name: format!("Remote {slug}"),
        description: String::new(),
        transport: McpTransport::StreamableHttp(HttpTransport {
            url: "http://127.0.0.1:3001/mcp".into(),
            headers: BTreeMap::from([(
                "authorization".into(),
                McpValue::Secret(Sealed::from_stored("v1.key1.bearer".into())),
            )]),
        }),
        enabled_tools: None,
        share_config: Default::default(),
    }
}

pub async fn check_mcp_servers_round_trip(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let id = McpServerId::new();
    let fields = stdio("files");
    let created = store
        .create_mcp_server(id, &fields, Some(owner.id))
        .await
        .unwrap();
    assert_eq!(created.id, id);
    assert_eq!(created.fields, fields);
    assert_eq!(created.owner_id, Some(owner.id));
    assert_eq!(store.mcp_server(id).await.unwrap().unwrap(), created);
    assert_eq!(
        store.mcp_server_by_slug("files").await.unwrap().unwrap(),
        created
    );
    assert_eq!(store.mcp_server(McpServerId::new()).await.unwrap(), None);
    assert_eq!(store.mcp_server_by_slug("nope").await.unwrap(), None);

    let remote = store
        .create_mcp_server(McpServerId::new(), &http("remote"), None)
        .await
        .unwrap();
    assert_eq!(remote.fields.enabled_tools, None);
    assert_eq!(remote.owner_id, None);
    let all = store
        .list_mcp_servers(McpServerFilter::default())
        .await
        .unwrap();
    let slugs: Vec<&str> = all.iter().map(|s| s.fields.slug.as_str()).collect();
    assert_eq!(slugs, ["files", "remote"]);
}

pub async fn check_mcp_server_slugs_are_unique_and_a_conflict_writes_nothing(store: &dyn Store) {
    let owner = user(store, "owner").await;
    store
        .create_mcp_server(McpServerId::new(), &stdio("fs"), Some(owner.id))
        .await
        .unwrap();
    let again = McpServerFields {
        share_config: shares(Visibility::Users, &[owner.id], &[]),
        ..http("fs")
    };
    let err = store
        .create_mcp_server(McpServerId::new(), &again, Some(owner.id))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict { field: "slug" }),
        "{err:?}"
    );
    let all = store
        .list_mcp_servers(McpServerFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    assert!(matches!(all[0].fields.transport, McpTransport::Stdio(_)));
}

pub async fn check_update_mcp_server_replaces_fields_and_shares_and_keeps_the_slug(
    store: &dyn Store,
) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let id = McpServerId::new();
    let before = store
        .create_mcp_server(id, &stdio("fs"), Some(owner.id))
        .await
        .unwrap();
    let change = McpServerFields {
        slug: "renamed".into(),
        share_config: shares(Visibility::Users, &[friend.id], &[friend.id]),
        ..http("fs")
    };
    let after = store.update_mcp_server(id, &change).await.unwrap();
    assert_eq!(after.fields.slug, "fs", "the slug never changes");
    assert_eq!(after.fields.name, change.name);
    assert_eq!(after.fields.transport, change.transport);
    assert_eq!(after.fields.enabled_tools, None);
    assert_eq!(
        after.fields.share_config,
        change.share_config.clone().normalized()
    );
    assert_eq!(after.owner_id, Some(owner.id));
    assert_eq!(after.created_at, before.created_at);
    assert!(after.updated_at >= before.updated_at);
    assert_eq!(store.mcp_server(id).await.unwrap().unwrap(), after);

    let missing = store.update_mcp_server(McpServerId::new(), &change).await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
    let ghost = McpServerFields {
        share_config: shares(Visibility::Users, &[ars_domain::UserId::new()], &[]),
        ..change
    };
    let unknown = store.update_mcp_server(id, &ghost).await;
    assert!(
        matches!(unknown, Err(StoreError::Invalid(_))),
        "{unknown:?}"
    );
    assert_eq!(store.mcp_server(id).await.unwrap().unwrap(), after);
}

pub async fn check_delete_mcp_server_and_deleting_its_owner<S: Store + RawSql>(store: &S) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let kept = McpServerFields {
        share_config: shares(Visibility::Users, &[friend.id], &[]),
        ..stdio("kept")
    };
    let kept = store
        .create_mcp_server(McpServerId::new(), &kept, Some(owner.id))
        .await
        .unwrap();
    let gone = store
        .create_mcp_server(McpServerId::new(), &http("gone"), Some(owner.id))
        .await
        .unwrap();
    assert_eq!(
        store.delete_mcp_server(gone.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        store.delete_mcp_server(gone.id).await.unwrap(),
        Deleted::NotFound
    );
    assert_eq!(store.mcp_server(gone.id).await.unwrap(), None);

    // A deleted owner leaves the server ownerless; a deleted user leaves its share list.
    for gone in [owner.id, friend.id] {
        let sql = format!("DELETE FROM users WHERE id = '{gone}'");
        assert_eq!(store.execute_raw(&sql).await.unwrap(), 1);
    }
    let orphan = store.mcp_server(kept.id).await.unwrap().unwrap();
    assert_eq!(orphan.owner_id, None);
    assert!(orphan.fields.share_config.user_ids.is_empty());
}

pub async fn check_mcp_server_list_filter_matrix(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let manager = user(store, "manager").await;
    let listed = user(store, "listed").await;
    let stranger = user(store, "stranger").await;
    for visibility in [Visibility::Private, Visibility::Users, Visibility::Public] {
        let fields = McpServerFields {
            share_config: shares(visibility, &[listed.id], &[manager.id]),
            ..http(visibility.as_str())
        };
        store
            .create_mcp_server(McpServerId::new(), &fields, Some(owner.id))
            .await
            .unwrap();
    }
    let unlisted = McpServerFields {
        share_config: shares(Visibility::Users, &[], &[]),
        ..http("users-unlisted")
    };
    store
        .create_mcp_server(McpServerId::new(), &unlisted, Some(owner.id))
        .await
        .unwrap();
    let all = store
        .list_mcp_servers(McpServerFilter::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    let mut seen = BTreeMap::new();
    for viewer in [&owner, &manager, &listed, &stranger] {
        let caller = Caller {
            id: viewer.id,
            role: Role::User,
        };
        let got = store
            .list_mcp_servers(McpServerFilter {
                visible_to: Some(viewer.id),
            })
            .await
            .unwrap();
        let expected: Vec<_> = all
            .iter()
            .filter(|s| caller.can_view(*s))
            .cloned()
            .collect();
        assert_eq!(got, expected, "{}", viewer.username);
        seen.insert(
            viewer.username.clone(),
            got.iter()
                .map(|s| s.fields.slug.clone())
                .collect::<Vec<_>>(),
        );
    }
    // The same rules spelled out, so the check does not rest on `can_view` alone.
    let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        seen["owner"],
        list(&["private", "public", "users", "users-unlisted"])
    );
    assert_eq!(seen["manager"], list(&["private", "public", "users"]));
    assert_eq!(seen["listed"], list(&["public", "users"]));
    assert_eq!(seen["stranger"], list(&["public"]));
}

pub async fn check_mcp_server_schema_rejects_forbidden_rows<S: Store + RawSql>(store: &S) {
    let insert = |slug: &str, kind: &str, transport: &str, visibility: &str| {
        format!(
            "INSERT INTO mcp_servers (id, slug, name, transport_type, transport, visibility, \
             created_at, updated_at) VALUES ('{}', '{slug}', 'n', '{kind}', '{transport}', \
             '{visibility}', '2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00')",
            McpServerId::new()
        )
    };
    let http = r#"{"type": "streamable_http", "url": "http://h/mcp"}"#;
    let fine = insert("raw", "streamable_http", http, "private");
    assert_eq!(store.execute_raw(&fine).await.unwrap(), 1);
    for bad in [
        insert("", "streamable_http", http, "private"),
        insert("sse", "sse", r#"{"type": "sse"}"#, "private"),
        // The repeated type must be the transport's own.
        insert("mixed", "stdio", http, "private"),
        insert("vis", "streamable_http", http, "everyone"),
        insert("raw", "streamable_http", http, "private"),
    ] {
        let result = store.execute_raw(&bad).await;
        assert!(
            matches!(
                result,
                Err(StoreError::Invalid(_) | StoreError::Conflict { .. })
            ),
            "{bad}: {result:?}"
        );
    }
    let stored = store.mcp_server_by_slug("raw").await.unwrap().unwrap();
    assert!(matches!(
        stored.fields.transport,
        McpTransport::StreamableHttp(_)
    ));
}

/// Sessions of `/api/mcp`: saved (replacing), read back, expired by age with their calls, and
/// a call's run found from its session and request until it is forgotten.
pub async fn check_mcp_sessions_and_calls(store: &dyn Store) {
    use crate::fixtures::{new_run, owner, root_thread};
    let now = ars_domain::time::now();
    let long_ago = now - chrono::Duration::days(30);
    store
        .save_mcp_session("s-1", r#"{"initialize_params":{}}"#, long_ago)
        .await
        .unwrap();
    assert_eq!(
        store.mcp_session("s-1").await.unwrap().as_deref(),
        Some(r#"{"initialize_params":{}}"#)
    );
    // Saving again replaces the state.
    store
        .save_mcp_session("s-1", r#"{"v":2}"#, long_ago)
        .await
        .unwrap();
    assert_eq!(
        store.mcp_session("s-1").await.unwrap().as_deref(),
        Some(r#"{"v":2}"#)
    );
    assert_eq!(store.mcp_session("unknown").await.unwrap(), None);

    // A call in the session, found by session and request id.
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "mcp").await;
    let run = store.create_run(&new_run(&thread, "hi")).await.unwrap();
    store.save_mcp_call("s-1", "7", run.id).await.unwrap();
    assert_eq!(store.mcp_call_run("s-1", "7").await.unwrap(), Some(run.id));
    assert_eq!(store.mcp_call_run("s-1", "8").await.unwrap(), None);
    assert_eq!(store.mcp_call_run("s-2", "7").await.unwrap(), None);
    // A call needs its session and its run.
    let orphan = store.save_mcp_call("no-session", "1", run.id).await;
    assert!(matches!(orphan, Err(StoreError::Invalid(_))), "{orphan:?}");
    store.delete_mcp_call("s-1", "7").await.unwrap();
    assert_eq!(store.mcp_call_run("s-1", "7").await.unwrap(), None);

    // Deleting a session takes its calls.
    store.save_mcp_call("s-1", "9", run.id).await.unwrap();
    store.delete_mcp_session("s-1").await.unwrap();
    assert_eq!(store.mcp_session("s-1").await.unwrap(), None);
    assert_eq!(store.mcp_call_run("s-1", "9").await.unwrap(), None);

    // Sessions opened before the expiry given with a save go, with their calls.
    store.save_mcp_session("old", "{}", long_ago).await.unwrap();
    store.save_mcp_call("old", "1", run.id).await.unwrap();
    store
        .save_mcp_session("new", "{}", now + chrono::Duration::seconds(5))
        .await
        .unwrap();
    assert_eq!(store.mcp_session("old").await.unwrap(), None);
    assert_eq!(store.mcp_call_run("old", "1").await.unwrap(), None);
    assert!(store.mcp_session("new").await.unwrap().is_some());

    // A session takes an owner once; saving its state again keeps the owner.
    let bob = owner(store, "bob").await;
    assert_eq!(store.mcp_session_owner("new").await.unwrap(), None);
    assert_eq!(
        store.bind_mcp_session("new", alice.user.id).await.unwrap(),
        Bound::Bound
    );
    assert_eq!(
        store.mcp_session_owner("new").await.unwrap(),
        Some(alice.user.id)
    );
    assert_eq!(
        store.bind_mcp_session("new", bob.user.id).await.unwrap(),
        Bound::Refused
    );
    assert_eq!(
        store.bind_mcp_session("new", alice.user.id).await.unwrap(),
        Bound::Refused
    );
    assert_eq!(
        store
            .bind_mcp_session("unknown", alice.user.id)
            .await
            .unwrap(),
        Bound::Refused
    );
    store
        .save_mcp_session("new", r#"{"v":3}"#, long_ago)
        .await
        .unwrap();
    assert_eq!(
        store.mcp_session_owner("new").await.unwrap(),
        Some(alice.user.id)
    );
    assert_eq!(store.mcp_session_owner("unknown").await.unwrap(), None);
}

/// Every read of an MCP server (by id, by slug, listed) answers exactly its share rows.
pub async fn check_every_read_of_an_mcp_server_answers_exactly_its_shares(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (many, listed, _) = wide_shares(store, 30, 1).await;
    let wide = McpServerFields {
        share_config: many.clone(),
        ..stdio("wide")
    };
    let wide = store
        .create_mcp_server(McpServerId::new(), &wide, Some(owner.id))
        .await
        .unwrap();
    assert_eq!(wide.fields.share_config, many.clone().normalized());
    store
        .create_mcp_server(McpServerId::new(), &stdio("bare"), Some(owner.id))
        .await
        .unwrap();
    assert_eq!(store.mcp_server(wide.id).await.unwrap(), Some(wide.clone()));
    assert_eq!(
        store.mcp_server_by_slug("wide").await.unwrap(),
        Some(wide.clone())
    );
    let all = store
        .list_mcp_servers(McpServerFilter { visible_to: None })
        .await
        .unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1], wide);
    assert_eq!(all[0].fields.share_config, Default::default());
    let theirs = store
        .list_mcp_servers(McpServerFilter {
            visible_to: Some(listed[29]),
        })
        .await
        .unwrap();
    assert_eq!(theirs, vec![wide]);
}
