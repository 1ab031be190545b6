//! Model providers managed from the API (`/api/model-providers`) and the server default model
//! (`/api/model-settings`): admins only, every write validated naming its field, secrets
//! write-only and sealed, configured providers read-only, connection tests and model refresh
//! against a real OpenAI-compatible server on loopback, and changes that apply to the next run
//! on every instance without a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "model_providers/connections.rs"]
mod connections;
#[path = "model_providers/runs.rs"]
mod runs;
#[path = "model_providers/usage.rs"]
mod usage;

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
