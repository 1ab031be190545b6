//! Skills over HTTP: uploads and their refusals, the sharing matrix, personal and built-in
//! skills, precedence, `offered_skills`, and what runs see (the prompt block, the per-user
//! projection, scripts through `execute`, a parent and a child with different selections).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
#[path = "skills/in_runs.rs"]
mod in_runs;
#[path = "skills/refusals.rs"]
mod refusals;

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
