//! How a background child's end reaches its parent thread (SPEC §7, issue 24 §3): once, as the
//! parent agent's `subagent_results` says.
//!
//! - `wake` (the default): the parent acts on the result without being asked. A parent thread
//!   with an active run gets the completion notice as a message into that run (`steer`), read
//!   before its next model call; an idle one gets a new run whose input is the notice (a
//!   *wake*) — at most [`SubagentSettings::max_wakes_per_hour`] per thread, a note past it.
//! - `note`: once the parent's run has ended, a completion notice on the parent thread, read by
//!   its next run.
//!
//! While the parent's own run is still going it may collect the child itself: a tool answering
//! an ended child's result (`subagent_await`, `subagent_status`) tells the end. What it has not
//! collected a sweep later tells: as a message into that run (`wake`), or once it has ended.
//!
//! The text is for people: it names the subagent, its task and its outcome. The child's ids
//! live in the message's `notice` (clients link through them; the model is shown them beside
//! the text, see `agent_loop`).
//!
//! **Invariant:** the end is told exactly once. Whatever tells it — the notice message, the
//! message into a running parent, the wake run — is written in the same transaction that marks
//! the child told (`NewMessage::tells`, `StartRun::woken_by`, `RunStore::tell_parent`), so two
//! tellers cannot both tell. The writer of the child's end tells it at once
//! (`RunObserver::ended`); a teller that stopped first (a crash between the end and the
//! telling) leaves it untold, and every instance's heartbeat sweeps for such ends
//! ([`sweep`]).

use std::time::Duration;

use ars_domain::{
    Caller, Delivery, Lineage, MessageNotice, MessageRole, NewMessage, Run, RunInput, RunStatus,
    SubagentResults, Thread,
};
use ars_events::{ThreadEvent, preview};
use ars_store::StoreError;

use super::SubagentSettings;
use crate::runs::{Runs, RuntimeError, StartRun};

/// How much of a result a completion notice quotes.
const NOTICE_CHARS: usize = 500;

/// How much of the task a completion notice quotes.
const TASK_CHARS: usize = 80;

/// How often telling is tried again when the parent thread's run starts or ends meanwhile.
const ATTEMPTS: usize = 4;

/// How long an untold end is left to its writer before a sweep tells it.
const SWEEP_GRACE: Duration = Duration::from_secs(1);

/// The window `max_wakes_per_hour` counts in.
const WAKE_WINDOW: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// Tells `child` (which just ended, on `thread`) to its parent thread if it is a background
/// child nobody has told of yet.
pub(super) async fn child_ended(
    runs: &dyn Runs,
    settings: &SubagentSettings,
    child: &Run,
    thread: &Thread,
) {
    told(runs, settings, child, thread, Teller::End).await;
}

/// Who tells a child's end.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Teller {
    /// The writer of the end, at once.
    End,
    /// A sweep, a while later.
    Sweep,
}

async fn told(
    runs: &dyn Runs,
    settings: &SubagentSettings,
    child: &Run,
    thread: &Thread,
    teller: Teller,
) {
    if let Err(e) = tell(runs, settings, child, thread, teller).await {
        // Left untold: a sweep tries again.
        tracing::warn!(run_id = %child.id, error = %e, "cannot tell a background child's end to its parent");
    }
}

/// Tells every background child's end that is still untold a while after it was written.
pub(super) async fn sweep(runs: &dyn Runs, settings: &SubagentSettings) {
    let store = runs.store();
    let before = ars_domain::time::now() - SWEEP_GRACE;
    let untold = match store.untold_children(before).await {
        Ok(ids) => ids,
        Err(e) => {
            tracing::warn!(error = %e, "cannot look for untold background results");
            return;
        }
    };
    for id in untold {
        let found = match store.run(id).await {
            Ok(Some(child)) => match store.thread(&child.thread_id).await {
                Ok(Some(thread)) => Some((child, thread)),
                _ => None,
            },
            _ => None,
        };
        let Some((child, thread)) = found else {
            continue;
        };
        told(runs, settings, &child, &thread, Teller::Sweep).await;
    }
}

async fn tell(
    runs: &dyn Runs,
    settings: &SubagentSettings,
    child: &Run,
    thread: &Thread,
    teller: Teller,
) -> Result<(), StoreError> {
    let Some(lineage) = Lineage::of(child, thread) else {
        return Ok(());
    };
    if lineage.delivery() != Some(Delivery::Background) || !child.status.is_terminal() {
        return Ok(());
    }
    let store = runs.store();
    let Some(parent_thread) = store.thread(lineage.parent_thread_id()).await? else {
        // Deleted with its children: there is no one to tell.
        return Ok(());
    };
    let slug = lineage.subagent_slug();
    let notice = MessageNotice {
        run_id: child.id,
        thread_id: thread.id.clone(),
        subagent_slug: Some(slug.to_string()),
        status: child.status,
    };
    let words = text(child, slug);
    let message = |run: Option<ars_domain::RunId>| NewMessage {
        notice: Some(notice.clone()),
        steer: run.is_some(),
        tells: Some(child.id),
        spent: None,
        ..NewMessage::text(
            parent_thread.id.clone(),
            run,
            MessageRole::System,
            words.clone(),
        )
    };
    let owner = store.user(parent_thread.user_id).await?;
    let mode = match (&owner, store.agent(parent_thread.agent_id).await?) {
        // A disabled owner's agent is not started on their behalf.
        (Some(owner), Some(agent)) if !owner.disabled => runs
            .context_of(&agent)
            .await
            .map_or(SubagentResults::Note, |c| c.subagent_results),
        _ => SubagentResults::Note,
    };
    for _ in 0..ATTEMPTS {
        let active = store.active_run(&parent_thread.id).await?;
        // The parent's own run is still going: it may be collecting the child right now
        // (`subagent_await` tells the end as it answers). Left to a sweep: a `wake` parent
        // that has not collected it by then reads it as a message; otherwise it is told once
        // the parent's run has ended.
        let parents_own = active
            .as_ref()
            .is_some_and(|a| a.id == lineage.parent_run_id());
        if parents_own && (teller == Teller::End || mode == SubagentResults::Note) {
            return Ok(());
        }
        let written = match (mode, active, &owner) {
            (SubagentResults::Wake, Some(active), _) => {
                store.append_message(&message(Some(active.id))).await
            }
            (SubagentResults::Wake, None, Some(owner)) => {
                let since = ars_domain::time::now() - WAKE_WINDOW;
                let wakes = store.wakes_since(&parent_thread.id, since).await?;
                if wakes >= u64::from(settings.max_wakes_per_hour) {
                    tracing::warn!(
                        thread_id = %parent_thread.id,
                        run_id = %child.id,
                        max_wakes_per_hour = settings.max_wakes_per_hour,
                        "background results woke this thread too often in the last hour; \
                         leaving a note instead of starting a run"
                    );
                    store.append_message(&message(None)).await
                } else {
                    let start = StartRun {
                        thread: parent_thread.clone(),
                        caller: Caller {
                            id: owner.id,
                            role: owner.role,
                        },
                        input: RunInput::new(words.as_str())
                            .map_err(|e| StoreError::Invalid(e.to_string()))?,
                        parent: None,
                        replace_from: None,
                        woken_by: Some(notice.clone()),
                    };
                    match runs.start_run(start).await {
                        Ok(_) => return Ok(()),
                        // Another run took the thread first: tell that one.
                        Err(RuntimeError::Busy { .. }) => continue,
                        Err(RuntimeError::Store(e)) => Err(e),
                        Err(e) => Err(StoreError::Invalid(e.to_string())),
                    }
                }
            }
            (SubagentResults::Wake, None, None) | (SubagentResults::Note, ..) => {
                store.append_message(&message(None)).await
            }
        };
        match written {
            Ok(message) => {
                let event = ThreadEvent::Notice {
                    message: Box::new(message),
                    run: child.clone(),
                    subagent_slug: Some(slug.to_string()),
                };
                if let Err(e) = runs
                    .events()
                    .publish_thread(&parent_thread.id, &event)
                    .await
                {
                    tracing::warn!(thread_id = %parent_thread.id, error = %e, "cannot publish a completion notice");
                }
                return Ok(());
            }
            // Told by someone else.
            Err(StoreError::Conflict { .. }) => return Ok(()),
            // The run it was meant for ended in between: look again.
            Err(StoreError::RunEnded { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Invalid(format!(
        "thread {} kept starting and ending runs",
        parent_thread.id
    )))
}

/// "Background subagent `researcher` failed (task: “Summarise the notes”): no model
/// configured …": who, what, how it ended, and its answer or reason.
fn text(child: &Run, slug: &str) -> String {
    let outcome = match child.status {
        RunStatus::Success => "finished",
        RunStatus::Error => "failed",
        RunStatus::Timeout => "timed out",
        RunStatus::Cancelled => "was cancelled",
        RunStatus::Interrupted => "was interrupted",
        RunStatus::Pending | RunStatus::Running | RunStatus::Waiting => "ended",
    };
    let task = child.input.split_whitespace().collect::<Vec<_>>().join(" ");
    let task = preview(&task, TASK_CHARS);
    let result = child
        .output
        .as_deref()
        .or(child.error.as_deref())
        .unwrap_or("")
        .trim();
    if result.is_empty() {
        format!("Background subagent `{slug}` {outcome} (task: “{task}”).")
    } else {
        let result = preview(result, NOTICE_CHARS);
        format!("Background subagent `{slug}` {outcome} (task: “{task}”): {result}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{AgentId, ThreadId, Usage, UserId};

    fn child(status: RunStatus, output: Option<&str>, error: Option<&str>) -> Run {
        Run {
            id: ars_domain::RunId::new(),
            thread_id: ThreadId::new(),
            agent_id: AgentId::new(),
            user_id: UserId::new(),
            status,
            input: "Summarise\nthe   notes".into(),
            output: output.map(str::to_string),
            error: error.map(str::to_string),
            error_code: None,
            usage: Usage::default(),
            lineage: Some(ars_domain::RunLineage {
                parent_run_id: ars_domain::RunId::new(),
                parent_tool_call_id: None,
                delivery: Some(Delivery::Background),
            }),
            created_at: ars_domain::time::now(),
            started_at: None,
            finished_at: None,
            pending: Vec::new(),
        }
    }

    #[test]
    fn a_notice_names_the_subagent_its_task_and_outcome_in_words_without_ids() {
        let failed = child(RunStatus::Error, None, Some("no model configured"));
        let notice = text(&failed, "general-purpose");
        assert_eq!(
            notice,
            "Background subagent `general-purpose` failed (task: “Summarise the notes”): no \
             model configured"
        );
        assert!(!notice.contains(&failed.id.to_string()));
        let done = child(RunStatus::Success, Some("The summary."), None);
        assert!(text(&done, "r").contains("`r` finished (task: "));
        let cancelled = child(RunStatus::Cancelled, None, None);
        assert!(text(&cancelled, "r").ends_with("was cancelled (task: “Summarise the notes”)."));
        let long = child(RunStatus::Success, Some(&"x".repeat(2000)), None);
        assert!(text(&long, "r").chars().count() < 700);
    }
}
