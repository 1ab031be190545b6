//! Agent rows: create, read, update, delete, the built-in subagent and the one default.

use ars_domain::ids::GENERAL_PURPOSE_ID;
use ars_domain::{
    AgentConfig, AgentContext, AgentId, Backend, ModelConfig, ShareConfig, UserId, Visibility,
};
use ars_store::test_support::RawSql;
use ars_store::{Deleted, Store, StoreError};

use crate::fixtures::{draft, everything, shares, sorted, subagent_draft, user};

fn rich_config() -> AgentConfig {
    AgentConfig {
        context: AgentContext {
            model: Some(ModelConfig {
                provider: "scripted".into(),
                name: "echo".into(),
                temperature: Some(0.25),
                max_tokens: Some(512),
                top_p: None,
                script: Some(serde_json::json!([{"say": "hi"}])),
            }),
            system_prompt: Some("Be brief.".into()),
            tools: Some(vec!["shell".into(), "read_file".into()]),
            subagents: Some(vec![]),
            ..AgentContext::default()
        },
    }
}

pub async fn check_agent_create_and_lookup(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let manager = user(store, "manager").await;
    let (l1, l2) = (user(store, "l1").await, user(store, "l2").await);

    let mut writer = draft("writer");
    writer.description = "Writes things.".into();
    writer.config = rich_config();
    // Unsorted, with a duplicate: the store keeps each share once and returns lists sorted.
    writer.share_config = shares(Visibility::Users, &[l2.id, l1.id, l2.id], &[manager.id]);
    let created = store.create_agent(&writer, Some(owner.id)).await.unwrap();

    assert_eq!(created.slug, "writer");
    assert_eq!(created.name, "Agent writer");
    assert_eq!(created.description, "Writes things.");
    assert_eq!(created.backend_id, Backend::Default);
    assert!(!created.is_subagent);
    assert_eq!(created.config_json, rich_config());
    assert_eq!(created.share_config.visibility, Visibility::Users);
    assert_eq!(created.share_config.user_ids, sorted(&[l1.id, l2.id]));
    assert_eq!(created.share_config.manager_ids, vec![manager.id]);
    assert_eq!(created.owner_id, Some(owner.id));
    assert!(!created.is_default && !created.is_builtin);
    assert_eq!(created.created_at, created.updated_at);

    assert_eq!(
        store.agent(created.id).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(store.agent_by_slug("writer").await.unwrap(), Some(created));
    assert_eq!(store.agent(AgentId::new()).await.unwrap(), None);
    assert_eq!(store.agent_by_slug("nope").await.unwrap(), None);

    let helper = store
        .create_agent(&subagent_draft("helper"), None)
        .await
        .unwrap();
    assert_eq!(helper.backend_id, Backend::SubAgent);
    assert!(helper.is_subagent);
    assert_eq!(helper.owner_id, None);
    assert_eq!(helper.share_config, ShareConfig::default());
    assert_eq!(store.agent(helper.id).await.unwrap(), Some(helper));
}

pub async fn check_duplicate_slug_conflicts_and_writes_nothing(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let other = user(store, "other").await;
    let mut alpha = draft("alpha");
    alpha.is_default = true;
    alpha.share_config = shares(Visibility::Users, &[other.id], &[]);
    let alpha = store.create_agent(&alpha, Some(owner.id)).await.unwrap();
    let before = store.list_agents(everything()).await.unwrap();

    let mut clash = draft("alpha");
    clash.is_default = true;
    clash.share_config = shares(Visibility::Public, &[owner.id], &[other.id]);
    let result = store.create_agent(&clash, Some(other.id)).await;
    assert!(
        matches!(result, Err(StoreError::Conflict { field: "slug" })),
        "{result:?}"
    );
    // Nothing half-written: no new row or share, and the default did not move.
    assert_eq!(store.list_agents(everything()).await.unwrap(), before);
    assert_eq!(store.default_agent().await.unwrap(), Some(alpha.clone()));

    let beta = store
        .create_agent(&draft("beta"), Some(owner.id))
        .await
        .unwrap();
    let before = store.list_agents(everything()).await.unwrap();
    let mut rename = draft("alpha");
    rename.is_default = true;
    rename.share_config = shares(Visibility::Users, &[other.id], &[other.id]);
    let result = store.update_agent(beta.id, &rename).await;
    assert!(
        matches!(result, Err(StoreError::Conflict { field: "slug" })),
        "{result:?}"
    );
    assert_eq!(store.list_agents(everything()).await.unwrap(), before);
    assert_eq!(store.agent(beta.id).await.unwrap(), Some(beta));
    assert_eq!(store.default_agent().await.unwrap(), Some(alpha));
}

pub async fn check_unknown_share_user_is_invalid(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let mut ghostly = draft("ghostly");
    ghostly.share_config = shares(Visibility::Users, &[owner.id, UserId::new()], &[]);
    let result = store.create_agent(&ghostly, Some(owner.id)).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.agent_by_slug("ghostly").await.unwrap(), None);

    let unowned = store
        .create_agent(&draft("unowned"), Some(UserId::new()))
        .await;
    assert!(
        matches!(unowned, Err(StoreError::Invalid(_))),
        "{unowned:?}"
    );

    let kept = store
        .create_agent(&draft("kept"), Some(owner.id))
        .await
        .unwrap();
    let mut update = draft("kept-renamed");
    update.share_config = shares(Visibility::Private, &[], &[UserId::new()]);
    let result = store.update_agent(kept.id, &update).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.agent(kept.id).await.unwrap(), Some(kept));
}

pub async fn check_update_replaces_fields_and_shares(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (m1, m2) = (user(store, "m1").await, user(store, "m2").await);
    let (l1, l2) = (user(store, "l1").await, user(store, "l2").await);
    let mut original = draft("original");
    original.share_config = shares(Visibility::Users, &[l1.id], &[m1.id]);
    let original = store.create_agent(&original, Some(owner.id)).await.unwrap();

    let mut next = draft("renamed");
    next.name = "Renamed".into();
    next.description = "Now public.".into();
    next.config = rich_config();
    next.share_config = shares(Visibility::Public, &[l2.id], &[m2.id, m1.id]);
    let updated = store.update_agent(original.id, &next).await.unwrap();

    assert_eq!(updated.slug, "renamed");
    assert_eq!(updated.name, "Renamed");
    assert_eq!(updated.description, "Now public.");
    assert_eq!(updated.config_json, rich_config());
    assert_eq!(updated.share_config.visibility, Visibility::Public);
    assert_eq!(updated.share_config.user_ids, vec![l2.id]);
    assert_eq!(updated.share_config.manager_ids, sorted(&[m1.id, m2.id]));
    // What an update never touches.
    assert_eq!(updated.id, original.id);
    assert_eq!(updated.owner_id, Some(owner.id));
    assert_eq!(updated.created_at, original.created_at);
    assert!(!updated.is_builtin);
    assert!(updated.updated_at >= original.updated_at);
    assert_eq!(
        store.agent(original.id).await.unwrap(),
        Some(updated.clone())
    );
    assert_eq!(store.agent_by_slug("original").await.unwrap(), None);

    // The backend decides is_subagent; emptied share lists stay empty.
    let sub = store
        .update_agent(original.id, &subagent_draft("renamed"))
        .await
        .unwrap();
    assert_eq!((sub.backend_id, sub.is_subagent), (Backend::SubAgent, true));
    assert_eq!(sub.share_config, ShareConfig::default());
    assert_eq!(store.agent(original.id).await.unwrap(), Some(sub));

    // A built-in row stays built-in and system-owned when an admin edits it.
    let mut gp = store.agent(GENERAL_PURPOSE_ID).await.unwrap().unwrap();
    let mut gp_draft = subagent_draft(&gp.slug);
    gp_draft.name = "General purpose (edited)".into();
    gp_draft.description = gp.description.clone();
    gp_draft.share_config = shares(Visibility::Public, &[], &[]);
    let edited = store.update_agent(gp.id, &gp_draft).await.unwrap();
    gp.name = gp_draft.name;
    gp.updated_at = edited.updated_at;
    assert_eq!(edited, gp);
}

pub async fn check_update_missing_agent_is_not_found(store: &dyn Store) {
    let result = store.update_agent(AgentId::new(), &draft("ghost")).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    let mut default = draft("ghost");
    default.is_default = true;
    let existing = store.create_agent(&draft("real"), None).await.unwrap();
    store.set_default_agent(existing.id).await.unwrap();
    let result = store.update_agent(AgentId::new(), &default).await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
    // The default cleared on the way was rolled back with the rest.
    assert_eq!(
        store.default_agent().await.unwrap().map(|a| a.id),
        Some(existing.id)
    );
}

pub async fn check_delete_cascades_shares<S: Store + RawSql>(store: &S) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let mut doomed = draft("doomed");
    doomed.share_config = shares(Visibility::Users, &[friend.id], &[friend.id]);
    let doomed = store.create_agent(&doomed, Some(owner.id)).await.unwrap();
    let touch = format!(
        "UPDATE agent_shares SET role = role WHERE agent_id = '{}'",
        doomed.id
    );
    assert_eq!(store.execute_raw(&touch).await.unwrap(), 2);

    assert_eq!(
        store.delete_agent(doomed.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(store.agent(doomed.id).await.unwrap(), None);
    assert_eq!(
        store.execute_raw(&touch).await.unwrap(),
        0,
        "shares cascade"
    );
    assert_eq!(
        store.delete_agent(doomed.id).await.unwrap(),
        Deleted::NotFound
    );
    // The slug is free again.
    store.create_agent(&draft("doomed"), None).await.unwrap();
}

pub async fn check_general_purpose_is_built_in(store: &dyn Store) {
    let gp = store.agent(GENERAL_PURPOSE_ID).await.unwrap().unwrap();
    assert_eq!(gp.id.to_string(), "00000000-0000-7000-8000-000000000001");
    assert_eq!(gp.slug, ars_domain::agent::GENERAL_PURPOSE_SLUG);
    assert_eq!(gp.name, "General purpose");
    assert!(gp.description.starts_with("Built-in subagent") && gp.description.ends_with('.'));
    assert_eq!(gp.backend_id, Backend::SubAgent);
    assert!(gp.is_subagent);
    assert_eq!(gp.config_json, AgentConfig::default());
    assert_eq!(gp.config_json.context, AgentContext::default());
    assert_eq!(gp.share_config, shares(Visibility::Public, &[], &[]));
    assert_eq!(gp.owner_id, None);
    assert!(gp.is_builtin);
    assert!(!gp.is_default);
    assert_eq!(
        store.agent_by_slug("general-purpose").await.unwrap(),
        Some(gp.clone())
    );
    assert_eq!(store.list_agents(everything()).await.unwrap(), vec![gp]);
    assert_eq!(store.default_agent().await.unwrap(), None);
}

pub async fn check_only_one_default(store: &dyn Store) {
    let defaults = || async {
        let all = store.list_agents(everything()).await.unwrap();
        all.into_iter()
            .filter(|a| a.is_default)
            .map(|a| a.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(store.default_agent().await.unwrap(), None);

    let mut first = draft("first");
    first.is_default = true;
    let first = store.create_agent(&first, None).await.unwrap();
    assert!(first.is_default);
    assert_eq!(store.default_agent().await.unwrap(), Some(first.clone()));

    let mut second = draft("second");
    second.is_default = true;
    let second = store.create_agent(&second, None).await.unwrap();
    assert_eq!(defaults().await, vec![second.id]);
    let first_now = store.agent(first.id).await.unwrap().unwrap();
    assert!(!first_now.is_default);
    assert!(first_now.updated_at >= first.updated_at);

    let third = store.create_agent(&draft("third"), None).await.unwrap();
    let moved = store.set_default_agent(third.id).await.unwrap();
    assert!(moved.is_default);
    assert_eq!(defaults().await, vec![third.id]);
    assert_eq!(store.default_agent().await.unwrap(), Some(moved));
    store.set_default_agent(third.id).await.unwrap();
    assert_eq!(defaults().await, vec![third.id]);

    let mut first_again = draft("first");
    first_again.is_default = true;
    store.update_agent(first.id, &first_again).await.unwrap();
    assert_eq!(defaults().await, vec![first.id]);
    store.update_agent(first.id, &draft("first")).await.unwrap();
    assert_eq!(store.default_agent().await.unwrap(), None);
    store.set_default_agent(second.id).await.unwrap();

    let missing = store.set_default_agent(AgentId::new()).await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
    // A subagent is never the default, and a refused write keeps the previous default.
    let sub = store.set_default_agent(GENERAL_PURPOSE_ID).await;
    assert!(matches!(sub, Err(StoreError::Invalid(_))), "{sub:?}");
    let mut sub_default = subagent_draft("sub-default");
    sub_default.is_default = true;
    let created = store.create_agent(&sub_default, None).await;
    assert!(
        matches!(created, Err(StoreError::Invalid(_))),
        "{created:?}"
    );
    assert_eq!(store.agent_by_slug("sub-default").await.unwrap(), None);
    let mut third_sub = subagent_draft("third");
    third_sub.is_default = true;
    let updated = store.update_agent(third.id, &third_sub).await;
    assert!(
        matches!(updated, Err(StoreError::Invalid(_))),
        "{updated:?}"
    );
    assert_eq!(defaults().await, vec![second.id]);
}

/// Writers racing to set the default all succeed, and one default remains. On SQLite they
/// queue on the write lock; on PostgreSQL they must not both find "no other default" to clear.
pub async fn check_concurrent_default_changes(store: &dyn Store) {
    let mut ids = Vec::new();
    for slug in ["c1", "c2", "c3", "c4"] {
        ids.push(store.create_agent(&draft(slug), None).await.unwrap().id);
    }
    let default_draft = |slug: &str| ars_domain::AgentDraft {
        is_default: true,
        ..draft(slug)
    };
    let (d3, d5, d6) = (
        default_draft("c3"),
        default_draft("c5"),
        default_draft("c6"),
    );
    let (a, b, c, d, e, f) = tokio::join!(
        store.set_default_agent(ids[0]),
        store.create_agent(&d5, None),
        store.set_default_agent(ids[1]),
        store.update_agent(ids[2], &d3),
        store.create_agent(&d6, None),
        store.set_default_agent(ids[3]),
    );
    for result in [a, b, c, d, e, f] {
        assert!(result.is_ok(), "{result:?}");
    }
    let all = store.list_agents(everything()).await.unwrap();
    assert_eq!(all.iter().filter(|a| a.is_default).count(), 1);
    let users = tokio::join!(user(store, "u1"), user(store, "u2"), user(store, "u3"));
    assert_eq!(store.count_users().await.unwrap(), 3, "{users:?}");
}
