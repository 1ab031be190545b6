//! Skills over HTTP: uploads and their refusals, the sharing matrix, personal and built-in
//! skills, precedence, `offered_skills`, and what runs see (the prompt block, the per-user
//! projection, scripts through `execute`, a parent and a child with different selections).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{Cursor, Write};

use common::{Reply, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

const PERSONAL_ROOT: &str = "/home/gem/user-data/agents/skills";

fn skill_md(name: &str, description: &str, body: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n").into_bytes()
}

/// A zip of `entries` (deflated), as any zip tool writes one.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

async fn upload(
    app: &TestApp,
    token: &str,
    query: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Reply {
    app.raw(
        Method::POST,
        &format!("/api/skills?{query}"),
        token,
        content_type,
        body,
    )
    .await
}

/// Uploads a SKILL.md-only shared skill and returns its view, asserting 201.
async fn shared_skill(
    app: &TestApp,
    token: &str,
    name: &str,
    description: &str,
    body: &str,
) -> Value {
    let r = upload(
        app,
        token,
        "target=shared",
        "text/markdown",
        skill_md(name, description, body),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    r.body
}

/// `(id, source, shadowed)` of every skill `token` lists, by name.
async fn listed(app: &TestApp, token: &str) -> Vec<(String, String, bool)> {
    let r = app.get("/api/skills", token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["source"].as_str().unwrap().to_string(),
                s["shadowed"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn names_of(list: &[(String, String, bool)]) -> Vec<String> {
    list.iter().map(|(id, _, _)| id.clone()).collect()
}

/// A raw GET: status, content type, bytes.
async fn get_raw(
    app: &TestApp,
    path: &str,
    token: &str,
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let res = app
        .client
        .get(format!("{}{path}", app.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let (status, headers) = (res.status(), res.headers().clone());
    (status, headers, res.bytes().await.unwrap().to_vec())
}

/// An upload that must be refused: what it is, its content type, its body, a phrase of the
/// message, the field named.
type Refusal = (
    &'static str,
    &'static str,
    Vec<u8>,
    &'static str,
    Option<&'static str>,
);

#[tokio::test]
async fn uploads_that_break_a_rule_are_422_naming_the_problem_and_store_nothing() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let before = listed(&app, &alice).await;
    let good = skill_md("good", "Does good things.", "Body.");
    let long = "x".repeat(1025);
    let mut symlink = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    symlink.start_file("SKILL.md", options).unwrap();
    symlink.write_all(&good).unwrap();
    symlink
        .add_symlink("passwd", "/etc/passwd", options)
        .unwrap();
    let symlink = symlink.finish().unwrap().into_inner();
    let bomb = vec![0_u8; 11 * 1024 * 1024];
    let many: Vec<(String, Vec<u8>)> = (0..201)
        .map(|i| (format!("f{i}.txt"), b"x".to_vec()))
        .collect();
    let mut many_entries: Vec<(&str, &[u8])> = vec![("SKILL.md", &good)];
    many_entries.extend(many.iter().map(|(n, b)| (n.as_str(), b.as_slice())));

    // (what, content type, body, a phrase of the message, the field named)
    let cases: Vec<Refusal> = vec![
        (
            "missing frontmatter",
            "text/markdown",
            b"# Just a title\n".to_vec(),
            "must start with a `---` line",
            Some("SKILL.md"),
        ),
        (
            "uppercase name",
            "text/markdown",
            skill_md("Bad_Name", "d", ""),
            "name",
            Some("frontmatter.name"),
        ),
        (
            "doubled hyphen",
            "text/markdown",
            skill_md("a--b", "d", ""),
            "name",
            Some("frontmatter.name"),
        ),
        (
            "leading hyphen",
            "text/markdown",
            skill_md("-abc", "d", ""),
            "name",
            Some("frontmatter.name"),
        ),
        (
            "description too long",
            "text/markdown",
            skill_md("long", &long, ""),
            "at most 1024 characters",
            Some("frontmatter.description"),
        ),
        (
            "name differs from folder",
            "application/zip",
            zip_of(&[("other/SKILL.md", &good)]),
            "differs from its folder",
            Some("frontmatter.name"),
        ),
        (
            "no SKILL.md",
            "application/zip",
            zip_of(&[("good/README.md", b"hi")]),
            "no SKILL.md",
            Some("SKILL.md"),
        ),
        (
            "traversal",
            "application/zip",
            zip_of(&[("SKILL.md", &good), ("../x", b"x")]),
            "`..` component",
            None,
        ),
        (
            "absolute path",
            "application/zip",
            zip_of(&[("SKILL.md", &good), ("/etc/x", b"x")]),
            "absolute path",
            None,
        ),
        ("symlink", "application/zip", symlink, "symbolic link", None),
        (
            "zip bomb",
            "application/zip",
            zip_of(&[("SKILL.md", &good), ("zeros.bin", &bomb)]),
            "once decompressed",
            None,
        ),
        (
            "too many files",
            "application/zip",
            zip_of(&many_entries),
            "more than 200 files",
            None,
        ),
        (
            "not a zip",
            "application/zip",
            b"definitely not a zip".to_vec(),
            "not a readable zip archive",
            None,
        ),
    ];
    for (what, content_type, body, phrase, field) in cases {
        for target in ["shared", "personal"] {
            let r = upload(
                &app,
                &alice,
                &format!("target={target}"),
                content_type,
                body.clone(),
            )
            .await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{what} ({target}): {}",
                r.body
            );
            let message = r.body["error"]["message"].as_str().unwrap();
            assert!(message.contains(phrase), "{what}: {message}");
            assert_eq!(r.field(), field, "{what}");
        }
    }
    assert_eq!(listed(&app, &alice).await, before, "nothing was stored");
    assert!(app.store.skill_by_name("good").await.unwrap().is_none());
}

#[tokio::test]
async fn an_uploaded_archive_keeps_nested_archives_as_files_and_reads_back_whole() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    let inner = zip_of(&[("inside.txt", b"never unpacked")]);
    let md = skill_md("packer", "Packs things.", "PACKER-BODY");
    let archive = zip_of(&[
        ("packer/SKILL.md", &md),
        ("packer/assets/inner.zip", &inner),
        ("packer/scripts/run.py", b"print(1)\n"),
    ]);
    // Sent as octet-stream: the zip is recognised by its first bytes.
    let r = upload(
        &app,
        &alice,
        "target=shared",
        "application/octet-stream",
        archive,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    let skill = r.body;
    assert_eq!(skill["source"], "shared");
    assert_eq!(skill["owner_id"], alice_id.as_str());
    assert_eq!(skill["share_config"]["visibility"], "private");
    assert_eq!(skill["path"], "/home/gem/skills/packer/SKILL.md");
    assert_eq!(skill["file_count"], 3);
    assert_eq!(
        (skill["shadowed"].as_bool(), skill["can_manage"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(skill["version"].as_str().unwrap().len(), 64);
    let id = skill["id"].as_str().unwrap();

    let files = app
        .get(&format!("/api/skills/{id}/files"), &alice)
        .await
        .body;
    let paths: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["SKILL.md", "assets/inner.zip", "scripts/run.py"]);
    let (status, headers, bytes) = get_raw(
        &app,
        &format!("/api/skills/{id}/files/assets/inner.zip"),
        &alice,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/octet-stream");
    assert_eq!(bytes, inner, "kept byte for byte");
    let (_, headers, bytes) = get_raw(
        &app,
        &format!("/api/skills/{id}/files/scripts/run.py"),
        &alice,
    )
    .await;
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(bytes, b"print(1)\n");

    let (status, headers, zip) = get_raw(&app, &format!("/api/skills/{id}/download"), &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/zip");
    assert_eq!(
        headers["content-disposition"],
        "attachment; filename=\"packer.zip\""
    );
    let bundle = ars_skills::read_zip(&zip, &ars_skills::UploadLimits::default()).unwrap();
    assert_eq!(
        bundle.version(),
        skill["version"].as_str().unwrap(),
        "the download is the upload"
    );
}

#[tokio::test]
async fn shared_skills_follow_the_sharing_matrix_over_http() {
    let app = TestApp::spawn().await;
    let (_, owner) = app.user("owner").await;
    let (manager_id, manager) = app.user("manager").await;
    let (listed_id, listed_user) = app.user("listed").await;
    let (_, stranger) = app.user("stranger").await;
    let admin = app.admin.clone();
    for (visibility, can_see) in [
        ("private", [true, true, true, false, false]),
        ("users", [true, true, true, true, false]),
        ("public", [true, true, true, true, true]),
    ] {
        let name = format!("matrix-{visibility}");
        let skill = shared_skill(&app, &owner, &name, "Matrix.", "").await;
        let id = skill["id"].as_str().unwrap().to_string();
        let share = json!({"share_config": {"visibility": visibility, "user_ids": [listed_id], "manager_ids": [manager_id]}});
        let r = app.put(&format!("/api/skills/{id}"), &owner, share).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(r.body["share_config"]["visibility"], visibility);
        let who = [
            ("owner", &owner),
            ("admin", &admin),
            ("manager", &manager),
            ("listed", &listed_user),
            ("stranger", &stranger),
        ];
        for ((role, token), sees) in who.iter().zip(can_see) {
            let ids = names_of(&listed(&app, token).await);
            assert_eq!(ids.contains(&id), sees, "{role} × {visibility}: list");
            let get = app.get(&format!("/api/skills/{id}"), token).await.status;
            assert_eq!(
                get,
                if sees {
                    StatusCode::OK
                } else {
                    StatusCode::NOT_FOUND
                },
                "{role} × {visibility}: GET"
            );
            let manages = matches!(*role, "owner" | "admin" | "manager");
            let patch = app
                .patch(
                    &format!("/api/skills/{id}"),
                    token,
                    json!({"share_config": {"visibility": visibility}}),
                )
                .await
                .status;
            let expected = match (sees, manages) {
                (_, true) => StatusCode::OK,
                (true, false) => StatusCode::FORBIDDEN,
                (false, false) => StatusCode::NOT_FOUND,
            };
            assert_eq!(patch, expected, "{role} × {visibility}: PATCH");
            // The PATCH kept the lists. Deleting is tried here only by those who may not.
            if !manages {
                let delete = app.delete(&format!("/api/skills/{id}"), token).await.status;
                let expected = if sees {
                    StatusCode::FORBIDDEN
                } else {
                    StatusCode::NOT_FOUND
                };
                assert_eq!(delete, expected, "{role} × {visibility}: DELETE");
            }
        }
        // Managers may delete; the skill is gone for everyone afterwards.
        assert_eq!(
            app.delete(&format!("/api/skills/{id}"), &manager)
                .await
                .status,
            StatusCode::NO_CONTENT
        );
        assert_eq!(
            app.get(&format!("/api/skills/{id}"), &owner).await.status,
            StatusCode::NOT_FOUND
        );
    }
    // The owner and an admin may delete too.
    for token in [&owner, &admin] {
        let skill = shared_skill(&app, &owner, "deletable", "D.", "").await;
        let id = skill["id"].as_str().unwrap();
        assert_eq!(
            app.delete(&format!("/api/skills/{id}"), token).await.status,
            StatusCode::NO_CONTENT
        );
    }
}

#[tokio::test]
async fn personal_skills_are_listed_conflict_without_replace_replace_and_delete() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    let first = zip_of(&[
        ("mine/SKILL.md", &skill_md("mine", "My own.", "v1")),
        ("mine/notes.txt", b"one"),
    ]);
    let r = upload(
        &app,
        &alice,
        "target=personal",
        "application/zip",
        first.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["id"], "personal:mine");
    assert_eq!(r.body["source"], "personal");
    assert_eq!(r.body["path"], format!("{PERSONAL_ROOT}/mine/SKILL.md"));
    assert_eq!(
        (
            r.body["file_count"].as_u64(),
            r.body["can_manage"].as_bool()
        ),
        (Some(2), Some(true))
    );
    assert_eq!(r.body["owner_id"], Value::Null);
    assert_eq!(r.body["share_config"], Value::Null);
    let v1 = r.body["version"].as_str().unwrap().to_string();
    assert!(listed(&app, &alice).await.contains(&(
        "personal:mine".into(),
        "personal".into(),
        false
    )));
    assert!(
        !names_of(&listed(&app, &bob).await).contains(&"personal:mine".to_string()),
        "private to alice"
    );
    assert_eq!(
        app.get("/api/skills/personal:mine", &bob).await.status,
        StatusCode::NOT_FOUND
    );

    let r = upload(&app, &alice, "target=personal", "application/zip", first).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::CONFLICT, Some("conflict")),
        "{}",
        r.body
    );
    let second = zip_of(&[("SKILL.md", &skill_md("mine", "My own, again.", "v2"))]);
    let r = upload(
        &app,
        &alice,
        "target=personal&replace=true",
        "application/zip",
        second,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        (
            r.body["description"].as_str(),
            r.body["file_count"].as_u64()
        ),
        (Some("My own, again."), Some(1))
    );
    assert_ne!(r.body["version"], v1.as_str());
    let (status, _, body) = get_raw(&app, "/api/skills/personal:mine/files/SKILL.md", &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(body).unwrap().contains("v2"));
    assert_eq!(
        app.get("/api/skills/personal:mine/files/notes.txt", &alice)
            .await
            .status,
        StatusCode::NOT_FOUND,
        "the old files went with the old version"
    );

    let r = app
        .patch(
            "/api/skills/personal:mine",
            &alice,
            json!({"share_config": {"visibility": "public"}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("personal skills are private to you")
    );
    assert_eq!(
        app.delete("/api/skills/personal:mine", &bob).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.delete("/api/skills/personal:mine", &alice).await.status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        app.delete("/api/skills/personal:mine", &alice).await.status,
        StatusCode::NOT_FOUND
    );
    assert!(!names_of(&listed(&app, &alice).await).contains(&"personal:mine".to_string()));
}

#[tokio::test]
async fn builtin_skills_are_listed_readable_downloadable_and_never_changed() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let ids = names_of(&listed(&app, &alice).await);
    for id in ["builtin:csv-data", "builtin:delegate-research"] {
        assert!(ids.contains(&id.to_string()), "{id} in {ids:?}");
    }
    let r = app.get("/api/skills/builtin:csv-data", &alice).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        (r.body["source"].as_str(), r.body["can_manage"].as_bool()),
        (Some("builtin"), Some(false))
    );
    assert_eq!(r.body["path"], "/home/gem/skills/csv-data/SKILL.md");
    assert_eq!(
        (r.body["owner_id"].clone(), r.body["created_at"].clone()),
        (Value::Null, Value::Null)
    );
    let files = app
        .get("/api/skills/builtin:csv-data/files", &alice)
        .await
        .body;
    let paths: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"SKILL.md") && paths.contains(&"scripts/csv_summary.py"),
        "{paths:?}"
    );
    let (status, _, bytes) =
        get_raw(&app, "/api/skills/builtin:csv-data/files/SKILL.md", &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8(bytes).unwrap().contains("name: csv-data"));
    let (status, headers, zip) = get_raw(
        &app,
        "/api/skills/builtin:delegate-research/download",
        &alice,
    )
    .await;
    assert_eq!(
        (status, headers["content-type"].to_str().unwrap()),
        (StatusCode::OK, "application/zip")
    );
    let mut archive = zip::ZipArchive::new(Cursor::new(zip)).unwrap();
    assert!(archive.by_name("delegate-research/SKILL.md").is_ok());

    for token in [&alice, &app.admin] {
        assert_eq!(
            app.delete("/api/skills/builtin:csv-data", token)
                .await
                .status,
            StatusCode::FORBIDDEN
        );
        let r = app
            .patch(
                "/api/skills/builtin:csv-data",
                token,
                json!({"share_config": null}),
            )
            .await;
        assert_eq!(r.status, StatusCode::CONFLICT);
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("built-in skills cannot be shared or changed")
        );
        let r = app
            .put("/api/skills/builtin:csv-data", token, json!({}))
            .await;
        assert_eq!(r.status, StatusCode::CONFLICT);
    }
}

#[tokio::test]
async fn a_personal_skill_shadows_a_shared_one_and_a_shared_one_a_builtin() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let shared = shared_skill(&app, &alice, "twin", "The shared twin.", "").await;
    assert_eq!(shared["shadowed"], false);
    let csv = shared_skill(&app, &alice, "csv-data", "My own CSV skill.", "").await;
    let r = upload(
        &app,
        &alice,
        "target=personal",
        "text/markdown",
        skill_md("twin", "The personal twin.", ""),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["shadowed"], false);
    let list = listed(&app, &alice).await;
    let shared_id = shared["id"].as_str().unwrap().to_string();
    let csv_id = csv["id"].as_str().unwrap().to_string();
    assert!(
        list.contains(&(shared_id.clone(), "shared".into(), true)),
        "{list:?}"
    );
    assert!(list.contains(&("personal:twin".into(), "personal".into(), false)));
    assert!(list.contains(&(csv_id, "shared".into(), false)));
    assert!(list.contains(&("builtin:csv-data".into(), "builtin".into(), true)));
    assert_eq!(
        app.get(&format!("/api/skills/{shared_id}"), &alice)
            .await
            .body["shadowed"],
        true
    );
}

#[tokio::test]
async fn offered_skills_follow_context_skills_semantics() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    shared_skill(&app, &alice, "mine", "Mine.", "").await;
    let all = ["csv-data", "delegate-research", "mine"];
    for (slug, skills, expected) in [
        ("inherits", None, &all[..]),
        ("star", Some(json!(["*"])), &all[..]),
        ("one", Some(json!(["csv-data"])), &["csv-data"][..]),
        ("none", Some(json!([])), &[][..]),
        ("unknown", Some(json!(["nope"])), &[][..]),
    ] {
        let mut body = common::normal(slug);
        if let Some(skills) = skills {
            body["config_json"] = json!({"context": {"skills": skills}});
        }
        app.agent(&alice, body).await;
        let r = app
            .get(&format!("/api/agent/{slug}/resolved-context"), &alice)
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert!(
            r.body["sources"].is_object() && r.body["tools"].is_array(),
            "the resolved context is kept"
        );
        let offered: Vec<&str> = r.body["offered_skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(offered, expected, "{slug}");
        if slug == "one" {
            assert_eq!(
                r.body["offered_skills"][0],
                json!({"name": "csv-data", "source": "builtin", "path": "/home/gem/skills/csv-data/SKILL.md"})
            );
        }
    }
}

#[tokio::test]
async fn every_skills_endpoint_refuses_bad_input() {
    let app = TestApp::spawn().await;
    let (alice_id, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    let skill = shared_skill(&app, &alice, "guarded", "Guarded.", "").await;
    let id = skill["id"].as_str().unwrap().to_string();

    // 401 without a token, on every endpoint.
    for (method, path) in [
        (Method::GET, "/api/skills".to_string()),
        (Method::POST, "/api/skills".to_string()),
        (Method::GET, format!("/api/skills/{id}")),
        (Method::PUT, format!("/api/skills/{id}")),
        (Method::PATCH, format!("/api/skills/{id}")),
        (Method::DELETE, format!("/api/skills/{id}")),
        (Method::GET, format!("/api/skills/{id}/download")),
        (Method::GET, format!("/api/skills/{id}/files")),
        (Method::GET, format!("/api/skills/{id}/files/SKILL.md")),
    ] {
        let r = app.call(method.clone(), &path, None, None).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method} {path}");
    }
    // 404 for unknown ids, for everyone.
    for unknown in [
        "0190c3a1-7b2c-7d4e-8f00-123456789abc",
        "builtin:nope",
        "personal:nope",
        "whatever",
        &"x".repeat(300),
    ] {
        for path in [
            format!("/api/skills/{unknown}"),
            format!("/api/skills/{unknown}/download"),
            format!("/api/skills/{unknown}/files"),
            format!("/api/skills/{unknown}/files/SKILL.md"),
        ] {
            assert_eq!(
                app.get(&path, &app.admin).await.status,
                StatusCode::NOT_FOUND,
                "{path}"
            );
        }
        assert_eq!(
            app.delete(&format!("/api/skills/{unknown}"), &alice)
                .await
                .status,
            StatusCode::NOT_FOUND
        );
    }
    assert_eq!(
        app.get(&format!("/api/skills/{id}/files/nope.md"), &alice)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // Paths that could leave the folder are refused before any lookup.
    for bad in ["..%2Fx", "a/..%2F..%2Fx", "%2Fetc%2Fpasswd"] {
        let r = app
            .get(&format!("/api/skills/{id}/files/{bad}"), &alice)
            .await;
        assert_eq!(
            (r.status, r.field()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("path")),
            "{bad}: {}",
            r.body
        );
    }
    // PATCH and PUT: malformed JSON 400, wrong shapes and unknown keys 422, not JSON 415.
    let path = format!("/api/skills/{id}");
    let r = app
        .raw(
            Method::PATCH,
            &path,
            &alice,
            "application/json",
            b"{not json".to_vec(),
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    for (body, field) in [
        (json!({"bogus": 1}), "bogus"),
        (
            json!({"share_config": {"visibility": "everyone"}}),
            "share_config.visibility",
        ),
        (
            json!({"share_config": {"extra": null}}),
            "share_config.extra",
        ),
        (
            json!({"share_config": {"user_ids": ["not-a-uuid"]}}),
            "share_config.user_ids[0]",
        ),
    ] {
        for method in [Method::PATCH, Method::PUT] {
            let r = app
                .call(method.clone(), &path, Some(&alice), Some(body.clone()))
                .await;
            assert_eq!(
                r.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{method} {body}: {}",
                r.body
            );
            assert!(
                r.field()
                    .unwrap()
                    .starts_with(field.split('[').next().unwrap()),
                "{method} {body}: {:?}",
                r.field()
            );
        }
    }
    let r = app
        .raw(Method::PUT, &path, &alice, "text/plain", b"{}".to_vec())
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // A share naming a user that does not exist: 409, as for agents.
    let ghost = "0190c3a1-7b2c-7d4e-8f00-123456789abc";
    let r = app
        .patch(
            &path,
            &alice,
            json!({"share_config": {"visibility": "users", "user_ids": [ghost]}}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("share_config.user_ids"))
    );
    // PATCH null makes it private again; the merge keeps what it does not name.
    let r = app
        .put(
            &path,
            &alice,
            json!({"share_config": {"visibility": "public", "manager_ids": [alice_id]}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = app
        .patch(
            &path,
            &alice,
            json!({"share_config": {"visibility": "users"}}),
        )
        .await;
    assert_eq!(r.body["share_config"]["manager_ids"], json!([alice_id]));
    let r = app
        .patch(&path, &alice, json!({"share_config": null}))
        .await;
    assert_eq!(r.body["share_config"]["visibility"], "private");

    // Uploads: 409 for a taken name (without replace; with replace but not visible), 403 with
    // replace over one only visible, 413 over the body limit, 415 for other types, 400 for a
    // bad query.
    let md = skill_md("guarded", "Guarded, again.", "");
    let r = upload(&app, &alice, "target=shared", "text/markdown", md.clone()).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("frontmatter.name"))
    );
    let r = upload(
        &app,
        &bob,
        "target=shared&replace=true",
        "text/markdown",
        md.clone(),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::CONFLICT,
        "bob cannot see it: {}",
        r.body
    );
    app.patch(
        &path,
        &alice,
        json!({"share_config": {"visibility": "public"}}),
    )
    .await;
    let r = upload(
        &app,
        &bob,
        "target=shared&replace=true",
        "text/markdown",
        md.clone(),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = upload(
        &app,
        &alice,
        "target=shared&replace=true",
        "text/markdown",
        md,
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(
        (r.body["id"].as_str(), r.body["description"].as_str()),
        (Some(id.as_str()), Some("Guarded, again."))
    );
    let big = vec![b'x'; 26 * 1024 * 1024];
    let r = upload(&app, &alice, "target=shared", "application/zip", big).await;
    assert_eq!(
        (r.status, r.code()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    let r = upload(
        &app,
        &alice,
        "target=shared",
        "image/png",
        b"\x89PNG".to_vec(),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    for query in ["target=everywhere", "replace=maybe", "bogus=1"] {
        let r = upload(
            &app,
            &alice,
            query,
            "text/markdown",
            skill_md("q", "Q.", ""),
        )
        .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{query}");
    }
    // A large but allowed archive passes the body limit of JSON routes (1 MiB).
    let payload: Vec<u8> = (0..2 * 1024 * 1024)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let r = upload(
        &app,
        &alice,
        "target=shared",
        "application/zip",
        zip_of(&[
            ("SKILL.md", &skill_md("bulky", "Bulky.", "")),
            ("noise.bin", &payload),
        ]),
    )
    .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

// ---- What runs see -------------------------------------------------------------------------

/// Creates a scripted agent whose context also has `extra` (e.g. `skills`, `tools`).
async fn scripted(app: &TestApp, token: &str, slug: &str, extra: Value, script: Value) -> Value {
    app.agent(token, scripted_body(slug, extra, script)).await
}

fn scripted_body(slug: &str, extra: Value, script: Value) -> Value {
    let mut context = json!({"model": {"provider": "scripted", "name": "demo", "script": script}});
    for (key, value) in extra.as_object().cloned().unwrap_or_default() {
        context[key] = value;
    }
    json!({"slug": slug, "name": format!("Scripted {slug}"), "config_json": {"context": context}})
}

/// Runs `agent` once for `token` and returns the finished run, asserting success.
async fn run_once(app: &TestApp, token: &str, agent: &str) -> Value {
    let thread = app.thread(token, agent).await;
    let run = app.start_run(token, &thread, "go").await;
    let done = app.wait(token, &run, 60).await;
    assert_eq!(done["run"]["status"], "success", "{}", done["run"]);
    done["run"].clone()
}

/// The text between `start` and `end` markers in `text`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {text}"))
        + start.len();
    let to = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("{end} in {text}"))
        + from;
    &text[from..to]
}

#[tokio::test]
async fn the_prompt_holds_descriptions_and_paths_not_bodies() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    shared_skill(
        &app,
        &alice,
        "pdf-tricks",
        "Tricks for PDF files DESC-MARK.",
        "BODY-ONLY-MARK",
    )
    .await;
    scripted(
        &app,
        &alice,
        "prompted",
        json!({}),
        json!([{"text": "{{system_prompt}}"}]),
    )
    .await;
    let output = run_once(&app, &alice, "prompted").await["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        output.contains("pdf-tricks") && output.contains("DESC-MARK"),
        "{output}"
    );
    assert!(
        output.contains("/home/gem/skills/pdf-tricks/SKILL.md"),
        "{output}"
    );
    assert!(
        output.contains("/home/gem/skills/csv-data/SKILL.md"),
        "built-ins too: {output}"
    );
    assert!(!output.contains("BODY-ONLY-MARK"), "never a body: {output}");
}

#[tokio::test]
async fn another_users_run_cannot_read_a_private_shared_skill() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let (_, bob) = app.user("bob").await;
    shared_skill(
        &app,
        &alice,
        "alice-secret",
        "Alice's secret.",
        "SECRET-BODY-MARK",
    )
    .await;
    let path = "/home/gem/skills/alice-secret/SKILL.md";
    let script = json!([
        {"tool_calls": [
            {"name": "read_file", "arguments": {"path": path}},
            {"name": "execute", "arguments": {"command": format!("ls /home/gem/skills; cat {path}")}}
        ]},
        {"text": "READ[{{tool_result.0}}]EXEC[{{tool_result.1}}]"}
    ]);
    let tools = json!({"tools": ["read_file", "execute"]});
    scripted(&app, &bob, "bob-reader", tools.clone(), script.clone()).await;
    scripted(&app, &alice, "alice-reader", tools, script).await;

    let output = run_once(&app, &bob, "bob-reader").await["output"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!output.contains("SECRET-BODY-MARK"), "{output}");
    let read = between(&output, "READ[", "]EXEC[");
    assert!(read.contains("does not exist"), "{read}");
    let (_, exec) = output.rsplit_once("EXEC[").unwrap();
    assert!(
        exec.contains("csv-data"),
        "bob's projection holds the built-ins: {exec}"
    );
    assert!(
        exec.contains("No such file"),
        "but not alice's skill: {exec}"
    );

    let output = run_once(&app, &alice, "alice-reader").await["output"]
        .as_str()
        .unwrap()
        .to_string();
    let read = between(&output, "READ[", "]EXEC[");
    assert!(read.contains("SECRET-BODY-MARK"), "{read}");
    assert!(
        output
            .rsplit("EXEC[")
            .next()
            .unwrap()
            .contains("SECRET-BODY-MARK"),
        "{output}"
    );
}

#[tokio::test]
async fn a_builtin_skills_script_runs_through_execute() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let csv = "city,people\nParis,2100000\nLyon,520000\nNice,340000\n";
    scripted(
        &app,
        &alice,
        "analyst",
        json!({"tools": ["write_file", "execute"]}),
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "data.csv", "content": csv}}]},
            {"tool_calls": [{"name": "execute", "arguments": {"command": "python3 /home/gem/skills/csv-data/scripts/csv_summary.py data.csv"}}]},
            {"text": "SUMMARY[{{last_tool_result}}]"}
        ]),
    )
    .await;
    let output = run_once(&app, &alice, "analyst").await["output"]
        .as_str()
        .unwrap()
        .to_string();
    let summary = between(&output, "SUMMARY[", "]");
    assert!(
        summary.contains('3') && summary.to_lowercase().contains("row"),
        "{summary}"
    );
    assert!(summary.contains("people"), "{summary}");
}

#[tokio::test]
async fn a_parent_and_a_child_list_only_their_own_skills_and_read_the_same_files() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    shared_skill(&app, &alice, "one", "Skill one ONE-DESC.", "ONE-BODY-MARK").await;
    shared_skill(&app, &alice, "two", "Skill two TWO-DESC.", "TWO-BODY-MARK").await;
    let mut child = scripted_body(
        "child",
        json!({"skills": ["two"]}),
        json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "/home/gem/skills/one/SKILL.md"}}]},
            {"text": "CPROMPT[{{system_prompt}}]CREAD[{{last_tool_result}}]CEND"}
        ]),
    );
    child["backend_id"] = json!("SubAgentBackend");
    child["description"] = json!("looks around");
    app.agent(&alice, child).await;
    scripted(
        &app,
        &alice,
        "parent",
        json!({"skills": ["one"]}),
        json!([
            {"tool_calls": [{"name": "task", "arguments": {"description": "look around", "subagent_slug": "child"}}]},
            {"text": "PPROMPT[{{system_prompt}}]PCHILD[{{last_tool_result}}]PEND"}
        ]),
    )
    .await;
    let output = run_once(&app, &alice, "parent").await["output"]
        .as_str()
        .unwrap()
        .to_string();
    let parent_prompt = between(&output, "PPROMPT[", "]PCHILD[");
    assert!(
        parent_prompt.contains("ONE-DESC") && !parent_prompt.contains("TWO-DESC"),
        "{parent_prompt}"
    );
    let child = between(&output, "PCHILD[", "]PEND");
    let child_prompt = between(child, "CPROMPT[", "]CREAD[");
    assert!(
        child_prompt.contains("TWO-DESC") && !child_prompt.contains("ONE-DESC"),
        "{child_prompt}"
    );
    let child_read = between(child, "CREAD[", "]CEND");
    assert!(
        child_read.contains("ONE-BODY-MARK"),
        "the projection holds every visible skill: {child_read}"
    );
}

#[tokio::test]
async fn a_personal_skill_with_bad_frontmatter_is_skipped_with_a_warning_and_the_run_succeeds() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    scripted(
        &app,
        &alice,
        "writer",
        json!({"tools": ["write_file"]}),
        json!([
            {"tool_calls": [{"name": "write_file", "arguments": {"path": format!("{PERSONAL_ROOT}/broken/SKILL.md"), "content": "no frontmatter here"}}]},
            {"text": "written"}
        ]),
    )
    .await;
    run_once(&app, &alice, "writer").await;
    scripted(
        &app,
        &alice,
        "prompted",
        json!({}),
        json!([{"text": "{{system_prompt}}"}]),
    )
    .await;
    let run = run_once(&app, &alice, "prompted").await;
    let output = run["output"].as_str().unwrap();
    assert!(output.contains("broken"), "a note in the prompt: {output}");
    assert!(
        output.contains("csv-data"),
        "the other skills are still listed: {output}"
    );
    let (_, events) = app.events(&alice, run["id"].as_str().unwrap(), None).await;
    let warning = events
        .iter()
        .find(|e| e.event == "error")
        .unwrap_or_else(|| panic!("an error event in {events:?}"));
    assert!(
        warning.data["message"].as_str().unwrap().contains("broken"),
        "{:?}",
        warning.data
    );
    // The broken folder is not a skill in the API either, but it is still the user's to delete.
    assert!(!names_of(&listed(&app, &alice).await).contains(&"personal:broken".to_string()));
    assert_eq!(
        app.delete("/api/skills/personal:broken", &alice)
            .await
            .status,
        StatusCode::NO_CONTENT
    );
}
