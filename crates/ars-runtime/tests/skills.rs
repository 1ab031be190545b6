//! The Skills plug-in at run time: `context.skills` selection, progressive disclosure (the
//! prompt lists names, descriptions and paths, never bodies), and personal skills found in
//! the workspace — overriding shared ones, skipped with a warning when malformed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use serde_json::json;

use ars_domain::{
    AgentContext, Backend, NewSkill, RunStatus, ShareConfig, SkillContent, SkillFile, Thread,
};
use ars_events::EventKind;
use ars_runtime::skills::{SkillLibrary, SkillsPlugin};
use ars_runtime::{RuntimeConfig, SubagentMiddlewareFactory};
use common::{Harness, harness_parts, scripted};

async fn skills_harness() -> Harness {
    harness_parts(RuntimeConfig::default(), |store, sandbox| {
        let library = SkillLibrary::new(
            Arc::clone(store) as Arc<dyn ars_store::SkillStore>,
            Arc::clone(sandbox),
        );
        vec![
            Arc::new(SubagentMiddlewareFactory::new()),
            Arc::new(SkillsPlugin::new(library)),
        ]
    })
    .await
}

/// Stores a shared skill `name` of alice's whose body holds `BODY-<name>`.
async fn shared_skill(h: &Harness, name: &str) {
    let text = format!("---\nname: {name}\ndescription: the {name} skill\n---\nBODY-{name}\n");
    h.store
        .create_skill(&NewSkill {
            owner_id: Some(h.caller.id),
            share_config: ShareConfig::default(),
            content: SkillContent {
                name: name.into(),
                description: format!("the {name} skill"),
                license: None,
                compatibility: None,
                metadata: Default::default(),
                allowed_tools: Vec::new(),
                version: format!("v-{name}"),
                files: vec![SkillFile {
                    path: "SKILL.md".into(),
                    content: text.into_bytes(),
                }],
            },
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn parent_and_child_with_different_skills_each_list_their_own_and_read_the_same_files() {
    let h = skills_harness().await;
    shared_skill(&h, "one").await;
    shared_skill(&h, "two").await;
    let kid = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "/home/gem/skills/one/SKILL.md"}}]},
            {"text": "CHILD PROMPT {{system_prompt}} CHILD READ {{last_tool_result}}"}
        ]))),
        tools: Some(vec!["read_file".into()]),
        skills: Some(vec!["two".into()]),
        ..AgentContext::default()
    };
    h.agent("kid", Backend::SubAgent, kid).await;
    let parent = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "task", "arguments": {"description": "read it", "subagent_slug": "kid"}}]},
            {"text": "PARENT PROMPT {{system_prompt}} PARENT GOT {{last_tool_result}}"}
        ]))),
        tools: Some(vec!["read_file".into()]),
        skills: Some(vec!["one".into()]),
        ..AgentContext::default()
    };
    let agent = h.agent("boss", Backend::Default, parent).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let output = run.output.unwrap();
    let (parent_prompt, child_answer) = output.split_once("PARENT GOT").unwrap();
    assert!(
        listed(parent_prompt, "one") && !listed(parent_prompt, "two"),
        "{parent_prompt}"
    );
    let child_answer: serde_json::Value = serde_json::from_str(child_answer.trim()).unwrap();
    let child = child_answer["output"].as_str().unwrap();
    let (child_prompt, child_read) = child.split_once("CHILD READ").unwrap();
    assert!(
        listed(child_prompt, "two") && !listed(child_prompt, "one"),
        "{child_prompt}"
    );
    // The child reads the parent's skill file at the same path: one projection per user.
    assert!(child_read.contains("BODY-one"), "{child_read}");
}

/// Every run refreshes the user's projection, and skips the work when it already names every
/// wanted version: a skill edited or deleted between two runs is what the next run reads.
#[tokio::test]
async fn a_skill_edited_or_deleted_between_runs_is_what_the_next_run_reads() {
    let h = skills_harness().await;
    shared_skill(&h, "one").await;
    shared_skill(&h, "two").await;
    let context = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "/home/gem/skills/one/SKILL.md"}}]},
            {"text": "PROMPT {{system_prompt}} READ {{last_tool_result}}"}
        ]))),
        tools: Some(vec!["read_file".into()]),
        ..AgentContext::default()
    };
    let agent = h.agent("reader", Backend::Default, context).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    let read = |run: ars_domain::Run| {
        assert_eq!(run.status, RunStatus::Success, "{run:?}");
        run.output.unwrap()
    };
    let first = read(h.finish(&thread, "go").await);
    assert!(first.contains("BODY-one"), "{first}");
    // Unchanged: the same files again.
    let again = read(h.finish(&thread, "go").await);
    assert!(again.contains("BODY-one"), "{again}");

    let one = h.store.skill_by_name("one").await.unwrap().unwrap();
    let text = "---\nname: one\ndescription: the one skill\n---\nEDITED-one\n";
    let content = SkillContent {
        name: "one".into(),
        description: "the one skill".into(),
        license: None,
        compatibility: None,
        metadata: Default::default(),
        allowed_tools: Vec::new(),
        version: "v-one-2".into(),
        files: vec![SkillFile {
            path: "SKILL.md".into(),
            content: text.as_bytes().to_vec(),
        }],
    };
    h.store
        .replace_skill_content(one.id, &content)
        .await
        .unwrap();
    let edited = read(h.finish(&thread, "go").await);
    assert!(
        edited.contains("EDITED-one") && !edited.contains("BODY-one"),
        "{edited}"
    );

    h.store.delete_skill(one.id).await.unwrap();
    let deleted = read(h.finish(&thread, "go").await);
    let (prompt, read_back) = deleted.split_once("READ").unwrap();
    assert!(!listed(prompt, "one") && listed(prompt, "two"), "{prompt}");
    assert!(!read_back.contains("EDITED-one"), "{read_back}");
}

/// A thread of a normal agent with `skills` (None: inherited) that answers its system prompt.
async fn prompt_thread(h: &Harness, skills: Option<Vec<&str>>) -> Thread {
    let slug = format!(
        "s{}",
        &ars_domain::RunId::new().to_string().replace('-', "")[20..]
    );
    let context = AgentContext {
        model: Some(scripted(json!([{"text": "{{system_prompt}}"}]))),
        tools: Some(vec!["read_file".into()]),
        skills: skills.map(|s| s.iter().map(|x| x.to_string()).collect()),
        ..AgentContext::default()
    };
    let agent = h.agent(&slug, Backend::Default, context).await;
    h.thread_of(&agent, &h.caller.clone()).await
}

async fn prompt_of(h: &Harness, skills: Option<Vec<&str>>) -> String {
    let thread = prompt_thread(h, skills).await;
    let run = h.finish(&thread, "go").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    run.output.unwrap()
}

fn listed(prompt: &str, name: &str) -> bool {
    prompt.contains(&format!("- {name} ("))
}

#[tokio::test]
async fn context_skills_missing_star_list_empty_and_unknown_select_as_documented() {
    let h = skills_harness().await;
    // Missing: the server default, every skill the user can see.
    let inherited = prompt_of(&h, None).await;
    assert!(listed(&inherited, "csv-data") && listed(&inherited, "delegate-research"));
    let all = prompt_of(&h, Some(vec!["*"])).await;
    assert!(listed(&all, "csv-data") && listed(&all, "delegate-research"));
    let one = prompt_of(&h, Some(vec!["csv-data"])).await;
    assert!(
        listed(&one, "csv-data") && !listed(&one, "delegate-research"),
        "{one}"
    );
    let none = prompt_of(&h, Some(vec![])).await;
    assert!(!none.contains("## Skills"), "{none}");
    // An unknown name is dropped, never widened to all.
    let unknown = prompt_of(&h, Some(vec!["nope"])).await;
    assert!(!unknown.contains("## Skills"), "{unknown}");
}

#[tokio::test]
async fn the_prompt_holds_descriptions_and_paths_not_bodies() {
    let h = skills_harness().await;
    let csv = ars_skills::builtin_skills()
        .into_iter()
        .find(|s| s.name() == "csv-data")
        .unwrap();
    let prompt = prompt_of(&h, Some(vec!["csv-data"])).await;
    assert!(prompt.contains(&csv.manifest.description), "{prompt}");
    assert!(
        prompt.contains("/home/gem/skills/csv-data/SKILL.md"),
        "{prompt}"
    );
    let body_line = csv
        .manifest
        .body
        .lines()
        .find(|l| l.trim().len() > 30)
        .unwrap();
    assert!(
        !prompt.contains(body_line.trim()),
        "a body line leaked: {body_line}"
    );
}

/// Writes a personal skill folder into alice's workspace through her sandbox scope.
async fn personal(h: &Harness, thread: &Thread, name: &str, skill_md: &str) {
    let scope = ars_sandbox::Scope::new(
        thread.user_id,
        thread.runtime_scope_id.clone(),
        thread.workdir_path.clone(),
    )
    .unwrap();
    h.sandbox.prepare(&scope).await.unwrap();
    h.sandbox
        .write(
            &scope,
            &format!("/home/gem/user-data/agents/skills/{name}/SKILL.md"),
            skill_md,
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn a_personal_skill_overrides_a_shared_one_of_the_same_name_and_says_so() {
    let h = skills_harness().await;
    let shared = SkillContent {
        name: "notes".into(),
        description: "the SHARED notes skill".into(),
        license: None,
        compatibility: None,
        metadata: Default::default(),
        allowed_tools: Vec::new(),
        version: "v1".into(),
        files: vec![SkillFile {
            path: "SKILL.md".into(),
            content: b"---\nname: notes\ndescription: the SHARED notes skill\n---\nshared body\n"
                .to_vec(),
        }],
    };
    h.store
        .create_skill(&NewSkill {
            owner_id: Some(h.caller.id),
            share_config: ShareConfig::default(),
            content: shared,
        })
        .await
        .unwrap();
    let thread = prompt_thread(&h, Some(vec!["notes"])).await;
    personal(
        &h,
        &thread,
        "notes",
        "---\nname: notes\ndescription: the PERSONAL notes skill\n---\nmine\n",
    )
    .await;
    let run = h.finish(&thread, "go").await;
    let prompt = run.output.unwrap();
    assert!(prompt.contains("the PERSONAL notes skill"), "{prompt}");
    assert!(!prompt.contains("the SHARED notes skill"), "{prompt}");
    assert!(
        prompt.contains("/home/gem/user-data/agents/skills/notes/SKILL.md"),
        "{prompt}"
    );
    assert!(
        prompt.contains("personal skill wins over a shared one"),
        "{prompt}"
    );
}

#[tokio::test]
async fn a_personal_skill_with_bad_frontmatter_is_skipped_with_a_warning_and_the_run_succeeds() {
    let h = skills_harness().await;
    let thread = prompt_thread(&h, Some(vec!["*"])).await;
    personal(&h, &thread, "broken", "no frontmatter here\n").await;
    let run = h.start(&thread, "go").await;
    let mut events = h.runtime.events().subscribe(run.id, 0).await.unwrap();
    let mut warnings = Vec::new();
    use futures::StreamExt;
    while let Some(event) = events.next().await {
        let event = event.unwrap();
        if let EventKind::Error { message } = &event.kind {
            warnings.push(message.clone());
        }
        if event.kind.is_terminal() {
            break;
        }
    }
    let run = h.wait(&run).await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    assert!(
        warnings.iter().any(|w| w.contains("agents/skills/broken")),
        "{warnings:?}"
    );
    let prompt = run.output.unwrap();
    assert!(prompt.contains("Skipped (invalid SKILL.md)"), "{prompt}");
    assert!(listed(&prompt, "csv-data"), "{prompt}");
}

#[tokio::test]
async fn a_built_in_skills_script_runs_through_execute_in_the_sandbox() {
    let h = skills_harness().await;
    let context = AgentContext {
        model: Some(scripted(json!([
            {"tool_calls": [{"name": "write_file", "arguments": {
                "path": "data.csv", "content": "城市,人口\n北京,21\n上海,24\n"}}]},
            {"tool_calls": [{"name": "execute", "arguments": {
                "command": "python3 /home/gem/skills/csv-data/scripts/csv_summary.py data.csv"}}]},
            {"text": "{{last_tool_result}}"}
        ]))),
        tools: Some(vec!["write_file".into(), "execute".into()]),
        skills: Some(vec!["csv-data".into()]),
        ..AgentContext::default()
    };
    let agent = h.agent("analyst", Backend::Default, context).await;
    let thread = h.thread_of(&agent, &h.caller.clone()).await;
    let run = h.finish(&thread, "summarise").await;
    assert_eq!(run.status, RunStatus::Success, "{run:?}");
    let result: serde_json::Value = serde_json::from_str(run.output.as_deref().unwrap()).unwrap();
    assert_eq!(result["exit_code"], 0, "{result}");
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains('2') && stdout.contains("人口"), "{stdout}");
}
