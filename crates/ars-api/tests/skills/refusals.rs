//! Every skills endpoint refuses bad input: malformed, oversized, unauthorised and conflicting.

use super::*;

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
