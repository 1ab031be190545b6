//! What runs see of skills: the prompt block holds descriptions and paths, the per-user
//! projection, a built-in skill's script through `execute`, a parent and a child with different
//! selections, and a personal skill with bad frontmatter.

use super::*;

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
