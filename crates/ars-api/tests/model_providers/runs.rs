//! Providers in runs: changes apply to the next run on every instance, the default model, a run
//! without any model, deleting a provider agents use, and agent writes naming stored providers.

use super::*;

#[tokio::test]
async fn changes_apply_to_the_next_run_on_every_instance_without_a_restart() {
    let a = FakeOpenAi::start("A", Some(KEY_A), &["m"]).await;
    let b = FakeOpenAi::start("B", Some(KEY_B), &["m"]).await;
    let app = fast_app().await;
    let key = app.secret_key.clone();
    // A second instance on the same database, with the same server key.
    let other = TestApp::spawn_setup(Setup {
        store: Some(app.store.clone()),
        secret_key: Some(key),
        models: ModelsConfig {
            openai: fast(),
            ..ModelsConfig::default()
        },
        ..Setup::default()
    })
    .await;

    let id = create(&app, provider("lab", &a.base_url, Some(KEY_A))).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    agent(
        &app,
        "labbot",
        Some(json!({"provider": "lab", "name": "m"})),
    )
    .await;
    let done = run(&app, "labbot").await;
    assert_eq!(
        (done["status"].clone(), done["output"].clone()),
        (json!("success"), json!("reply from A")),
        "{done}"
    );
    let done = run(&other, "labbot").await;
    assert_eq!(
        done["output"], "reply from A",
        "the other instance sees it: {done}"
    );
    assert_eq!(
        a.seen().last().unwrap().headers["authorization"],
        format!("Bearer {KEY_A}").as_str()
    );

    // Repointed (on the other instance) at B with B's key: the next runs on both go to B.
    let r = other
        .patch(
            &format!("/api/model-providers/{id}"),
            &other.admin,
            json!({"base_url": b.base_url, "api_key": KEY_B}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    for instance in [&app, &other] {
        let done = run(instance, "labbot").await;
        assert_eq!(done["output"], "reply from B", "{done}");
    }
    assert_eq!(
        b.seen().last().unwrap().headers["authorization"],
        format!("Bearer {KEY_B}").as_str()
    );

    // A wrong key now: the run fails with the provider's refusal and its code.
    app.patch(
        &format!("/api/model-providers/{id}"),
        &app.admin,
        json!({"api_key": KEY_A}),
    )
    .await;
    let done = run(&other, "labbot").await;
    assert_eq!(
        (done["status"].clone(), done["error_code"].clone()),
        (json!("error"), json!("model_bad_key")),
        "{done}"
    );
}

#[tokio::test]
async fn the_default_model_setting_applies_to_agents_without_a_model() {
    let fake = FakeOpenAi::start("D", None, &["m"]).await;
    let mut setup = Setup::default();
    setup.models.openai = fast();
    setup.api.defaults.base.model = Some(ars_models::parse_model_ref("scripted/demo").unwrap());
    let app = TestApp::spawn_setup(setup).await;
    let t = &app.admin;
    let r = app.get("/api/model-settings", t).await;
    assert_eq!(
        r.body,
        json!({"default_model": "scripted/demo", "source": "config", "config_default_model": "scripted/demo"})
    );

    create(&app, provider("lab", &fake.base_url, None)).await;
    let bare = agent(&app, "bare", None).await;
    for (body, field) in [
        (json!({"default_model": "nowhere/m"}), "default_model"),
        (json!({"default_model": "no-slash"}), "default_model"),
        (json!({"default_model": "lab/"}), "default_model"),
        (json!({"default_model": 3}), "default_model"),
        (json!({"default_model": "lab/m", "x": 1}), "x"),
    ] {
        let r = app.put("/api/model-settings", t, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some(field)),
            "{body}: {}",
            r.body
        );
    }
    let r = app
        .put("/api/model-settings", t, json!({"default_model": "lab/m"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"default_model": "lab/m", "source": "database", "config_default_model": "scripted/demo"})
    );
    let catalog = app.get("/api/models", t).await.body;
    assert_eq!(
        catalog["default_model"],
        json!({"provider": "lab", "name": "m"})
    );
    assert_eq!(catalog["default_model_source"], "database");
    let resolved = app
        .get(
            &format!(
                "/api/agent/{}/resolved-context",
                bare["id"].as_str().unwrap()
            ),
            t,
        )
        .await;
    assert_eq!(
        resolved.body["model"]["provider"], "lab",
        "{}",
        resolved.body
    );
    assert_eq!(run(&app, "bare").await["output"], "reply from D");

    // Unset: the configuration's default applies again.
    let r = app
        .put("/api/model-settings", t, json!({"default_model": null}))
        .await;
    assert_eq!(r.body["source"], "config");
    let done = run(&app, "bare").await;
    assert_eq!(done["status"], "success", "{done}");
    assert_ne!(done["output"], "reply from D");
}

#[tokio::test]
async fn a_run_without_any_model_fails_with_the_no_model_configured_code() {
    let app = fast_app().await;
    agent(&app, "bare", None).await;
    let thread = app.thread(&app.admin, "bare").await;
    let run_id = app.start_run(&app.admin, &thread, "hello").await;
    let done = app.wait(&app.admin, &run_id, 30).await["run"].clone();
    assert_eq!(
        (done["status"].clone(), done["error_code"].clone()),
        (json!("error"), json!("no_model_configured")),
        "{done}"
    );
    assert!(
        done["error"]
            .as_str()
            .unwrap()
            .starts_with("no model configured"),
        "{done}"
    );
    let (_, events) = app.events(&app.admin, &run_id, None).await;
    let last = events.last().unwrap();
    assert_eq!(
        last.data["error_code"], "no_model_configured",
        "{:?}",
        last.data
    );
    // A model the provider does not serve, and a provider nobody reaches, have codes too.
    let fake = FakeOpenAi::start("E", None, &["m"]).await;
    create(&app, provider("lab", &fake.base_url, None)).await;
    create(&app, provider("gone", &unreachable_base_url().await, None)).await;
    agent(
        &app,
        "typo",
        Some(json!({"provider": "lab", "name": "no-such-model"})),
    )
    .await;
    agent(&app, "far", Some(json!({"provider": "gone", "name": "m"}))).await;
    assert_eq!(run(&app, "typo").await["error_code"], "model_unknown_model");
    assert_eq!(run(&app, "far").await["error_code"], "model_unreachable");
}

#[tokio::test]
async fn deleting_a_provider_answers_how_many_agents_used_it() {
    let fake = FakeOpenAi::start("F", None, &["m"]).await;
    let app = fast_app().await;
    let t = &app.admin;
    let id = create(&app, provider("lab", &fake.base_url, None)).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    agent(&app, "one", Some(json!({"provider": "lab", "name": "m"}))).await;
    agent(&app, "two", Some(json!({"provider": "lab", "name": "m"}))).await;
    app.put("/api/model-settings", t, json!({"default_model": "lab/m"}))
        .await;
    let one = format!("/api/model-providers/{id}");
    assert_eq!(app.get(&one, t).await.body["agents_using"], 2);

    // Renaming it while agents name it is refused; nothing changes.
    let r = app.patch(&one, t, json!({"name": "lab2"})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("name")),
        "{}",
        r.body
    );
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2 agent")
    );

    let r = app.delete(&one, t).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body,
        json!({"agents_using": 2, "default_model_cleared": true})
    );
    assert_eq!(app.get(&one, t).await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        app.get("/api/model-settings", t).await.body["default_model"],
        Value::Null
    );
    let done = run(&app, "one").await;
    assert_eq!(done["error_code"], "unknown_provider", "{done}");

    // A provider nobody uses is renamed freely, and the default model follows it.
    let id = create(&app, provider("spare", &fake.base_url, None)).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.put(
        "/api/model-settings",
        t,
        json!({"default_model": "spare/m"}),
    )
    .await;
    let r = app
        .patch(
            &format!("/api/model-providers/{id}"),
            t,
            json!({"name": "spare2"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        app.get("/api/model-settings", t).await.body["default_model"],
        "spare2/m"
    );
    let r = app.delete(&format!("/api/model-providers/{id}"), t).await;
    assert_eq!(
        r.body,
        json!({"agents_using": 0, "default_model_cleared": true})
    );
}

#[tokio::test]
async fn agent_writes_accept_stored_providers() {
    let app = fast_app().await;
    let body = json!({"slug": "x", "name": "x", "config_json": {"context": {"model": {"provider": "lab", "name": "m"}}}});
    let r = app.post("/api/agent", &app.admin, body.clone()).await;
    assert_eq!(
        r.field(),
        Some("config_json.context.model.provider"),
        "{}",
        r.body
    );
    create(&app, provider("lab", "http://127.0.0.1:9/v1", None)).await;
    let r = app.post("/api/agent", &app.admin, body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}
