//! Subagents (SPEC §2, §4, §7), a plug-in that owns child runs end to end.
//!
//! When a **normal** agent's run is built, [`SubagentMiddlewareFactory`] normalises
//! `context.subagents` into the allow-list of subagents visible to the run's user and, when that
//! list is non-empty, mounts a middleware that adds `task`, `subagent_start`,
//! `subagent_status`, `subagent_cancel`, `subagent_await`, `subagent_list` and `subagent_send`,
//! and tells the model about them. It is never mounted for `SubAgentBackend`: subagents do not nest.
//!
//! A child run is the ordinary [`Runs::start_run`] on a child thread
//! `<parent>_sub_<slug>_<uuid8>` that shares the parent's runtime scope and workdir, with a
//! [`ParentLink`](crate::ParentLink): its lineage, the calling tool's cancel token when the
//! parent waits (`Delivery::Wait`), and this plug-in's own pool of slots. Through the plug-in
//! hooks it also follows every child run (`children`): the parent thread's followers hear of
//! each change of the child's entry, and a background child's end reaches the parent thread once
//! — waking it or leaving a note, as the parent agent's `subagent_results` says (`notice`); a
//! run's total tokens include its children's.
//!
//! A plug-in: the server assembly registers [`SubagentMiddlewareFactory`]; the runtime core
//! does not import this module.

mod children;
mod notice;
mod progress;
mod tools;

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;

use ars_domain::{Agent, Caller, Lineage, Run, Thread, Usage, UserId};
use ars_store::{AgentFilter, AgentKinds, Store, StoreError};

use crate::feed::RunObserver;
use crate::middleware::Middleware;
use crate::plugin::{MiddlewareFactory, RunSetup};
use crate::runs::{Runs, Slots};
use crate::tool::Tool;

pub use progress::summarize;

/// The subagents plug-in: mounts the task middleware on normal agents' runs and follows the
/// child runs it starts.
#[derive(Default)]
pub struct SubagentMiddlewareFactory {
    settings: SubagentSettings,
    /// Execution slots of child runs, apart from the runtime's: a parent waiting in `task`
    /// holds its slot, so children drawing from the same pool could starve behind their
    /// parents. Subagents never nest, so two pools cannot deadlock. Sized like the runtime's
    /// own pool, at the first run it shapes (the plug-in is built before the runtime).
    slots: OnceLock<Slots>,
}

impl SubagentMiddlewareFactory {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_settings(settings: SubagentSettings) -> Self {
        Self {
            settings,
            ..Self::default()
        }
    }
}

/// The server's settings for subagents (`[subagents]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubagentSettings {
    /// The most runs background results start on one thread within an hour; past it, they
    /// leave a note (and a log line).
    pub max_wakes_per_hour: u32,
}

impl Default for SubagentSettings {
    fn default() -> Self {
        Self {
            max_wakes_per_hour: 30,
        }
    }
}

#[async_trait]
impl MiddlewareFactory for SubagentMiddlewareFactory {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        if setup.agent.is_subagent {
            return None;
        }
        let allowed = allowed_subagents(
            setup.runs.store().as_ref(),
            setup.caller,
            &setup.context.subagents,
        )
        .await;
        if allowed.is_empty() {
            return None;
        }
        let slots = self
            .slots
            .get_or_init(|| Slots::new(setup.runs.max_concurrent_runs()))
            .clone();
        Some(Arc::new(SubagentMiddleware {
            shared: Arc::new(Shared {
                runs: setup.runs.handle(),
                caller: *setup.caller,
                thread: setup.thread.clone(),
                allowed,
                slots,
            }),
        }))
    }

    /// Follows child runs: their parent thread hears of them, and their end may leave a notice.
    fn observe(&self, run: &Run, thread: &Thread, runs: &dyn Runs) -> Option<Arc<dyn RunObserver>> {
        let lineage = Lineage::of(run, thread)?;
        Some(children::Child::follow(
            run,
            thread,
            lineage,
            runs,
            self.settings,
        ))
    }

    /// Tells the background results whose teller stopped before telling them.
    async fn sweep(&self, runs: &dyn Runs) {
        notice::sweep(runs, &self.settings).await;
    }

    /// A run's children's tokens. A child has no children of its own (subagents do not nest),
    /// so one level is all there is; the runtime knows them without a read when they all
    /// ended here.
    async fn usage_beyond(&self, run: &Run, runs: &dyn Runs) -> Result<Usage, StoreError> {
        let mut total = Usage::default();
        if run.lineage.is_some() {
            return Ok(total);
        }
        if let Some(spent) = runs.started_usage(run.id) {
            return Ok(spent);
        }
        for child in runs.store().child_runs(run.id).await? {
            total.add(child.usage);
        }
        Ok(total)
    }
}

/// The subagents a run may call: every visible subagent when `configured` is empty, else
/// exactly the configured slugs that are visible subagents (others are dropped and logged).
pub async fn allowed_subagents(
    store: &dyn Store,
    caller: &Caller,
    configured: &[String],
) -> Vec<Agent> {
    let filter = AgentFilter {
        visible_to: (!caller.is_admin()).then_some(caller.id),
        kinds: AgentKinds::Subagents,
    };
    let visible: Vec<Agent> = match store.list_agents(filter).await {
        Ok(agents) => agents
            .into_iter()
            // The store answers the subagents the caller can see; checked again here, so a
            // listing mistake never mounts one they cannot.
            .filter(|a| caller.can_view(a))
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "cannot list subagents; none mounted");
            return Vec::new();
        }
    };
    if configured.is_empty() {
        return visible;
    }
    let mut allowed = Vec::new();
    for slug in configured {
        match visible.iter().find(|a| &a.slug == slug) {
            Some(agent) => allowed.push(agent.clone()),
            None => tracing::warn!(
                %slug,
                user = %caller.id,
                "configured subagent is not a subagent visible to this user; dropped"
            ),
        }
    }
    allowed
}

/// A subagent run of a thread, with the slug of the subagent that ran it.
#[derive(Clone, Debug, PartialEq)]
pub struct SubagentRun {
    pub run: Run,
    pub slug: Option<String>,
}

/// The subagent runs started from `thread` for `user`, oldest first: what `subagent_list` and
/// the API's status panel list.
pub async fn subagent_runs(
    store: &dyn Store,
    thread: &Thread,
    user: UserId,
) -> Result<Vec<SubagentRun>, StoreError> {
    let children = store.child_threads(&thread.id).await?;
    let runs = store.subagent_runs(&thread.id).await?;
    Ok(runs
        .into_iter()
        .filter(|r| r.user_id == user)
        .map(|run| SubagentRun {
            slug: children
                .iter()
                .find(|t| t.id == run.thread_id)
                .and_then(|t| t.subagent_slug().map(str::to_string)),
            run,
        })
        .collect())
}

/// What the tools of one parent run share.
pub(crate) struct Shared {
    pub runs: Arc<dyn Runs>,
    pub caller: Caller,
    /// The parent thread.
    pub thread: Thread,
    pub allowed: Vec<Agent>,
    /// Where its children wait for execution slots.
    pub slots: Slots,
}

struct SubagentMiddleware {
    shared: Arc<Shared>,
}

/// The task tool names, so callers can recognise them.
pub const TASK_TOOLS: [&str; 7] = [
    "task",
    "subagent_start",
    "subagent_status",
    "subagent_cancel",
    "subagent_await",
    "subagent_list",
    "subagent_send",
];

impl Middleware for SubagentMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        let mut section = String::from(
            "\n\n## Subagents\nYou can delegate work to these subagents (slug: what it does):\n",
        );
        for agent in &self.shared.allowed {
            let description = if agent.description.is_empty() {
                &agent.name
            } else {
                &agent.description
            };
            section.push_str(&format!("- {}: {}\n", agent.slug, description));
        }
        section.push_str(
            "\nUse `task` for short work whose result you need now: it waits for the subagent and \
             returns its answer. Use `subagent_start` for long or parallel work: it returns a \
             run_id at once; follow it with `subagent_status`, collect it with `subagent_await`, \
             stop it with `subagent_cancel`, and see them all with `subagent_list`. Use \
             `subagent_send` to tell a running subagent something it should know now, or to \
             give one that has finished a follow-up on its thread. Several \
             `task` or `subagent_start` calls in one turn run in parallel. Pass a thread_id \
             from an earlier result to continue that subagent's conversation. Subagents work \
             in your workdir: files they write are the files you read. Call subagents only \
             through these tools, never through the shell, curl or the HTTP API.\n",
        );
        prompt.push_str(&section);
    }

    fn tools(&self, tools: &mut Vec<Arc<dyn Tool>>) {
        tools.retain(|t| !TASK_TOOLS.contains(&t.name()));
        tools.extend(tools::all(&self.shared));
    }
}
