//! Stored model providers and the model settings: create, read, update, delete, the default
//! model following a rename or a deletion, and the version every change raises.

use std::collections::BTreeMap;

use ars_domain::{
    ModelProviderFields, ModelProviderId, ModelProviderKind, RunErrorCode, RunOutcome, RunStatus,
    Sealed, Usage,
};
use ars_store::test_support::RawSql;
use ars_store::{FinishedRun, Store, StoreError};

use crate::fixtures::{draft, new_run, owner, root_thread, shares, user, wide_shares};

fn sealed(text: &str) -> Sealed {
    Sealed::from_stored(format!("v1.0000abcd.{text}"))
}

fn fields(name: &str) -> ModelProviderFields {
    ModelProviderFields {
        name: name.to_string(),
        kind: ModelProviderKind::OpenaiCompatible,
        base_url: "http://127.0.0.1:11434/v1".into(),
        api_key: Some(sealed("key")),
        headers: BTreeMap::from([
            ("x-org".to_string(), sealed("org")),
            ("x-zone".to_string(), sealed("zone")),
        ]),
        models: vec!["llama3.1:8b".into(), "qwen2.5:7b".into()],
        prices: None,
    }
}

pub async fn check_model_providers_round_trip(store: &dyn Store) {
    let admin = user(store, "admin").await;
    let before = store.model_settings().await.unwrap();
    assert_eq!(before.default_model, None);
    let id = ModelProviderId::new();
    let created = store
        .create_model_provider(id, &fields("local"), Some(admin.id))
        .await
        .unwrap();
    assert_eq!(created.id, id);
    assert_eq!(created.fields, fields("local"));
    assert_eq!(created.created_by, Some(admin.id));
    assert_eq!(created.models_refreshed_at, None);
    assert_eq!(created.created_at, created.updated_at);
    assert_eq!(
        store.model_provider(id).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        store.model_provider(ModelProviderId::new()).await.unwrap(),
        None
    );
    let version = store.model_settings_version().await.unwrap();
    assert!(version > before.version, "a create raises the version");

    // Listed by name, in byte order.
    for name in ["zeta", "alpha"] {
        store
            .create_model_provider(ModelProviderId::new(), &fields(name), None)
            .await
            .unwrap();
    }
    let names: Vec<String> = store
        .list_model_providers()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.fields.name)
        .collect();
    assert_eq!(names, ["alpha", "local", "zeta"]);
}

pub async fn check_model_provider_names_are_unique(store: &dyn Store) {
    store
        .create_model_provider(ModelProviderId::new(), &fields("local"), None)
        .await
        .unwrap();
    let version = store.model_settings_version().await.unwrap();
    let taken = store
        .create_model_provider(ModelProviderId::new(), &fields("local"), None)
        .await;
    assert!(
        matches!(taken, Err(StoreError::Conflict { field: "name" })),
        "{taken:?}"
    );
    assert_eq!(
        store.model_settings_version().await.unwrap(),
        version,
        "a refused write raises nothing"
    );
    let other = store
        .create_model_provider(ModelProviderId::new(), &fields("other"), None)
        .await
        .unwrap();
    let renamed = store
        .update_model_provider(other.id, &fields("local"))
        .await;
    assert!(matches!(
        renamed,
        Err(StoreError::Conflict { field: "name" })
    ));
    assert_eq!(store.list_model_providers().await.unwrap().len(), 2);
}

pub async fn check_update_model_provider_replaces_fields(store: &dyn Store) {
    let created = store
        .create_model_provider(ModelProviderId::new(), &fields("local"), None)
        .await
        .unwrap();
    let version = store.model_settings_version().await.unwrap();
    let refreshed_at = chrono::DateTime::parse_from_rfc3339("2025-06-01T10:00:00.123456Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let listed = vec!["a".to_string(), "b".to_string()];
    let refreshed = store
        .set_model_provider_models(created.id, &listed, refreshed_at)
        .await
        .unwrap();
    assert_eq!(refreshed.fields.models, listed);
    assert_eq!(refreshed.models_refreshed_at, Some(refreshed_at));
    assert!(store.model_settings_version().await.unwrap() > version);

    // Same models: the refresh time stays; other models: it goes.
    let mut changed = refreshed.fields.clone();
    changed.base_url = "https://api.example.com/v1".into();
    changed.api_key = None;
    changed.headers.remove("x-zone");
    let updated = store
        .update_model_provider(created.id, &changed)
        .await
        .unwrap();
    assert_eq!(updated.fields, changed);
    assert_eq!(updated.models_refreshed_at, Some(refreshed_at));
    assert_eq!(updated.created_at, created.created_at);
    assert!(updated.updated_at >= created.updated_at);
    changed.models = vec!["typed".into()];
    let retyped = store
        .update_model_provider(created.id, &changed)
        .await
        .unwrap();
    assert_eq!(retyped.models_refreshed_at, None);
    assert_eq!(
        store.model_provider(created.id).await.unwrap(),
        Some(retyped)
    );

    let gone = ModelProviderId::new();
    assert!(matches!(
        store.update_model_provider(gone, &changed).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        store
            .set_model_provider_models(gone, &listed, refreshed_at)
            .await,
        Err(StoreError::NotFound)
    ));
}

pub async fn check_default_model_follows_renames_and_deletions(store: &dyn Store) {
    let local = store
        .create_model_provider(ModelProviderId::new(), &fields("local"), None)
        .await
        .unwrap();
    // `local.x` shares a prefix with `local` but is another provider.
    let dotted = store
        .create_model_provider(ModelProviderId::new(), &fields("local.x"), None)
        .await
        .unwrap();
    let version = store.model_settings_version().await.unwrap();
    let settings = store
        .set_default_model(Some("local/meta-llama/Llama-3-8B"))
        .await
        .unwrap();
    assert_eq!(
        settings.default_model.as_deref(),
        Some("local/meta-llama/Llama-3-8B")
    );
    assert!(settings.version > version);
    assert!(settings.updated_at.is_some());
    assert_eq!(store.model_settings().await.unwrap(), settings);

    // Another provider's rename or deletion leaves it alone.
    let mut renamed = dotted.fields.clone();
    renamed.name = "local.y".into();
    store
        .update_model_provider(dotted.id, &renamed)
        .await
        .unwrap();
    let deleted = store.delete_model_provider(dotted.id).await.unwrap();
    assert_eq!(deleted.map(|d| d.default_model_cleared), Some(false));
    assert_eq!(
        store
            .model_settings()
            .await
            .unwrap()
            .default_model
            .as_deref(),
        Some("local/meta-llama/Llama-3-8B")
    );

    // Its own provider's rename carries it along; its deletion clears it.
    let mut renamed = local.fields.clone();
    renamed.name = "ollama".into();
    store
        .update_model_provider(local.id, &renamed)
        .await
        .unwrap();
    assert_eq!(
        store
            .model_settings()
            .await
            .unwrap()
            .default_model
            .as_deref(),
        Some("ollama/meta-llama/Llama-3-8B")
    );
    let before = store.model_settings_version().await.unwrap();
    let deleted = store.delete_model_provider(local.id).await.unwrap();
    assert_eq!(deleted.map(|d| d.default_model_cleared), Some(true));
    let after = store.model_settings().await.unwrap();
    assert_eq!(after.default_model, None);
    assert!(after.version > before);
    assert_eq!(store.model_provider(local.id).await.unwrap(), None);
    assert_eq!(store.delete_model_provider(local.id).await.unwrap(), None);
    assert_eq!(
        store.model_settings_version().await.unwrap(),
        after.version,
        "deleting nothing raises nothing"
    );

    // A default of a provider that is not stored (configured, `scripted`) is kept as given.
    store
        .set_default_model(Some("scripted/demo"))
        .await
        .unwrap();
    store.set_default_model(None).await.unwrap();
    assert_eq!(store.model_settings().await.unwrap().default_model, None);
}

pub async fn check_model_provider_schema_rejects_forbidden_rows<S: Store + RawSql>(store: &S) {
    let insert = |name: &str, kind: &str, url: &str| {
        format!(
            "INSERT INTO model_providers (id, name, kind, base_url, created_at, updated_at) \
             VALUES ('{}', '{name}', '{kind}', '{url}', '2025-01-01T00:00:00+00:00', \
             '2025-01-01T00:00:00+00:00')",
            ModelProviderId::new()
        )
    };
    let fine = insert("raw", "openai-compatible", "http://h/v1");
    assert_eq!(store.execute_raw(&fine).await.unwrap(), 1);
    for bad in [
        insert("", "openai-compatible", "http://h/v1"),
        insert("k", "anthropic", "http://h/v1"),
        insert("u", "openai-compatible", "ftp://h/v1"),
        "UPDATE model_settings SET default_model = 'no-slash'".to_string(),
        "INSERT INTO model_settings (id, version) VALUES (2, 0)".to_string(),
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
    // A deleted creator leaves the provider without one.
    let admin = user(store, "gone").await;
    let created = store
        .create_model_provider(ModelProviderId::new(), &fields("mine"), Some(admin.id))
        .await
        .unwrap();
    store
        .execute_raw(&format!("DELETE FROM users WHERE id = '{}'", admin.id))
        .await
        .unwrap();
    let stored = store.model_provider(created.id).await.unwrap().unwrap();
    assert_eq!(stored.created_by, None);
}

pub async fn check_failed_runs_keep_their_error_code(store: &dyn Store) {
    let alice = owner(store, "alice").await;
    let thread = root_thread(store, &alice, "t").await;
    let run = store.create_run(&new_run(&thread, "hi")).await.unwrap();
    assert_eq!(run.error_code, None);
    let outcome = RunOutcome::Error {
        message: "no model configured: …".into(),
        code: Some(RunErrorCode::NoModelConfigured),
        usage: Usage::default(),
    };
    let FinishedRun::Ended(ended) = store.finish_run(run.id, &outcome).await.unwrap() else {
        panic!("the first end is written");
    };
    assert_eq!(ended.status, RunStatus::Error);
    assert_eq!(ended.error_code, Some(RunErrorCode::NoModelConfigured));
    assert_eq!(
        store.run(run.id).await.unwrap().unwrap().error_code,
        Some(RunErrorCode::NoModelConfigured)
    );
}

/// What a run starts from: its agent, shares included, and the providers' version, read in one
/// statement — the version as every change to the providers raises it.
pub async fn check_an_agent_is_read_for_a_run_with_the_providers_version(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (share_config, _, _) = wide_shares(store, 2, 1).await;
    let agent = store
        .create_agent(
            &ars_domain::AgentDraft {
                share_config,
                ..draft("helper")
            },
            Some(owner.id),
        )
        .await
        .unwrap();
    let (read, version) = store.agent_for_run(agent.id).await.unwrap().unwrap();
    assert_eq!(
        read, agent,
        "the agent as `agent` reads it, shares included"
    );
    assert_eq!(read, store.agent(agent.id).await.unwrap().unwrap());
    assert_eq!(version, store.model_settings_version().await.unwrap());

    store
        .create_model_provider(ModelProviderId::new(), &fields("local"), None)
        .await
        .unwrap();
    let (_, raised) = store.agent_for_run(agent.id).await.unwrap().unwrap();
    assert!(
        raised > version,
        "a provider's change raises the version read with the agent"
    );
    assert_eq!(raised, store.model_settings_version().await.unwrap());
    store
        .set_default_model(Some("local/qwen2.5:7b"))
        .await
        .unwrap();
    let (_, again) = store.agent_for_run(agent.id).await.unwrap().unwrap();
    assert!(again > raised, "so does a new default model");

    // A private agent without shares reads as one.
    let private = store
        .create_agent(
            &ars_domain::AgentDraft {
                share_config: shares(ars_domain::Visibility::Private, &[], &[]),
                ..draft("private")
            },
            Some(owner.id),
        )
        .await
        .unwrap();
    let (read, _) = store.agent_for_run(private.id).await.unwrap().unwrap();
    assert_eq!(read, private);
    assert!(read.share_config.user_ids.is_empty());

    assert_eq!(
        store
            .agent_for_run(ars_domain::AgentId::new())
            .await
            .unwrap(),
        None,
        "no such agent"
    );
}
