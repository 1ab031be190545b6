//! Small builders shared by the checks.

use std::collections::BTreeMap;

use ars_domain::{
    Agent, AgentConfig, AgentDraft, Backend, Delivery, NewRun, NewSkill, Role, Run, RunId,
    RunLineage, RunOutcome, RunStatus, ShareConfig, SkillContent, SkillFile, Thread, Usage, User,
    UserId,
};
use ars_store::{AgentFilter, AgentKinds, NewUser, Store};

/// A plain user named `name`, whose password hash is `hash-of-<name>`.
pub async fn user(store: &dyn Store, name: &str) -> User {
    user_with_role(store, name, Role::User).await
}

pub async fn user_with_role(store: &dyn Store, name: &str, role: Role) -> User {
    store
        .create_user(NewUser {
            username: name.to_string(),
            password_hash: format!("hash-of-{name}"),
            role,
        })
        .await
        .unwrap()
}

/// A private normal agent named after its slug, with no shares.
pub fn draft(slug: &str) -> AgentDraft {
    AgentDraft {
        slug: slug.to_string(),
        name: format!("Agent {slug}"),
        description: String::new(),
        backend: Backend::Default,
        config: AgentConfig::default(),
        share_config: ShareConfig::default(),
        is_default: false,
    }
}

/// A private subagent named after its slug, with no shares.
pub fn subagent_draft(slug: &str) -> AgentDraft {
    AgentDraft {
        backend: Backend::SubAgent,
        ..draft(slug)
    }
}

/// A share config with the given visibility and lists, as written (not normalized).
pub fn shares(
    visibility: ars_domain::Visibility,
    users: &[UserId],
    managers: &[UserId],
) -> ShareConfig {
    ShareConfig {
        visibility,
        user_ids: users.to_vec(),
        manager_ids: managers.to_vec(),
    }
}

/// `users` many new users listed and `managers` new managers (as `listed-NN` and
/// `manager-NN`): the share config of a resource shared widely (`Users` visibility), with the
/// listed users and the managers, in the order made.
pub async fn wide_shares(
    store: &dyn Store,
    users: usize,
    managers: usize,
) -> (ShareConfig, Vec<UserId>, Vec<UserId>) {
    let mut listed = Vec::new();
    for i in 0..users {
        listed.push(user(store, &format!("listed-{i:02}")).await.id);
    }
    let mut managing = Vec::new();
    for i in 0..managers {
        managing.push(user(store, &format!("manager-{i:02}")).await.id);
    }
    let config = shares(ars_domain::Visibility::Users, &listed, &managing);
    (config, listed, managing)
}

/// Every agent, subagents included, as an admin lists them.
pub fn everything() -> AgentFilter {
    AgentFilter {
        visible_to: None,
        kinds: AgentKinds::All,
    }
}

/// The sorted copy of `ids`, as the store returns share lists.
pub fn sorted(ids: &[UserId]) -> Vec<UserId> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids
}

/// A user with a normal agent and a subagent of their own, for thread and run checks.
pub struct Owner {
    pub user: User,
    pub agent: Agent,
    pub subagent: Agent,
}

/// `name`'s user, their agent `<name>-agent` and subagent `<name>-helper`.
pub async fn owner(store: &dyn Store, name: &str) -> Owner {
    let user = user(store, name).await;
    let agent = store
        .create_agent(&draft(&format!("{name}-agent")), Some(user.id))
        .await
        .unwrap();
    let subagent = store
        .create_agent(&subagent_draft(&format!("{name}-helper")), Some(user.id))
        .await
        .unwrap();
    Owner {
        user,
        agent,
        subagent,
    }
}

/// A stored top-level thread of `owner` with their agent.
pub async fn root_thread(store: &dyn Store, owner: &Owner, title: &str) -> Thread {
    let thread = Thread::new_root(owner.user.id, owner.agent.id, title.to_string());
    store.create_thread(&thread).await.unwrap()
}

/// A stored child thread of `parent`, running `owner`'s subagent.
pub async fn child_thread(store: &dyn Store, owner: &Owner, parent: &Thread) -> Thread {
    let child = parent.new_child(owner.subagent.id, &owner.subagent.slug, "child".into());
    store.create_thread(&child).await.unwrap()
}

/// A run to create on `thread`, by the thread's user and agent.
pub fn new_run(thread: &Thread, input: &str) -> NewRun {
    NewRun {
        thread_id: thread.id.clone(),
        agent_id: thread.agent_id,
        user_id: thread.user_id,
        input: input.to_string(),
        lineage: None,
        lease: None,
        woken_by: None,
        new_thread: None,
        running: false,
    }
}

/// A subagent run on `child`, started by tool call `call` of `parent`.
pub fn new_child_run(child: &Thread, parent: RunId, call: &str) -> NewRun {
    NewRun {
        lineage: Some(RunLineage {
            parent_run_id: parent,
            parent_tool_call_id: Some(call.to_string()),
            delivery: Some(Delivery::Wait),
        }),
        ..new_run(child, "delegated")
    }
}

/// An outcome with terminal `status`, an empty output (success) and no usage.
pub fn outcome(status: RunStatus) -> RunOutcome {
    let usage = Usage::default();
    match status {
        RunStatus::Success => RunOutcome::Success {
            output: String::new(),
            usage,
        },
        RunStatus::Error => RunOutcome::Error {
            message: "failed".into(),
            code: None,
            usage,
        },
        RunStatus::Timeout => RunOutcome::Timeout { limit_s: 1, usage },
        RunStatus::Interrupted => RunOutcome::Interrupted {
            reason: "stopped".into(),
            usage,
        },
        RunStatus::Cancelled | RunStatus::Pending | RunStatus::Running | RunStatus::Waiting => {
            RunOutcome::Cancelled { usage }
        }
    }
}

/// Ends `run` successfully, so its thread takes a new run.
pub async fn finished(store: &dyn Store, run: &Run) -> Run {
    store
        .finish_run(run.id, &outcome(RunStatus::Success))
        .await
        .unwrap()
        .into_run()
}

/// The models of `user`'s usage rows of the last day and the next, as the roll-up names them.
pub async fn models_used(store: &dyn Store, user: UserId) -> Vec<Option<String>> {
    let now = ars_domain::time::now();
    store
        .usage_rows(&ars_store::UsageFilter {
            user: Some(user),
            from: now - chrono::Duration::days(1),
            to: now + chrono::Duration::days(1),
        })
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.model)
        .collect()
}

/// A file of a skill.
pub fn file(path: &str, content: &[u8]) -> SkillFile {
    SkillFile {
        path: path.to_string(),
        content: content.to_vec(),
    }
}

/// Skill `name`'s content at `version`: a one-line description and just a `SKILL.md`.
pub fn skill_content(name: &str, version: &str) -> SkillContent {
    SkillContent {
        name: name.to_string(),
        description: format!("The {name} skill."),
        license: None,
        compatibility: None,
        metadata: BTreeMap::new(),
        allowed_tools: Vec::new(),
        version: version.to_string(),
        files: vec![file(
            "SKILL.md",
            format!("---\nname: {name}\n---\n").as_bytes(),
        )],
    }
}

/// Skill `name` at version `v1`, owned by `owner` and shared by `share_config`.
pub fn new_skill(name: &str, owner: Option<UserId>, share_config: ShareConfig) -> NewSkill {
    NewSkill {
        owner_id: owner,
        share_config,
        content: skill_content(name, "v1"),
    }
}
