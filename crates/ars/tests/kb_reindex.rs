//! `ars kb reindex`: a knowledge base's search index is derived data, rebuilt in the data dir
//! from the store — refused while a running server holds it, found by the next server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::Command;
use std::time::Duration;

use common::{BIN, Server, call};
use reqwest::Method;
use serde_json::{Value, json};

const PASSWORD: &str = "reindex-admin-pw";

async fn login(base: &str) -> String {
    let (status, body) = call(
        Method::POST,
        format!("{base}/api/auth/login"),
        None,
        Some(json!({"username": "admin", "password": PASSWORD})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["token"].as_str().unwrap().to_string()
}

async fn search(base: &str, token: &str, kb: &str, query: &str) -> Value {
    let (status, body) = call(
        Method::POST,
        format!("{base}/api/knowledge-bases/{kb}/search"),
        Some(token),
        Some(json!({"query": query})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn ars_kb_reindex_rebuilds_an_index_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let reindex = |args: &[&str]| {
        Command::new(BIN)
            .args(["kb", "reindex"])
            .args(args)
            .env("ARS_DATA_DIR", &data)
            .env_remove("ARS_DATABASE_URL")
            .current_dir(dir.path())
            .output()
            .unwrap()
    };

    let server = Server::start(dir.path(), Some(PASSWORD));
    let base = server.base.clone();
    let token = login(&base).await;
    let (status, created) = call(
        Method::POST,
        format!("{base}/api/knowledge-bases"),
        Some(&token),
        Some(json!({"slug": "handbook", "name": "Handbook"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let kb = created["id"].as_str().unwrap().to_string();
    let (status, uploaded) = call(
        Method::POST,
        format!("{base}/api/knowledge-bases/{kb}/documents"),
        Some(&token),
        Some(json!({"name": "leave.md", "text": "# Leave\n\n年假每年十五天。Annual leave is fifteen days."})),
    )
    .await;
    assert_eq!(status, 201, "{uploaded}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while search(&base, &token, &kb, "年假").await["hits"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(tokio::time::Instant::now() < deadline, "never ingested");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The running server holds the index: the command refuses rather than rebuild under it.
    let out = reindex(&[]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("in use"), "{said}");

    assert!(server.terminate().success());
    std::fs::remove_dir_all(data.join("knowledge")).unwrap();
    let out = reindex(&["nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no knowledge base `nope`"));
    let out = reindex(&["handbook"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "handbook: 1 chunks indexed"
    );
    assert!(data.join("knowledge").join(&kb).join("synced-seq").exists());

    // The next server searches the rebuilt index.
    let server = Server::start(dir.path(), Some(PASSWORD));
    let base = server.base.clone();
    let token = login(&base).await;
    let found = search(&base, &token, &kb, "annual leave").await;
    assert_eq!(found["hits"][0]["citation"], "[handbook:leave.md#0]");
    assert!(server.terminate().success());
}
