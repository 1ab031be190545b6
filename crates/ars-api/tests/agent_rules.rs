//! SPEC §1–3 over HTTP: list semantics, the subagent consistency rules, defaults, built-ins.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TestApp, normal, subagent};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn list_returns_only_normal_agents_unless_subagents_are_asked_for() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    app.agent(&alice, normal("writer")).await;
    app.agent(&alice, subagent("researcher")).await;

    assert_eq!(app.slugs(&alice, "").await, vec!["writer"]);
    assert_eq!(
        app.slugs(&alice, "?include_subagents=false").await,
        vec!["writer"]
    );
    let all = app.slugs(&alice, "?include_subagents=true").await;
    // Built-in rows first, then by name ("Agent writer" < "Sub researcher").
    assert_eq!(all, vec!["general-purpose", "writer", "researcher"]);
}

#[tokio::test]
async fn is_subagent_is_derived_from_the_backend_when_omitted() {
    let app = TestApp::spawn().await;
    let sub = app.agent(&app.admin, subagent("derived")).await;
    assert_eq!(sub["is_subagent"], true);
    assert_eq!(sub["backend_id"], "SubAgentBackend");
    let agent = app.agent(&app.admin, normal("plain")).await;
    assert_eq!(agent["is_subagent"], false);
    assert_eq!(agent["backend_id"], "DefaultBackend");
}

#[tokio::test]
async fn masquerading_is_refused_on_post_put_and_patch_both_ways() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    // POST.
    let r = app
        .post(
            "/api/agent",
            t,
            json!({"slug": "a", "name": "A", "backend_id": "DefaultBackend", "is_subagent": true}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );
    let r = app.post("/api/agent", t, json!({"slug": "a", "name": "A", "backend_id": "SubAgentBackend", "is_subagent": false})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );
    let r = app
        .post(
            "/api/agent",
            t,
            json!({"slug": "a", "name": "A", "is_subagent": true}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );

    let agent = app.agent(t, normal("normal")).await;
    let sub = app.agent(t, subagent("sub")).await;
    let agent_path = format!("/api/agent/{}", agent["id"].as_str().unwrap());
    let sub_path = format!("/api/agent/{}", sub["id"].as_str().unwrap());
    // PUT.
    let r = app
        .put(
            &agent_path,
            t,
            json!({"slug": "normal", "name": "N", "is_subagent": true}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );
    let r = app.put(&sub_path, t, json!({"slug": "sub", "name": "S", "backend_id": "SubAgentBackend", "is_subagent": false})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );
    // PATCH.
    let r = app
        .patch(&agent_path, t, json!({"is_subagent": true}))
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );
    // Sound on its own, at odds with the stored backend: a conflict with stored state.
    let r = app.patch(&sub_path, t, json!({"is_subagent": false})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("is_subagent"))
    );
    let r = app
        .patch(
            &sub_path,
            t,
            json!({"backend_id": "DefaultBackend", "is_subagent": true}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_subagent"))
    );

    // Nothing was changed by the refused writes.
    assert_eq!(app.get(&agent_path, t).await.body["is_subagent"], false);
    assert_eq!(app.get(&sub_path, t).await.body["is_subagent"], true);
    // A consistent change of backend is fine, and is_subagent follows it.
    let r = app
        .patch(&agent_path, t, json!({"backend_id": "SubAgentBackend"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["is_subagent"], true);
}

#[tokio::test]
async fn unknown_backend_is_refused_naming_backend_id() {
    let app = TestApp::spawn().await;
    let r = app
        .post(
            "/api/agent",
            &app.admin,
            json!({"slug": "x", "name": "X", "backend_id": "Nope"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("backend_id"))
    );
}

#[tokio::test]
async fn a_subagent_can_never_be_the_default_agent() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let mut body = subagent("sub");
    body["is_default"] = json!(true);
    let r = app.post("/api/agent", t, body).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("is_default"))
    );

    let sub = app.agent(t, subagent("sub")).await;
    let path = format!("/api/agent/{}", sub["id"].as_str().unwrap());
    let r = app.post(&format!("{path}/default"), t, json!({})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("is_default"))
    );
    // The stored backend, not the patch, stands in the way: a conflict.
    let r = app.patch(&path, t, json!({"is_default": true})).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("is_default"))
    );
    let r = app
        .post("/api/agent/general-purpose/default", t, json!({}))
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_subagents_subagent_list_must_be_empty_on_every_write() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let mut body = subagent("sub");
    body["config_json"] = json!({"context": {"subagents": ["general-purpose"]}});
    let r = app.post("/api/agent", t, body).await;
    assert_eq!(
        (r.status, r.field()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("config_json.context.subagents")
        )
    );

    let sub = app.agent(t, subagent("sub")).await;
    let path = format!("/api/agent/{}", sub["id"].as_str().unwrap());
    let mut put = subagent("sub");
    put["config_json"] = json!({"context": {"subagents": ["x"]}});
    let r = app.put(&path, t, put).await;
    assert_eq!(
        (r.status, r.field()),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("config_json.context.subagents")
        )
    );
    // The patch alone is sound; the stored backend makes it wrong: a conflict.
    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"subagents": ["x"]}}}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("config_json.context.subagents"))
    );

    // An empty list is accepted and stored as absent.
    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"subagents": []}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body["config_json"]["context"].get("subagents").is_none());

    // Turning a normal agent with an allow-list into a subagent needs the list cleared.
    let mut parent = normal("parent");
    parent["config_json"] = json!({"context": {"subagents": ["sub"]}});
    let parent = app.agent(t, parent).await;
    let r = app
        .patch(
            &format!("/api/agent/{}", parent["id"].as_str().unwrap()),
            t,
            json!({"backend_id": "SubAgentBackend"}),
        )
        .await;
    // The stored allow-list stands in the way of this (alone sound) patch: a conflict.
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("config_json.context.subagents"))
    );
}

#[tokio::test]
async fn turning_the_default_agent_into_a_subagent_needs_an_explicit_clear() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let agent = app.agent(t, normal("main")).await;
    let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());
    assert_eq!(
        app.post(&format!("{path}/default"), t, json!({}))
            .await
            .status,
        StatusCode::OK
    );

    // The stored default flag stands in the way: a conflict with stored state.
    let r = app
        .patch(&path, t, json!({"backend_id": "SubAgentBackend"}))
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("is_default"))
    );
    let r = app
        .put(
            &path,
            t,
            json!({"slug": "main", "name": "Main", "backend_id": "SubAgentBackend"}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::CONFLICT, Some("is_default"))
    );
    assert_eq!(
        app.get(&path, t).await.body["is_default"],
        true,
        "refused writes change nothing"
    );

    let r = app
        .patch(
            &path,
            t,
            json!({"backend_id": "SubAgentBackend", "is_default": false}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["is_default"], false);
    assert_eq!(r.body["is_subagent"], true);
}

#[tokio::test]
async fn there_is_at_most_one_default_agent_and_only_admins_set_it() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let a = app.agent(t, normal("a")).await;
    let b = app.agent(t, normal("b")).await;
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    assert_eq!(
        app.post(&format!("/api/agent/{a_id}/default"), t, json!({}))
            .await
            .body["is_default"],
        true
    );
    assert_eq!(
        app.post(&format!("/api/agent/{b_id}/default"), t, json!({}))
            .await
            .body["is_default"],
        true
    );
    assert_eq!(
        app.get(&format!("/api/agent/{a_id}"), t).await.body["is_default"],
        false
    );
    // Creating with is_default moves it too.
    let mut c = normal("c");
    c["is_default"] = json!(true);
    app.agent(t, c).await;
    assert_eq!(
        app.get(&format!("/api/agent/{b_id}"), t).await.body["is_default"],
        false
    );

    let (_, alice) = app.user("alice").await;
    let mut mine = normal("mine");
    mine["is_default"] = json!(true);
    let r = app.post("/api/agent", &alice, mine).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::FORBIDDEN, Some("is_default"))
    );
    let own = app.agent(&alice, normal("own")).await;
    let r = app
        .post(
            &format!("/api/agent/{}/default", own["id"].as_str().unwrap()),
            &alice,
            json!({}),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn general_purpose_is_built_in_visible_to_every_user_and_undeletable() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app.get("/api/agent/general-purpose", &alice).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body["is_subagent"], true);
    assert_eq!(r.body["backend_id"], "SubAgentBackend");
    assert_eq!(r.body["owner_id"], serde_json::Value::Null);
    assert_eq!(r.body["share_config"]["visibility"], "public");
    assert_eq!(r.body["config_json"], json!({"context": {}}));
    assert!(
        app.slugs(&alice, "?include_subagents=true")
            .await
            .contains(&"general-purpose".to_string())
    );

    for token in [&alice, &app.admin] {
        let r = app.delete("/api/agent/general-purpose", token).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    }
    assert_eq!(
        app.get("/api/agent/general-purpose", &alice).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn only_admins_edit_general_purpose_and_it_keeps_its_identity() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let r = app
        .patch(
            "/api/agent/general-purpose",
            &alice,
            json!({"description": "mine now"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let r = app
        .patch(
            "/api/agent/general-purpose",
            &app.admin,
            json!({"description": "Tuned by the admin"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["description"], "Tuned by the admin");
    let r = app
        .patch(
            "/api/agent/general-purpose",
            &app.admin,
            json!({"slug": "renamed"}),
        )
        .await;
    assert_eq!((r.status, r.field()), (StatusCode::FORBIDDEN, Some("slug")));
    let r = app
        .patch(
            "/api/agent/general-purpose",
            &app.admin,
            json!({"share_config": {"visibility": "private"}}),
        )
        .await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::FORBIDDEN, Some("share_config.visibility"))
    );
}

#[tokio::test]
async fn resolved_context_layers_subagent_defaults_over_base() {
    let mut config = ars_api::ApiConfig::default();
    config.defaults.base.model = Some(ars_domain::ModelConfig {
        provider: "openai".into(),
        name: "base-model".into(),
        temperature: None,
        max_tokens: None,
        top_p: None,
        script: None,
    });
    config.defaults.base.tools = Some(vec!["read_file".into()]);
    let app = TestApp::spawn_with(config).await;
    let (_, alice) = app.user("alice").await;
    let r = app
        .get("/api/agent/general-purpose/resolved-context", &alice)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["model"]["name"], "base-model");
    assert_eq!(r.body["tools"], json!(["read_file"]));
    assert_eq!(
        r.body["limits"]["max_steps"], 30,
        "SubAgentContext limits win over base"
    );
    assert_eq!(r.body["sources"]["model"], "base");
    assert_eq!(r.body["sources"]["limits"], serde_json::Value::Null);
    assert_eq!(r.body["sources"]["system_prompt"], "subagent_defaults");

    let mut own = normal("own-model");
    own["config_json"] = json!({"context": {"model": {"provider": "scripted", "name": "demo"}, "limits": {"max_steps": 3}}});
    app.agent(&alice, own).await;
    let r = app
        .get("/api/agent/own-model/resolved-context", &alice)
        .await;
    assert_eq!(r.body["model"]["name"], "demo");
    assert_eq!(r.body["sources"]["model"], "agent");
    assert_eq!(r.body["limits"]["max_steps"], 3);
    assert_eq!(r.body["limits"]["timeout_s"], 600);
}

#[tokio::test]
async fn put_replaces_and_patch_merges() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let mut body = normal("doc");
    body["description"] = json!("first");
    body["config_json"] = json!({"context": {"system_prompt": "Be brief.", "tools": ["ls"]}});
    let agent = app.agent(t, body).await;
    let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());

    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"tools": ["ls", "grep"]}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["config_json"]["context"]["system_prompt"], "Be brief.",
        "patch keeps siblings"
    );
    assert_eq!(r.body["description"], "first");
    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"system_prompt": null}}}),
        )
        .await;
    assert!(
        r.body["config_json"]["context"]
            .get("system_prompt")
            .is_none(),
        "null removes"
    );

    let r = app
        .put(&path, t, json!({"slug": "doc", "name": "Replaced"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["description"], "",
        "put replaces every writable field"
    );
    assert_eq!(r.body["config_json"], json!({"context": {}}));
    assert_eq!(r.body["created_at"], agent["created_at"]);
}

/// A script object merges as free JSON: `when: null` removes its branches (the patch schema
/// admits it), `turns: null` would leave no script and is refused (a conflict with the stored
/// script, as every merge the stored agent makes wrong), changing nothing.
#[tokio::test]
async fn a_script_patch_removes_its_branches_with_null_but_never_its_turns() {
    let app = TestApp::spawn().await;
    let t = &app.admin;
    let mut body = normal("scripted");
    body["config_json"] = json!({"context": {"model": {"provider": "scripted", "name": "s",
        "script": {"turns": [{"text": "plain"}],
                   "when": [{"input_contains": "x", "turns": [{"text": "branch"}]}]}}}});
    let agent = app.agent(t, body).await;
    let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());
    let script = |body: &Value| body["config_json"]["context"]["model"]["script"].clone();

    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"model": {"provider": "scripted", "name": "s",
                "script": {"turns": null}}}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.body);
    assert_eq!(r.field(), Some("config_json.context.model.script"));
    let stored = app.get(&path, t).await;
    assert_eq!(
        script(&stored.body),
        script(&agent),
        "a refused patch changes nothing"
    );

    let r = app
        .patch(
            &path,
            t,
            json!({"config_json": {"context": {"model": {"provider": "scripted", "name": "s",
                "script": {"when": null}}}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(script(&r.body), json!({"turns": [{"text": "plain"}]}));
}

#[tokio::test]
async fn only_an_admin_can_give_an_agent_network() {
    let app = TestApp::spawn().await;
    let (_, alice) = app.user("alice").await;
    let body = json!({"slug": "net", "name": "Net",
        "config_json": {"context": {"network": true}}});
    let r = app.post("/api/agent", &alice, body).await;
    assert_eq!(
        (r.status, r.field()),
        (StatusCode::FORBIDDEN, Some("config_json.context.network")),
        "{:?}",
        r.body
    );
    // Her own agent, patched: refused too, and nothing changes.
    let mine = app.agent(&alice, normal("mine")).await;
    let id = mine["id"].as_str().unwrap();
    let r = app
        .patch(
            &format!("/api/agent/{id}"),
            &alice,
            json!({"config_json": {"context": {"network": true}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{:?}", r.body);
    let r = app.get(&format!("/api/agent/{id}"), &alice).await;
    assert_ne!(r.body["config_json"]["context"]["network"], true);
    // An admin can grant it.
    let r = app
        .patch(
            &format!("/api/agent/{id}"),
            &app.admin,
            json!({"config_json": {"context": {"network": true}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.body["config_json"]["context"]["network"], true);
    // Alice may keep what the admin granted when she edits something else.
    let r = app
        .patch(
            &format!("/api/agent/{id}"),
            &alice,
            json!({"name": "Renamed"}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{:?}", r.body);
    assert_eq!(r.body["config_json"]["context"]["network"], true);
}

#[tokio::test]
async fn approvals_are_merged_rule_by_rule_checked_naming_the_rule_and_resolved_over_the_defaults()
{
    let mut config = ars_api::ApiConfig::default();
    config.defaults.base.approvals = Some(ars_domain::ApprovalRules(
        [("execute".to_owned(), ars_domain::Approval::Ask)].into(),
    ));
    let app = TestApp::spawn_with(config).await;
    let (_, alice) = app.user("alice").await;
    let mut body = normal("careful");
    body["config_json"] =
        json!({"context": {"approvals": {"write_file": "ask", "mcp__github__*": "deny"}}});
    let agent = app.agent(&alice, body).await;
    let path = format!("/api/agent/{}", agent["id"].as_str().unwrap());

    // A PATCH sets and removes single rules; the others stay.
    let r = app
        .patch(
            &path,
            &alice,
            json!({"config_json": {"context": {"approvals": {"write_file": null, "*": "allow"}}}}),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["config_json"]["context"]["approvals"],
        json!({"*": "allow", "mcp__github__*": "deny"})
    );

    // The resolved context merges the base's rules under the agent's, key by key.
    let r = app.get("/api/agent/careful/resolved-context", &alice).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        r.body["approvals"],
        json!({"*": "allow", "execute": "ask", "mcp__github__*": "deny"})
    );
    assert_eq!(r.body["sources"]["approvals"], "agent");

    // Bad rules are refused naming the rule; nothing changes.
    for (approvals, field) in [
        (
            json!({"rm -rf": "deny"}),
            "config_json.context.approvals.rm -rf",
        ),
        // A rule a patch removes is named as one it sets.
        (
            json!({"rm -rf": null}),
            "config_json.context.approvals.rm -rf",
        ),
        (json!({"execute": "maybe"}), "config_json.context.approvals"),
        (json!(["execute"]), "config_json.context.approvals"),
    ] {
        let r = app
            .patch(
                &path,
                &alice,
                json!({"config_json": {"context": {"approvals": approvals}}}),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
        assert!(
            r.body["error"]["field"]
                .as_str()
                .is_some_and(|f| f.starts_with(field)),
            "{field}: {}",
            r.body
        );
    }
    let r = app.get(&path, &alice).await;
    assert_eq!(
        r.body["config_json"]["context"]["approvals"],
        json!({"*": "allow", "mcp__github__*": "deny"})
    );
}
