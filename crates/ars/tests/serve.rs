//! The real `ars` binary on an empty data dir: first start, login, agents, admin commands,
//! graceful shutdown.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{BIN, Server, call};
use serde_json::{Value, json};

fn slugs(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["slug"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn serve_on_an_empty_data_dir_then_login_create_and_list_agents() {
    use reqwest::Method;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Some("first-admin-pw"));
    let base = server.base.clone();

    let (status, login) = call(
        Method::POST,
        format!("{base}/api/auth/login"),
        None,
        Some(json!({"username": "admin", "password": "first-admin-pw"})),
    )
    .await;
    assert_eq!(status, 200, "{login}");
    let token = login["token"].as_str().unwrap();

    let (status, _) = call(
        Method::POST,
        format!("{base}/api/agent"),
        Some(token),
        Some(json!({"slug": "assistant", "name": "Assistant"})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, sub) = call(
        Method::POST,
        format!("{base}/api/agent"),
        Some(token),
        Some(json!({"slug": "reviewer", "name": "Reviewer", "description": "Reviews drafts", "backend_id": "SubAgentBackend"})),
    )
    .await;
    assert_eq!(status, 201);
    assert_eq!(sub["is_subagent"], true);

    let (_, chat_list) = call(Method::GET, format!("{base}/api/agent"), Some(token), None).await;
    assert_eq!(slugs(&chat_list), vec!["assistant"]);
    let (_, all) = call(
        Method::GET,
        format!("{base}/api/agent?include_subagents=true"),
        Some(token),
        None,
    )
    .await;
    assert_eq!(
        slugs(&all),
        vec!["general-purpose", "assistant", "reviewer"]
    );

    let status = server.terminate();
    assert!(status.success(), "graceful shutdown exits 0, got {status}");
    assert!(
        dir.path().join("data/ars.db").exists(),
        "SQLite file in the data dir"
    );
}

#[tokio::test]
async fn generated_admin_password_is_written_to_a_private_file_not_the_log() {
    use reqwest::Method;
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), None);
    let file = dir.path().join("data/admin-password.txt");
    let password = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", file.display(), server.log.join("\n")))
        .trim()
        .to_string();
    assert!(password.len() >= 12, "{password:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "only the server's user may read it");
    }
    let line = server
        .log
        .iter()
        .find(|l| l.contains("generated password"))
        .cloned()
        .unwrap_or_else(|| panic!("no word of it in the log:\n{}", server.log.join("\n")));
    assert!(
        line.contains("admin-password.txt"),
        "the log says where: {line}"
    );
    let (status, _) = call(
        Method::POST,
        format!("{}/api/auth/login", server.base),
        None,
        Some(json!({"username": "admin", "password": password})),
    )
    .await;
    assert_eq!(status, 200);
    let logged = server.wait_for("finished processing request");
    assert!(
        logged.contains("request_id="),
        "requests are logged with their id: {logged}"
    );
    assert!(
        !server.log.iter().any(|l| l.contains(&password)),
        "the password never reaches the log (stderr is not a terminal here):\n{}",
        server.log.join("\n")
    );
    assert!(server.terminate().success());

    // A restart neither generates another password nor touches the file.
    std::fs::remove_file(&file).unwrap();
    let server = Server::start(dir.path(), None);
    assert!(!server.log.iter().any(|l| l.contains("generated password")));
    assert!(!file.exists());
    let (status, _) = call(
        Method::POST,
        format!("{}/api/auth/login", server.base),
        None,
        Some(json!({"username": "admin", "password": password})),
    )
    .await;
    assert_eq!(status, 200, "the same admin survives a restart");
    server.terminate();
}

#[test]
fn too_short_admin_password_is_a_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("serve")
        .current_dir(dir.path())
        .env("ARS_DATA_DIR", dir.path().join("data"))
        .env("ARS_BIND", "127.0.0.1:0")
        .env_remove("ARS_DATABASE_URL")
        .env("ARS_ADMIN_PASSWORD", "short-pw")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ARS_ADMIN_PASSWORD") && stderr.contains("12-1024 characters"),
        "{stderr}"
    );
}

#[tokio::test]
async fn admin_commands_add_users_list_them_and_create_tokens() {
    use reqwest::Method;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let ars = |args: &[&str]| {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("ARS_DATA_DIR", &data)
            .env_remove("ARS_DATABASE_URL")
            .current_dir(dir.path());
        cmd
    };
    assert!(ars(&["migrate"]).status().unwrap().success());

    let mut add = ars(&["user", "add", "bob", "--password-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(b"bob-password-1\n")
        .unwrap();
    let out = add.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = ars(&["user", "add", "bob", "--password-stdin"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a second bob is refused");

    // new_password_shorter_than_minimum_is_rejected, by `ars user add` too.
    let mut add = ars(&["user", "add", "carol", "--password-stdin"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(b"eleven-char\n")
        .unwrap();
    let out = add.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("password"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = ars(&["user", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\tbob\tuser"));

    let out = ars(&["token", "create", "bob", "--name", "script"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("ars_"));
    let out = ars(&["token", "create", "nobody"]).output().unwrap();
    assert!(!out.status.success());

    let server = Server::start(dir.path(), Some("admin-password"));
    let (status, me) = call(
        Method::GET,
        format!("{}/api/me", server.base),
        Some(&token),
        None,
    )
    .await;
    assert_eq!((status, me["username"].as_str()), (200, Some("bob")));
    let (status, _) = call(
        Method::POST,
        format!("{}/api/auth/login", server.base),
        None,
        Some(json!({"username": "bob", "password": "bob-password-1"})),
    )
    .await;
    assert_eq!(status, 200);
    server.terminate();
}
