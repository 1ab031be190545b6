//! A thread's workdir over HTTP: list, download, upload and delete; every refusal of the
//! sandbox's resolver; another user's thread; a child thread's workdir being its root's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use common::{Reply, Setup, TestApp};
use reqwest::{Method, StatusCode, Url};
use serde_json::{Value, json};

/// `/api/threads/{thread}/files{suffix}` with the query pairs encoded.
fn url(app: &TestApp, thread: &str, suffix: &str, query: &[(&str, &str)]) -> Url {
    let mut url = Url::parse(&format!("{}/api/threads/{thread}/files{suffix}", app.base)).unwrap();
    for (key, value) in query {
        url.query_pairs_mut().append_pair(key, value);
    }
    url
}

async fn json_reply(res: reqwest::Response) -> Reply {
    let status = res.status();
    let headers = res.headers().clone();
    let bytes = res.bytes().await.unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("non-JSON body: {}", String::from_utf8_lossy(&bytes)))
    };
    Reply {
        status,
        headers,
        body,
    }
}

async fn list(app: &TestApp, token: &str, thread: &str, query: &[(&str, &str)]) -> Reply {
    let res = app
        .client
        .get(url(app, thread, "", query))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    json_reply(res).await
}

async fn upload(app: &TestApp, token: &str, thread: &str, path: &str, bytes: &[u8]) -> Reply {
    let res = app
        .client
        .put(url(app, thread, "/content", &[("path", path)]))
        .bearer_auth(token)
        .header("content-type", "application/octet-stream")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap();
    json_reply(res).await
}

async fn download(app: &TestApp, token: &str, thread: &str, path: &str) -> reqwest::Response {
    download_with(app, token, thread, &[("path", path)]).await
}

async fn download_with(
    app: &TestApp,
    token: &str,
    thread: &str,
    query: &[(&str, &str)],
) -> reqwest::Response {
    app.client
        .get(url(app, thread, "/content", query))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

async fn delete(app: &TestApp, token: &str, thread: &str, query: &[(&str, &str)]) -> Reply {
    let res = app
        .client
        .delete(url(app, thread, "", query))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    json_reply(res).await
}

/// A user, an agent of theirs and a thread with it: (token, thread id).
async fn thread_of(app: &TestApp, username: &str) -> (String, String) {
    let (_, token) = app.user(username).await;
    app.scripted_agent(&token, &format!("{username}-bot"), json!([{"text": "ok"}]))
        .await;
    let thread = app.thread(&token, &format!("{username}-bot")).await;
    (token, thread)
}

/// The thread's workdir on the host.
async fn host_workdir(app: &TestApp, token: &str, thread: &str) -> PathBuf {
    let body = app.get(&format!("/api/threads/{thread}"), token).await.body;
    app.sandbox_dir
        .join("users")
        .join(body["user_id"].as_str().unwrap())
        .join("user-data")
        .join(body["workdir_path"].as_str().unwrap())
}

/// `(path, kind)` of a listing's entries.
fn entries(reply: &Reply) -> Vec<(String, String)> {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_owned(),
                e["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(p, k)| ((*p).to_owned(), (*k).to_owned()))
        .collect()
}

#[tokio::test]
async fn files_round_trip_through_upload_list_download_and_delete() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;

    // A thread whose runs never touched its workdir lists as empty.
    let empty = list(&app, &alice, &thread, &[]).await;
    assert_eq!(entries(&empty), vec![]);
    assert_eq!(empty.body["path"], "");
    assert_eq!(
        empty.body["workdir"],
        format!("/home/gem/user-data/threads/{thread}")
    );
    assert_eq!(empty.body["truncated"], false);

    let created = upload(&app, &alice, &thread, "notes/a.txt", b"hello").await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["name"], "a.txt");
    assert_eq!(created.body["path"], "notes/a.txt");
    assert_eq!(created.body["kind"], "file");
    assert_eq!(created.body["size"], 5);
    assert!(created.body["modified_at"].is_string());
    let replaced = upload(&app, &alice, &thread, "notes/a.txt", b"hello, world").await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert_eq!(replaced.body["size"], 12);
    upload(&app, &alice, &thread, "b.txt", b"b").await;

    let root = list(&app, &alice, &thread, &[]).await;
    assert_eq!(
        entries(&root),
        pairs(&[("notes", "dir"), ("b.txt", "file")])
    );
    let notes = list(&app, &alice, &thread, &[("path", "notes")]).await;
    assert_eq!(notes.body["path"], "notes");
    assert_eq!(entries(&notes), pairs(&[("notes/a.txt", "file")]));
    let tree = list(&app, &alice, &thread, &[("recursive", "true")]).await;
    assert_eq!(
        entries(&tree),
        pairs(&[("notes", "dir"), ("notes/a.txt", "file"), ("b.txt", "file")])
    );

    let res = download(&app, &alice, &thread, "notes/a.txt").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-length"], "12");
    assert_eq!(res.text().await.unwrap(), "hello, world");

    let gone = delete(&app, &alice, &thread, &[("path", "notes/a.txt")]).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.body);
    let again = download(&app, &alice, &thread, "notes/a.txt").await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    // An empty folder goes without `recursive`.
    let gone = delete(&app, &alice, &thread, &[("path", "notes")]).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.body);
    assert_eq!(
        entries(&list(&app, &alice, &thread, &[]).await),
        pairs(&[("b.txt", "file")])
    );
}

#[tokio::test]
async fn listings_put_folders_first_and_say_when_they_are_cut() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    for path in ["z.txt", "a/b/c.txt", "B.txt", "m/n.txt"] {
        upload(&app, &alice, &thread, path, b"x").await;
    }
    let plain = list(&app, &alice, &thread, &[]).await;
    assert_eq!(
        entries(&plain),
        pairs(&[
            ("a", "dir"),
            ("m", "dir"),
            ("B.txt", "file"),
            ("z.txt", "file")
        ])
    );
    // Folders that hold more are no truncation of a plain listing.
    assert_eq!(plain.body["truncated"], false);
    let shallow = list(
        &app,
        &alice,
        &thread,
        &[("recursive", "1"), ("max_depth", "2")],
    )
    .await;
    assert_eq!(
        entries(&shallow),
        pairs(&[
            ("a", "dir"),
            ("a/b", "dir"),
            ("m", "dir"),
            ("m/n.txt", "file"),
            ("B.txt", "file"),
            ("z.txt", "file")
        ])
    );
    assert_eq!(shallow.body["truncated"], true, "a/b holds c.txt");
    let deep = list(
        &app,
        &alice,
        &thread,
        &[("recursive", "true"), ("max_depth", "16")],
    )
    .await;
    assert_eq!(deep.body["truncated"], false);
    for depth in ["0", "17", "-1", "many"] {
        let reply = list(
            &app,
            &alice,
            &thread,
            &[("recursive", "true"), ("max_depth", depth)],
        )
        .await;
        assert!(
            matches!(
                reply.status,
                StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST
            ),
            "{depth}: {}",
            reply.body
        );
    }
}

#[tokio::test]
async fn every_resolver_refusal_is_a_422_naming_the_path() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    let long = "a/".repeat(2100);
    // Short enough as given, too long once the workdir is put in front of it.
    let long_below = "a/".repeat(2040);
    let long_component = "x".repeat(300);
    let refused = [
        "..",
        "../x.txt",
        "a/../../x.txt",
        "/etc/passwd",
        "/home/gem/user-data/x.txt",
        "/home/gem/skills/x",
        "a\0b",
        long.as_str(),
        long_below.as_str(),
        long_component.as_str(),
    ];
    for path in refused {
        let shown = &path[..path.len().min(40)];
        let replies = [
            list(&app, &alice, &thread, &[("path", path)]).await,
            json_reply(download(&app, &alice, &thread, path).await).await,
            upload(&app, &alice, &thread, path, b"x").await,
            delete(
                &app,
                &alice,
                &thread,
                &[("path", path), ("recursive", "true")],
            )
            .await,
        ];
        for reply in replies {
            assert_eq!(
                reply.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{shown}: {}",
                reply.body
            );
            assert_eq!(reply.code(), Some("path_refused"), "{shown}");
            assert_eq!(reply.field(), Some("path"), "{shown}");
            let message = reply.body["error"]["message"].as_str().unwrap();
            assert!(message.len() < 600, "{shown}: the message is short");
            assert!(!message.contains(&app.sandbox_dir.to_string_lossy().into_owned()));
        }
    }
    // Nothing landed anywhere in the workspace.
    let workdir = host_workdir(&app, &alice, &thread).await;
    let workspace = workdir.parent().unwrap().parent().unwrap();
    assert!(!workspace.join("x.txt").exists());
    assert!(!workspace.join("threads/x.txt").exists());
    // The workdir itself is no file to delete.
    for path in ["", ".", "sub/.."] {
        let reply = delete(
            &app,
            &alice,
            &thread,
            &[("path", path), ("recursive", "true")],
        )
        .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{path:?}");
        assert_eq!(reply.code(), Some("path_refused"));
    }
    assert!(workdir.is_dir());
}

#[tokio::test]
async fn symlinks_pointing_out_are_refused_for_read_write_and_delete() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    upload(&app, &alice, &thread, "keep.txt", b"x").await;
    let workdir = host_workdir(&app, &alice, &thread).await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    symlink(outside.path(), workdir.join("out")).unwrap();
    symlink(outside.path().join("secret.txt"), workdir.join("leak.txt")).unwrap();

    let refusals = [
        list(&app, &alice, &thread, &[("path", "out")]).await,
        json_reply(download(&app, &alice, &thread, "leak.txt").await).await,
        json_reply(download(&app, &alice, &thread, "out/secret.txt").await).await,
        upload(&app, &alice, &thread, "leak.txt", b"pwned").await,
        upload(&app, &alice, &thread, "out/secret.txt", b"pwned").await,
        upload(&app, &alice, &thread, "out/new.txt", b"pwned").await,
        delete(&app, &alice, &thread, &[("path", "out/secret.txt")]).await,
        delete(
            &app,
            &alice,
            &thread,
            &[("path", "out/secret.txt"), ("recursive", "true")],
        )
        .await,
    ];
    for (i, reply) in refusals.iter().enumerate() {
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "#{i}: {}",
            reply.body
        );
        assert_eq!(reply.code(), Some("path_refused"), "#{i}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "top secret"
    );
    assert!(!outside.path().join("new.txt").exists());

    // A listing shows the links as links; deleting one deletes the link, not its target.
    let listed = list(&app, &alice, &thread, &[("recursive", "true")]).await;
    assert_eq!(
        entries(&listed),
        pairs(&[
            ("keep.txt", "file"),
            ("leak.txt", "symlink"),
            ("out", "symlink")
        ])
    );
    let gone = delete(
        &app,
        &alice,
        &thread,
        &[("path", "out"), ("recursive", "true")],
    )
    .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT, "{}", gone.body);
    assert!(outside.path().join("secret.txt").exists());
}

#[tokio::test]
async fn another_users_thread_is_a_404_for_every_operation() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    upload(&app, &alice, &thread, "diary.txt", b"private").await;
    let (_, bob) = app.user("bob").await;
    let replies = [
        list(&app, &bob, &thread, &[]).await,
        json_reply(download(&app, &bob, &thread, "diary.txt").await).await,
        upload(&app, &bob, &thread, "diary.txt", b"mine now").await,
        delete(&app, &bob, &thread, &[("path", "diary.txt")]).await,
    ];
    for reply in replies {
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    }
    // Admins included: conversations are private.
    let admin = list(&app, &app.admin, &thread, &[]).await;
    assert_eq!(admin.status, StatusCode::NOT_FOUND);
    let res = download(&app, &alice, &thread, "diary.txt").await;
    assert_eq!(res.text().await.unwrap(), "private");
    // A malformed or unknown thread id is the same 404.
    for id in ["no-such-thread", "bad%20id"] {
        assert_eq!(
            list(&app, &alice, id, &[]).await.status,
            StatusCode::NOT_FOUND
        );
    }
}

#[tokio::test]
async fn a_child_thread_shares_its_roots_workdir() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let writer = json!({"slug": "writer", "name": "Writer", "description": "writes files",
    "backend_id": "SubAgentBackend", "config_json": {"context": {"model": {
        "provider": "scripted", "name": "demo", "script": [
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "report/summary.md", "content": "# Done\n"}}]},
            {"text": "wrote it"}
        ]}}}});
    assert_eq!(
        app.post("/api/agent", &alice, writer).await.status,
        StatusCode::CREATED
    );
    app.scripted_agent(
        &alice,
        "boss",
        json!([
            {"tool_calls": [{"name": "task", "arguments": {"description": "write the report", "subagent_slug": "writer"}}]},
            {"text": "all done"}
        ]),
    )
    .await;
    let thread = app.thread(&alice, "boss").await;
    let run = app.start_run(&alice, &thread, "go").await;
    assert_eq!(app.wait(&alice, &run, 20).await["run"]["status"], "success");
    let children = app
        .get(&format!("/api/threads/{thread}/subagents"), &alice)
        .await
        .body;
    let child = children[0]["thread_id"].as_str().unwrap().to_owned();

    // What the subagent's tool wrote is listed through the parent, and through the child.
    let expected = pairs(&[("report", "dir"), ("report/summary.md", "file")]);
    let parent = list(&app, &alice, &thread, &[("recursive", "true")]).await;
    assert_eq!(entries(&parent), expected);
    let through_child = list(&app, &alice, &child, &[("recursive", "true")]).await;
    assert_eq!(entries(&through_child), expected);
    assert_eq!(through_child.body["workdir"], parent.body["workdir"]);
    let res = download(&app, &alice, &thread, "report/summary.md").await;
    assert_eq!(res.text().await.unwrap(), "# Done\n");

    // A file handed in through the child is the parent's too.
    let put = upload(&app, &alice, &child, "input.csv", b"a,b\n1,2\n").await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let parent = list(&app, &alice, &thread, &[]).await;
    assert!(entries(&parent).contains(&("input.csv".into(), "file".into())));
    let gone = delete(&app, &alice, &thread, &[("path", "input.csv")]).await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
    assert_eq!(
        download(&app, &alice, &child, "input.csv").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_oversized_upload_is_a_413_naming_the_limit_and_writes_nothing() {
    let mut setup = Setup::default();
    setup.api.file_upload_limit = 1024;
    let app = TestApp::spawn_setup(setup).await;
    let (alice, thread) = thread_of(&app, "alice").await;

    let reply = upload(&app, &alice, &thread, "big.bin", &[7; 1025]).await;
    assert_eq!(
        reply.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        reply.body
    );
    assert_eq!(reply.code(), Some("payload_too_large"));
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024"),
        "{}",
        reply.body
    );
    // Without a Content-Length (chunked), the limit holds while reading.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![Ok(vec![1; 600]), Ok(vec![2; 600])];
    let res = app
        .client
        .put(url(&app, &thread, "/content", &[("path", "chunked.bin")]))
        .bearer_auth(&alice)
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(entries(&list(&app, &alice, &thread, &[]).await), vec![]);
    assert!(
        !host_workdir(&app, &alice, &thread)
            .await
            .join("big.bin")
            .exists()
    );
    // At the limit is fine.
    let fits = upload(&app, &alice, &thread, "fits.bin", &[7; 1024]).await;
    assert_eq!(fits.status, StatusCode::CREATED, "{}", fits.body);
}

#[tokio::test]
async fn an_upload_over_the_workspace_quota_is_refused_and_writes_nothing() {
    let mut setup = Setup::default();
    setup.sandbox_limits.workspace_quota_bytes = 64 * 1024;
    let app = TestApp::spawn_setup(setup).await;
    let (alice, thread) = thread_of(&app, "alice").await;
    let reply = upload(&app, &alice, &thread, "big.bin", &[7; 128 * 1024]).await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("quota"),
        "{}",
        reply.body
    );
    assert_eq!(entries(&list(&app, &alice, &thread, &[]).await), vec![]);
}

#[tokio::test]
async fn chinese_file_names_round_trip() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    let path = "报告/数据 2024.csv";
    let put = upload(
        &app,
        &alice,
        &thread,
        path,
        "城市,人口\n上海,2487\n".as_bytes(),
    )
    .await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    assert_eq!(put.body["name"], "数据 2024.csv");
    assert_eq!(put.body["path"], path);
    let listed = list(&app, &alice, &thread, &[("recursive", "true")]).await;
    assert_eq!(entries(&listed), pairs(&[("报告", "dir"), (path, "file")]));

    let res = download(&app, &alice, &thread, path).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
    assert_eq!(
        res.headers()["content-disposition"],
        "inline; filename=\"__ 2024.csv\"; filename*=UTF-8''%E6%95%B0%E6%8D%AE%202024.csv"
    );
    assert_eq!(res.text().await.unwrap(), "城市,人口\n上海,2487\n");
    let gone = delete(
        &app,
        &alice,
        &thread,
        &[("path", "报告"), ("recursive", "true")],
    )
    .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn downloads_state_their_type_and_never_run_as_the_ui() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    let html = b"<html><script>alert(document.cookie)</script></html>";
    upload(&app, &alice, &thread, "page.html", html).await;
    upload(
        &app,
        &alice,
        &thread,
        "logo.svg",
        b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
    .await;
    upload(&app, &alice, &thread, "pixel.png", b"\x89PNG\r\n\x1a\n").await;
    upload(&app, &alice, &thread, "bundle.zip", b"PK\x03\x04").await;
    upload(&app, &alice, &thread, "Makefile", b"all:\n\techo hi\n").await;
    upload(&app, &alice, &thread, "blob", b"\x00\x01\x02").await;
    upload(&app, &alice, &thread, "main.ts", b"export const a = 1;\n").await;

    let cases = [
        ("page.html", "text/html; charset=utf-8", "inline"),
        ("logo.svg", "image/svg+xml", "inline"),
        ("pixel.png", "image/png", "inline"),
        ("bundle.zip", "application/zip", "attachment"),
        ("Makefile", "text/plain; charset=utf-8", "inline"),
        ("blob", "application/octet-stream", "attachment"),
        ("main.ts", "text/plain; charset=utf-8", "inline"),
    ];
    for (name, content_type, disposition) in cases {
        let res = download(&app, &alice, &thread, name).await;
        assert_eq!(res.status(), StatusCode::OK, "{name}");
        let headers = res.headers();
        assert_eq!(headers["content-type"], content_type, "{name}");
        let shown = headers["content-disposition"].to_str().unwrap();
        assert!(
            shown.starts_with(&format!("{disposition}; filename=\"{name}\"")),
            "{name}: {shown}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff", "{name}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("sandbox"),
            "{name}: {csp}"
        );
        assert_eq!(headers["cache-control"], "no-store");
        assert!(headers.contains_key("last-modified"));
    }
    // `download` makes anything an attachment.
    for flag in ["1", "true"] {
        let res = download_with(
            &app,
            &alice,
            &thread,
            &[("path", "page.html"), ("download", flag)],
        )
        .await;
        let shown = res.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(shown.starts_with("attachment;"), "{shown}");
        assert_eq!(res.bytes().await.unwrap().as_ref(), html);
    }
    // The sniffed head is not lost from the body.
    let res = download(&app, &alice, &thread, "Makefile").await;
    assert_eq!(res.text().await.unwrap(), "all:\n\techo hi\n");
}

#[tokio::test]
async fn if_none_match_star_never_replaces_a_file() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    upload(&app, &alice, &thread, "keep.txt", b"mine").await;
    let put = |path: &'static str| {
        app.client
            .put(url(&app, &thread, "/content", &[("path", path)]))
            .bearer_auth(&alice)
            .header("if-none-match", "*")
            .body("theirs")
            .send()
    };
    let refused = json_reply(put("keep.txt").await.unwrap()).await;
    assert_eq!(
        refused.status,
        StatusCode::PRECONDITION_FAILED,
        "{}",
        refused.body
    );
    assert_eq!(refused.code(), Some("precondition_failed"));
    let res = download(&app, &alice, &thread, "keep.txt").await;
    assert_eq!(res.text().await.unwrap(), "mine");
    let created = json_reply(put("new.txt").await.unwrap()).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}

#[tokio::test]
async fn files_and_folders_in_the_wrong_place_conflict() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    upload(&app, &alice, &thread, "dir/a.txt", b"x").await;
    let conflicts = [
        json_reply(download(&app, &alice, &thread, "dir").await).await,
        list(&app, &alice, &thread, &[("path", "dir/a.txt")]).await,
        upload(&app, &alice, &thread, "dir", b"x").await,
        upload(&app, &alice, &thread, "dir/a.txt/b.txt", b"x").await,
        delete(&app, &alice, &thread, &[("path", "dir")]).await,
    ];
    for (i, reply) in conflicts.iter().enumerate() {
        assert_eq!(reply.status, StatusCode::CONFLICT, "#{i}: {}", reply.body);
        assert_eq!(reply.field(), Some("path"), "#{i}");
    }
    for reply in [
        json_reply(download(&app, &alice, &thread, "missing.txt").await).await,
        list(&app, &alice, &thread, &[("path", "missing")]).await,
        delete(&app, &alice, &thread, &[("path", "missing.txt")]).await,
    ] {
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    }
    let gone = delete(
        &app,
        &alice,
        &thread,
        &[("path", "dir"), ("recursive", "true")],
    )
    .await;
    assert_eq!(gone.status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn malformed_queries_are_400s() {
    let app = TestApp::spawn().await;
    let (alice, thread) = thread_of(&app, "alice").await;
    let replies = [
        list(&app, &alice, &thread, &[("bogus", "1")]).await,
        list(&app, &alice, &thread, &[("recursive", "maybe")]).await,
        json_reply(download_with(&app, &alice, &thread, &[]).await).await,
        json_reply(
            download_with(&app, &alice, &thread, &[("path", "a"), ("download", "yes")]).await,
        )
        .await,
        delete(&app, &alice, &thread, &[]).await,
    ];
    for reply in replies {
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        assert_eq!(reply.code(), Some("bad_request"));
    }
    let no_path = app
        .client
        .put(url(&app, &thread, "/content", &[]))
        .bearer_auth(&alice)
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(no_path.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn every_file_operation_needs_a_token() {
    let app = TestApp::spawn().await;
    let (_, thread) = thread_of(&app, "alice").await;
    for (method, suffix) in [
        (Method::GET, ""),
        (Method::DELETE, ""),
        (Method::GET, "/content"),
        (Method::PUT, "/content"),
    ] {
        let res = app
            .client
            .request(
                method.clone(),
                url(&app, &thread, suffix, &[("path", "a.txt")]),
            )
            .body("x")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{method} {suffix}");
        let reply = json_reply(res).await;
        assert_eq!(reply.code(), Some("unauthorized"));
    }
}
