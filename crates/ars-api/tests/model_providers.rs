//! Model providers managed from the API (`/api/model-providers`) and the server default model
//! (`/api/model-settings`): admins only, every write validated naming its field, secrets
//! write-only and sealed, configured providers read-only, connection tests and model refresh
//! against a real OpenAI-compatible server on loopback, and changes that apply to the next run
//! on every instance without a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use ars_models::{ModelsConfig, OpenAiOptions, ProviderConfig};
use common::openai::{FakeOpenAi, unreachable_base_url};
use common::{Setup, TestApp};

const KEY_A: &str = "sk-key-of-server-a-0123456789";
const KEY_B: &str = "sk-key-of-server-b-9876543210";

/// Provider timing shrunk so that failing runs fail in milliseconds.
fn fast() -> OpenAiOptions {
    OpenAiOptions {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        non_streaming_timeout: Duration::from_secs(5),
        max_attempts: 1,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(2),
        max_retry_after: Duration::from_millis(10),
    }
}

/// A server whose configuration defines the provider `local` (pointing at `base_url`).
async fn app_with_config_provider(base_url: &str) -> TestApp {
    let mut local = ProviderConfig::openai_compatible("local", base_url);
    local.models = vec!["m".into()];
    TestApp::spawn_setup(Setup {
        models: ModelsConfig {
            providers: vec![local],
            openai: fast(),
        },
        ..Setup::default()
    })
    .await
}

async fn fast_app() -> TestApp {
    TestApp::spawn_setup(Setup {
        models: ModelsConfig {
            openai: fast(),
            ..ModelsConfig::default()
        },
        ..Setup::default()
    })
    .await
}

fn provider(name: &str, base_url: &str, key: Option<&str>) -> Value {
    let mut body = json!({"name": name, "base_url": base_url, "models": ["m"]});
    if let Some(key) = key {
        body["api_key"] = json!(key);
    }
    body
}

/// Creates a provider as the admin, asserting 201; answers its view.
async fn create(app: &TestApp, body: Value) -> Value {
    let r = app.post("/api/model-providers", &app.admin, body).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.body
}

/// An agent of the admin's with `model` (or none), named `slug`.
async fn agent(app: &TestApp, slug: &str, model: Option<Value>) -> Value {
    let mut body = json!({"slug": slug, "name": slug, "config_json": {"context": {"tools": []}}});
    if let Some(model) = model {
        body["config_json"]["context"]["model"] = model;
    }
    app.agent(&app.admin, body).await
}

/// Runs `agent` once as the admin and answers the finished run.
async fn run(app: &TestApp, agent: &str) -> Value {
    let thread = app.thread(&app.admin, agent).await;
    let run = app.start_run(&app.admin, &thread, "hello").await;
    let done = app.wait(&app.admin, &run, 30).await;
    assert_eq!(done["wait_timed_out"], false, "{done}");
    done["run"].clone()
}

#[tokio::test]
async fn every_provider_operation_is_for_admins_only() {
    let app = fast_app().await;
    let (_, alice) = app.user("alice").await;
    let id = create(&app, provider("lab", "http://127.0.0.1:9/v1", Some(KEY_A))).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let body = provider("other", "http://127.0.0.1:9/v1", None);
    let operations: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, "/api/model-providers".into(), None),
        (
            Method::POST,
            "/api/model-providers".into(),
            Some(body.clone()),
        ),
        (Method::GET, format!("/api/model-providers/{id}"), None),
        (
            Method::PUT,
            format!("/api/model-providers/{id}"),
            Some(body.clone()),
        ),
        (
            Method::PATCH,
            format!("/api/model-providers/{id}"),
            Some(json!({"models": []})),
        ),
        (Method::DELETE, format!("/api/model-providers/{id}"), None),
        (
            Method::POST,
            format!("/api/model-providers/{id}/test"),
            Some(json!({})),
        ),
        (
            Method::POST,
            format!("/api/model-providers/{id}/refresh-models"),
            None,
        ),
        (
            Method::POST,
            "/api/model-providers/test".into(),
            Some(body.clone()),
        ),
        (Method::GET, "/api/model-settings".into(), None),
        (
            Method::PUT,
            "/api/model-settings".into(),
            Some(json!({"default_model": null})),
        ),
    ];
    for (method, path, body) in operations {
        let r = app
            .call(method.clone(), &path, Some(&alice), body.clone())
            .await;
        assert_eq!(
            (r.status, r.code()),
            (StatusCode::FORBIDDEN, Some("forbidden")),
            "{method} {path}: {}",
            r.body
        );
        let r = app.call(method.clone(), &path, None, body).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // Nothing changed: the provider is there, alone, unchanged.
    let list = app.get("/api/model-providers", &app.admin).await.body;
    let stored: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["source"] == "database")
        .collect();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["models"], json!(["m"]));
}

#[tokio::test]
async fn a_created_provider_is_listed_with_what_is_set_but_never_a_secret() {
    let fake = FakeOpenAi::start("A", Some(KEY_A), &["m"]).await;
    let app = app_with_config_provider(&fake.base_url).await;
    let mut body = provider("lab", &format!("{}/", fake.base_url), Some(KEY_A));
    body["extra_headers"] = json!({"X-Org": "org-secret-value-42"});
    let created = create(&app, body).await;
    let id = created["id"].as_str().unwrap();
    assert!(
        ars_domain::ModelProviderId::parse(id).is_some(),
        "{created}"
    );
    assert_eq!(created["name"], "lab");
    assert_eq!(created["kind"], "openai-compatible");
    assert_eq!(created["source"], "database");
    assert_eq!(created["read_only"], false);
    assert_eq!(
        created["base_url"],
        fake.base_url.as_str(),
        "stored without the slash"
    );
    assert_eq!(created["api_key_set"], true);
    assert_eq!(created["extra_header_names"], json!(["x-org"]));
    assert_eq!(created["agents_using"], 0);
    assert!(created["created_at"].is_string() && created["updated_at"].is_string());
    assert!(created.get("api_key").is_none() && created.get("extra_headers").is_none());
    let text = created.to_string();
    assert!(
        !text.contains(KEY_A) && !text.contains("org-secret-value-42"),
        "{text}"
    );

    // The list: the built-in one, the configured one, then the stored ones.
    let list = app.get("/api/model-providers", &app.admin).await;
    assert_eq!(list.status, StatusCode::OK);
    let ids: Vec<&str> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["builtin:scripted", "config:local", id]);
    let configured = &list.body[1];
    assert_eq!(configured["source"], "config");
    assert_eq!(configured["read_only"], true);
    assert_eq!(configured["api_key_set"], false);
    assert_eq!(list.body[0]["kind"], "scripted");
    assert_eq!(
        app.get(&format!("/api/model-providers/{id}"), &app.admin)
            .await
            .body,
        created
    );

    // Stored sealed: neither secret is in the row, and this server's key opens both.
    let id = ars_domain::ModelProviderId::parse(id).unwrap();
    let stored = app.store.model_provider(id).await.unwrap().unwrap();
    let sealed = stored.fields.api_key.clone().unwrap();
    assert!(!sealed.as_str().contains(KEY_A));
    assert_eq!(sealed.key_id(), Some(app.secret_key.id()));
    let (config, key) = app.runtime.model_source().open(&stored).unwrap();
    assert_eq!(config.headers["x-org"], "org-secret-value-42");
    assert!(key.is_some());

    // Everyone's catalog lists it; only admins see its URL.
    let (_, alice) = app.user("alice").await;
    let catalog = app.get("/api/models", &alice).await.body;
    let lab = catalog["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "lab")
        .unwrap()
        .clone();
    assert_eq!(
        lab,
        json!({"name": "lab", "kind": "openai-compatible", "source": "database", "models": ["m"]})
    );
    let catalog = app.get("/api/models", &app.admin).await.body;
    assert!(catalog.to_string().contains(&fake.base_url));
}

#[tokio::test]
async fn writes_are_validated_naming_the_field() {
    let app = app_with_config_provider("http://127.0.0.1:9/v1").await;
    let t = &app.admin;
    let base = || provider("lab", "http://127.0.0.1:9/v1", None);
    let with = |key: &str, value: Value| {
        let mut body = base();
        body[key] = value;
        body
    };
    let cases = [
        (
            with("name", json!("Lab")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
        (
            with("name", json!("")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
        (
            with("name", json!("a/b")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
        (
            with("name", json!("scripted")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "name",
        ),
        (with("name", json!("local")), StatusCode::CONFLICT, "name"),
        (
            with("base_url", json!("ftp://h/v1")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "base_url",
        ),
        (
            with("base_url", json!("localhost:11434")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "base_url",
        ),
        (
            with("base_url", json!("http://u:p@h/v1")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "base_url",
        ),
        (
            with("kind", json!("anthropic")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "kind",
        ),
        (
            with("api_key", json!("")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "api_key",
        ),
        (
            with("api_key", json!("sk with space")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "api_key",
        ),
        (
            with("api_key", json!(7)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "api_key",
        ),
        (
            with("extra_headers", json!({"Authorization": "x"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "extra_headers.Authorization",
        ),
        (
            with("extra_headers", json!({"bad name": "x"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "extra_headers.bad name",
        ),
        (
            with("extra_headers", json!({"x-a": "v\r\nx"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "extra_headers.x-a",
        ),
        (
            with("extra_headers", json!({"X-A": "1", "x-a": "2"})),
            StatusCode::UNPROCESSABLE_ENTITY,
            "extra_headers.x-a",
        ),
        (
            with("models", json!(["m", "m"])),
            StatusCode::UNPROCESSABLE_ENTITY,
            "models[1]",
        ),
        (
            with("models", json!("m")),
            StatusCode::UNPROCESSABLE_ENTITY,
            "models",
        ),
        (
            with("surprise", json!(1)),
            StatusCode::UNPROCESSABLE_ENTITY,
            "surprise",
        ),
        (
            json!({"name": "lab"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "base_url",
        ),
    ];
    for (body, status, field) in cases {
        let r = app.post("/api/model-providers", t, body.clone()).await;
        assert_eq!(
            (r.status, r.field()),
            (status, Some(field)),
            "{body}: {}",
            r.body
        );
        assert!(!r.body["error"]["message"].as_str().unwrap().is_empty());
    }
    let r = app
        .post("/api/model-providers", t, with("name", json!("local")))
        .await;
    let message = r.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("defined in the server configuration"),
        "{message}"
    );
    let many: serde_json::Map<String, Value> =
        (0..33).map(|i| (format!("x-h{i}"), json!("v"))).collect();
    let r = app
        .post(
            "/api/model-providers",
            t,
            with("extra_headers", Value::Object(many)),
        )
        .await;
    assert_eq!(r.field(), Some("extra_headers"), "{}", r.body);

    // Malformed, not JSON, oversized.
    let path = "/api/model-providers";
    let r = app
        .raw(
            Method::POST,
            path,
            t,
            "application/json",
            b"{\"name\":".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    let r = app
        .raw(Method::POST, path, t, "text/plain", b"name=lab".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let huge = with("models", json!(vec!["x".repeat(1000); 1100]));
    let r = app
        .raw(
            Method::POST,
            path,
            t,
            "application/json",
            huge.to_string().into_bytes(),
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    let r = app
        .raw(Method::POST, path, t, "application/json", b"[1]".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);

    // Nothing was written; a duplicate of a stored name is a 409 too.
    let stored = || async {
        app.get(path, t)
            .await
            .body
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["source"] == "database")
            .count()
    };
    assert_eq!(stored().await, 0);
    create(&app, base()).await;
    let r = app.post(path, t, base()).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("name")),
        "{}",
        r.body
    );
    assert_eq!(stored().await, 1);

    // The same rules on PUT and PATCH, which change nothing when refused.
    let id = app.get(path, t).await.body[2]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let one = format!("{path}/{id}");
    let r = app.put(&one, t, with("base_url", json!("nope"))).await;
    assert_eq!(r.field(), Some("base_url"));
    let r = app.patch(&one, t, json!({"name": "Bad Name"})).await;
    assert_eq!(r.field(), Some("name"));
    let r = app.patch(&one, t, json!({"name": null})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("name"))
    );
    let r = app.patch(&one, t, json!({"base_url": null})).await;
    assert_eq!(r.field(), Some("base_url"));
    let r = app.patch(&one, t, json!({"api_key": ""})).await;
    assert_eq!(r.field(), Some("api_key"));
    let r = app.patch(&one, t, json!({"nope": null})).await;
    assert_eq!(r.field(), Some("nope"));
    let r = app.patch(&one, t, json!({"name": "local"})).await;
    assert_eq!((r.status, r.field()), (StatusCode::CONFLICT, Some("name")));
    let r = app
        .raw(Method::PATCH, &one, t, "application/json", b"nope".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        app.get(&one, t).await.body["base_url"],
        "http://127.0.0.1:9/v1"
    );
    // Unknown ids.
    for bad in [
        "nope",
        "0191e2b0-0000-7000-8000-000000000000",
        "config:nope",
        "builtin:nope",
    ] {
        let r = app.get(&format!("{path}/{bad}"), t).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{bad}");
        let r = app.patch(&format!("{path}/{bad}"), t, json!({})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{bad}");
        let r = app.delete(&format!("{path}/{bad}"), t).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{bad}");
    }
}

#[tokio::test]
async fn secrets_merge_absent_keeps_null_removes_in_put_and_patch() {
    let fake = FakeOpenAi::start("A", Some(KEY_A), &["m"]).await;
    let app = fast_app().await;
    let t = &app.admin;
    let mut body = provider("lab", &fake.base_url, Some(KEY_A));
    body["extra_headers"] = json!({"x-a": "value-a-123", "x-b": "value-b-456"});
    let id = create(&app, body).await["id"].as_str().unwrap().to_string();
    let one = format!("/api/model-providers/{id}");
    let test = format!("{one}/test");

    // PATCH without secrets keeps them (the test still passes the key check).
    let r = app.patch(&one, t, json!({"models": ["m", "n"]})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (
            r.body["api_key_set"].clone(),
            r.body["extra_header_names"].clone()
        ),
        (json!(true), json!(["x-a", "x-b"]))
    );
    assert_eq!(app.post(&test, t, json!({})).await.body["ok"], true);

    // PUT without secrets keeps them too; readable fields are replaced.
    let r = app
        .put(&one, t, provider("lab", &fake.base_url, None))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["models"], json!(["m"]));
    assert_eq!(r.body["api_key_set"], true);
    assert_eq!(r.body["extra_header_names"], json!(["x-a", "x-b"]));

    // One header removed, one changed, one added; then all of them.
    let r = app
        .patch(
            &one,
            t,
            json!({"extra_headers": {"X-A": null, "x-b": "changed-value", "x-c": "new-value"}}),
        )
        .await;
    assert_eq!(
        r.body["extra_header_names"],
        json!(["x-b", "x-c"]),
        "{}",
        r.body
    );
    let seen = fake.seen().len();
    assert_eq!(app.post(&test, t, json!({})).await.body["ok"], true);
    let sent = &fake.seen()[seen].headers;
    assert_eq!(sent["x-b"], "changed-value");
    assert_eq!(sent["x-c"], "new-value");
    assert!(sent.get("x-a").is_none());
    let r = app.patch(&one, t, json!({"extra_headers": null})).await;
    assert_eq!(r.body["extra_header_names"], json!([]));

    // `null` removes the key: the provider now refuses the test.
    let r = app.patch(&one, t, json!({"api_key": null})).await;
    assert_eq!(r.body["api_key_set"], false, "{}", r.body);
    let r = app.post(&test, t, json!({})).await;
    assert_eq!(r.body["error"]["kind"], "bad_key", "{}", r.body);
    let r = app
        .put(&one, t, provider("lab", &fake.base_url, Some(KEY_A)))
        .await;
    assert_eq!(r.body["api_key_set"], true);
    assert_eq!(app.post(&test, t, json!({})).await.body["ok"], true);
}

#[tokio::test]
async fn configured_and_builtin_providers_are_read_only() {
    let fake = FakeOpenAi::start("C", None, &["m"]).await;
    let app = app_with_config_provider(&fake.base_url).await;
    let t = &app.admin;
    let r = app.get("/api/model-providers/config:local", t).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (r.body["source"].clone(), r.body["read_only"].clone()),
        (json!("config"), json!(true))
    );
    assert_eq!(r.body["base_url"], fake.base_url.as_str());
    for id in ["config:local", "builtin:scripted"] {
        let one = format!("/api/model-providers/{id}");
        let body = provider("lab", &fake.base_url, None);
        for r in [
            app.put(&one, t, body.clone()).await,
            app.patch(&one, t, json!({"models": []})).await,
            app.delete(&one, t).await,
            app.post(&format!("{one}/refresh-models"), t, json!({}))
                .await,
        ] {
            assert_eq!(
                (r.status, r.code()),
                (StatusCode::CONFLICT, Some("conflict")),
                "{id}: {}",
                r.body
            );
            let message = r.body["error"]["message"].as_str().unwrap();
            let expected = if id.starts_with("config") {
                "defined in the server configuration"
            } else {
                "built into the server"
            };
            assert!(message.contains(expected), "{message}");
        }
    }
    // A configured provider can be tested; the built-in one has nothing to test.
    let r = app
        .post("/api/model-providers/config:local/test", t, json!({}))
        .await;
    assert_eq!(
        (r.status, r.body["ok"].clone()),
        (StatusCode::OK, json!(true)),
        "{}",
        r.body
    );
    let r = app
        .post("/api/model-providers/builtin:scripted/test", t, json!({}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(
        app.get("/api/model-providers/config:local", t).await.body["models"],
        json!(["m"])
    );
}

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

#[tokio::test]
async fn connection_tests_report_latency_or_the_kind_of_failure() {
    let fake = FakeOpenAi::start("T", Some(KEY_A), &["m"]).await;
    let app = fast_app().await;
    let t = &app.admin;
    let id = create(&app, provider("lab", &fake.base_url, Some(KEY_A))).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let test = format!("/api/model-providers/{id}/test");

    // Success, with the first listed model or the one asked for; no body at all works too.
    let r = app.post(&test, t, json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (r.body["ok"].clone(), r.body["model"].clone()),
        (json!(true), json!("m"))
    );
    assert!(r.body["latency_ms"].is_u64(), "{}", r.body);
    assert!(r.body.get("error").is_none());
    let asked = fake.seen().last().unwrap().body.clone();
    assert_eq!(asked["stream"], false);
    assert!(asked["max_tokens"].as_u64().unwrap() <= 16, "{asked}");
    let r = app
        .raw(Method::POST, &test, t, "application/json", Vec::new())
        .await;
    assert_eq!(r.body["ok"], true, "{}", r.body);

    // An unknown model, a bad key, a port nobody listens on.
    let r = app.post(&test, t, json!({"model": "gpt-nope"})).await;
    assert_eq!(
        (r.body["ok"].clone(), r.body["error"]["kind"].clone()),
        (json!(false), json!("unknown_model")),
        "{}",
        r.body
    );
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("gpt-nope")
    );
    app.patch(
        &format!("/api/model-providers/{id}"),
        t,
        json!({"api_key": KEY_B}),
    )
    .await;
    let r = app.post(&test, t, json!({})).await;
    assert_eq!(r.body["error"]["kind"], "bad_key", "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refused the API key")
    );
    let nowhere = unreachable_base_url().await;
    app.patch(
        &format!("/api/model-providers/{id}"),
        t,
        json!({"base_url": nowhere}),
    )
    .await;
    let r = app.post(&test, t, json!({})).await;
    assert_eq!(r.body["error"]["kind"], "unreachable", "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&nowhere),
        "{}",
        r.body
    );

    // Settings not saved yet, alone or over a stored provider's secrets.
    let unsaved = "/api/model-providers/test";
    let r = app
        .post(unsaved, t, provider("new", &fake.base_url, Some(KEY_A)))
        .await;
    assert_eq!(r.body["ok"], true, "{}", r.body);
    let r = app
        .post(unsaved, t, provider("new", &fake.base_url, None))
        .await;
    assert_eq!(r.body["error"]["kind"], "bad_key", "{}", r.body);
    app.patch(
        &format!("/api/model-providers/{id}"),
        t,
        json!({"api_key": KEY_A}),
    )
    .await;
    let mut over = provider("lab", &fake.base_url, None);
    over["provider_id"] = json!(id);
    let r = app.post(unsaved, t, over).await;
    assert_eq!(r.body["ok"], true, "the stored key fills in: {}", r.body);

    // Refusals of the request itself.
    let r = app
        .post(unsaved, t, json!({"base_url": fake.base_url}))
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("model")),
        "{}",
        r.body
    );
    let r = app
        .post(unsaved, t, provider("new", "gopher://x", None))
        .await;
    assert_eq!(r.field(), Some("base_url"));
    let mut stray = provider("new", &fake.base_url, None);
    stray["provider_id"] = json!("0191e2b0-0000-7000-8000-000000000000");
    assert_eq!(
        app.post(unsaved, t, stray).await.status,
        StatusCode::NOT_FOUND
    );
    let r = app.post(&test, t, json!({"model": ""})).await;
    assert_eq!(r.field(), Some("model"));
    let r = app.post(&test, t, json!({"modle": "m"})).await;
    assert_eq!(r.field(), Some("modle"));
    let r = app
        .raw(Method::POST, &test, t, "text/plain", b"m".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn refreshing_models_stores_the_providers_own_list() {
    let fake = FakeOpenAi::start("R", Some(KEY_A), &["zeta", "alpha", "alpha"]).await;
    let app = fast_app().await;
    let t = &app.admin;
    let id = create(&app, provider("lab", &fake.base_url, Some(KEY_A))).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let refresh = format!("/api/model-providers/{id}/refresh-models");
    let r = app.post(&refresh, t, json!({})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["ok"], true, "{}", r.body);
    assert_eq!(r.body["provider"]["models"], json!(["alpha", "zeta"]));
    assert!(r.body["provider"]["models_refreshed_at"].is_string());
    assert_eq!(
        fake.seen().last().unwrap().headers["authorization"],
        format!("Bearer {KEY_A}").as_str()
    );
    let catalog = app.get("/api/models", t).await.body;
    assert!(catalog.to_string().contains("zeta"), "{catalog}");

    // Typing models again forgets when they were fetched.
    let r = app
        .patch(
            &format!("/api/model-providers/{id}"),
            t,
            json!({"models": ["typed"]}),
        )
        .await;
    assert!(r.body.get("models_refreshed_at").is_none(), "{}", r.body);

    // Failures leave the stored list alone.
    app.patch(
        &format!("/api/model-providers/{id}"),
        t,
        json!({"api_key": KEY_B}),
    )
    .await;
    let r = app.post(&refresh, t, json!({})).await;
    assert_eq!(
        (r.body["ok"].clone(), r.body["error"]["kind"].clone()),
        (json!(false), json!("bad_key")),
        "{}",
        r.body
    );
    app.patch(
        &format!("/api/model-providers/{id}"),
        t,
        json!({"base_url": unreachable_base_url().await}),
    )
    .await;
    let r = app.post(&refresh, t, json!({})).await;
    assert_eq!(r.body["error"]["kind"], "unreachable", "{}", r.body);
    assert_eq!(
        app.get(&format!("/api/model-providers/{id}"), t).await.body["models"],
        json!(["typed"])
    );
}

#[tokio::test]
async fn secrets_sealed_with_another_key_make_the_provider_unusable_not_the_server() {
    let fake = FakeOpenAi::start("K", Some(KEY_A), &["m"]).await;
    let app = fast_app().await;
    let id = create(&app, provider("lab", &fake.base_url, Some(KEY_A))).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    agent(
        &app,
        "labbot",
        Some(json!({"provider": "lab", "name": "m"})),
    )
    .await;
    // Another instance on the same database, started with another key.
    let other = TestApp::spawn_setup(Setup {
        store: Some(app.store.clone()),
        ..Setup::default()
    })
    .await;
    let r = other
        .get(&format!("/api/model-providers/{id}"), &other.admin)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let problem = r.body["problem"].as_str().unwrap();
    assert!(problem.contains("another server key"), "{problem}");
    let done = run(&other, "labbot").await;
    assert_eq!(
        (done["status"].clone(), done["error_code"].clone()),
        (json!("error"), json!("model_config_invalid")),
        "{done}"
    );
    assert!(
        done["error"]
            .as_str()
            .unwrap()
            .contains("another server key"),
        "{done}"
    );
    let r = other
        .post(
            &format!("/api/model-providers/{id}/test"),
            &other.admin,
            json!({}),
        )
        .await;
    assert_eq!(
        (r.body["ok"].clone(), r.body["error"]["kind"].clone()),
        (json!(false), json!("other")),
        "{}",
        r.body
    );
    // The server is fine; the key is entered again and the provider works there.
    let r = other
        .patch(
            &format!("/api/model-providers/{id}"),
            &other.admin,
            json!({"api_key": KEY_A}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(run(&other, "labbot").await["output"], "reply from K");
}

#[tokio::test]
async fn secrets_never_appear_in_answers_logs_or_debug_output() {
    const KEY: &str = "sk-log-test-secret-5f0c9e2a71";
    const OTHER_KEY: &str = "sk-log-test-second-secret-8d3b";
    const HEADER: &str = "hdr-log-test-secret-41c7";
    let logs = common::logs::captured_logs();
    let fake = FakeOpenAi::start("S", Some(KEY), &["m"]).await;
    let app = fast_app().await;
    let t = &app.admin;
    let answers = std::cell::RefCell::new(Vec::<String>::new());
    let keep = |r: common::Reply| {
        answers.borrow_mut().push(r.body.to_string());
        r
    };

    let mut body = provider("lab", &fake.base_url, Some(KEY));
    body["extra_headers"] = json!({"X-Tenant": HEADER});
    let created = keep(app.post("/api/model-providers", t, body.clone()).await);
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let id = created.body["id"].as_str().unwrap().to_string();
    let one = format!("/api/model-providers/{id}");
    keep(app.post("/api/model-providers", t, body.clone()).await); // 409: a duplicate
    let mut bad = body.clone();
    bad["base_url"] = json!("nope");
    keep(app.post("/api/model-providers", t, bad).await); // 422
    keep(app.get("/api/model-providers", t).await);
    keep(app.get(&one, t).await);
    keep(
        app.patch(&one, t, json!({"api_key": KEY, "models": ["m", "other"]}))
            .await,
    );
    keep(app.put(&one, t, body.clone()).await);
    keep(app.post(&format!("{one}/test"), t, json!({})).await);
    keep(
        app.post(&format!("{one}/test"), t, json!({"model": "missing"}))
            .await,
    );
    keep(
        app.post(&format!("{one}/refresh-models"), t, json!({}))
            .await,
    );
    let mut unsaved = body.clone();
    unsaved["api_key"] = json!(OTHER_KEY);
    keep(app.post("/api/model-providers/test", t, unsaved).await); // bad_key, with the key sent
    keep(app.post("/api/model-providers/test", t, body.clone()).await);
    keep(
        app.put("/api/model-settings", t, json!({"default_model": "lab/m"}))
            .await,
    );
    keep(app.get("/api/model-settings", t).await);
    keep(app.get("/api/models", t).await);
    agent(
        &app,
        "labbot",
        Some(json!({"provider": "lab", "name": "m"})),
    )
    .await;
    let done = run(&app, "labbot").await;
    assert_eq!(done["output"], "reply from S", "{done}");
    answers.borrow_mut().push(done.to_string());
    // A run the provider refuses: the wrong key is sent and echoed nowhere.
    keep(app.patch(&one, t, json!({"api_key": OTHER_KEY})).await);
    let done = run(&app, "labbot").await;
    assert_eq!(done["error_code"], "model_bad_key", "{done}");
    answers.borrow_mut().push(done.to_string());
    let thread = app.thread(t, "labbot").await;
    let run_id = app.start_run(t, &thread, "again").await;
    app.wait(t, &run_id, 30).await;
    let (_, events) = app.events(t, &run_id, None).await;
    answers
        .borrow_mut()
        .extend(events.iter().map(|e| e.data.to_string()));
    keep(app.delete(&one, t).await);

    // What the provider received proves the secrets were really sent.
    let sent = fake.seen();
    assert!(
        sent.iter()
            .any(|s| s.headers["authorization"] == format!("Bearer {KEY}").as_str())
    );
    assert!(
        sent.iter()
            .any(|s| s.headers.get("x-tenant").is_some_and(|v| v == HEADER))
    );

    let debug = format!(
        "{:?} {:?}",
        app.runtime.model_snapshot().await.unwrap(),
        app.runtime.model_source()
    );
    let logs = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(
        logs.contains("model provider created"),
        "the logs were captured"
    );
    for secret in [KEY, OTHER_KEY, HEADER] {
        for answer in answers.borrow().iter() {
            assert!(
                !answer.contains(secret),
                "an answer holds a secret: {answer}"
            );
        }
        assert!(
            !debug.contains(secret),
            "Debug output holds a secret: {debug}"
        );
        if let Some(line) = logs.lines().find(|l| l.contains(secret)) {
            panic!("a log line holds a secret: {line}");
        }
    }
}

#[tokio::test]
async fn every_provider_and_settings_body_is_read_like_any_other_body() {
    let app = fast_app().await;
    let t = &app.admin;
    let id = create(&app, provider("lab", "http://127.0.0.1:9/v1", None)).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let huge = json!({"model": "x".repeat(1_100_000)})
        .to_string()
        .into_bytes();
    for (method, path) in [
        (Method::PUT, "/api/model-settings".to_string()),
        (Method::POST, "/api/model-providers/test".to_string()),
        (Method::POST, format!("/api/model-providers/{id}/test")),
        (Method::PUT, format!("/api/model-providers/{id}")),
        (Method::PATCH, format!("/api/model-providers/{id}")),
    ] {
        let json = "application/json";
        let r = app
            .raw(method.clone(), &path, t, json, b"{\"x\":".to_vec())
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{method} {path}");
        let r = app
            .raw(method.clone(), &path, t, "text/plain", b"x".to_vec())
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{method} {path}"
        );
        let r = app.raw(method.clone(), &path, t, json, huge.clone()).await;
        assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{method} {path}");
        let r = app
            .raw(method.clone(), &path, t, json, b"[]".to_vec())
            .await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{method} {path}"
        );
    }
    // Nothing changed.
    let r = app.get(&format!("/api/model-providers/{id}"), t).await;
    assert_eq!(r.body["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(
        app.get("/api/model-settings", t).await.body["default_model"],
        Value::Null
    );
}

#[tokio::test]
async fn the_served_openapi_document_names_the_providers_in_force() {
    let app = TestApp::spawn().await;
    let providers = |doc: &Value| {
        doc["components"]["schemas"]["ModelConfig"]["properties"]["provider"]["enum"].clone()
    };
    let doc = app.get("/api/openapi.json", &app.admin).await.body;
    assert_eq!(providers(&doc), json!(["scripted"]));
    // An agent write naming another provider is refused, so the document says so; one added
    // at run time is in the next document.
    create(&app, provider("lab", "http://127.0.0.1:9/v1", None)).await;
    let doc = app.get("/api/openapi.json", &app.admin).await.body;
    let names = providers(&doc);
    let names: Vec<&str> = names
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"lab") && names.contains(&"scripted"),
        "{names:?}"
    );
}
