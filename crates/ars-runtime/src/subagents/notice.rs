//! The completion notice of a background child run (SPEC §7): when a child started with
//! [`Delivery::Background`] ends after its parent's run has ended, a system message on the
//! parent thread tells the parent's next turn how it ended, and the parent thread's followers
//! hear of it at once ([`ThreadEvent::Notice`]).
//!
//! The text is for people: it names the subagent, its task and its outcome. The child's ids
//! live in the message's `notice` (clients link through them; the model is shown them beside
//! the text, see `agent_loop::to_model_messages`).
//!
//! **Invariant:** the notice is written by whoever wrote the child's end — the run's own ending
//! path, or whoever ended it in the store (startup recovery for a child cut off by a crash,
//! the reaper, a cancel nobody answered) — and by nobody else, so it is written once and never
//! by a task that polls. The runtime tells exactly that instance's plug-ins of the end
//! (`RunObserver::ended`).

use std::sync::Arc;

use ars_domain::{
    Delivery, Lineage, MessageNotice, MessageRole, NewMessage, Run, RunStatus, Thread,
};
use ars_events::{EventBus, ThreadEvent, preview};
use ars_store::Store;

/// How much of a result a completion notice quotes.
const NOTICE_CHARS: usize = 500;

/// How much of the task a completion notice quotes.
const TASK_CHARS: usize = 80;

/// Writes the notice for `child` (which just ended, on `thread`) if it is a background child
/// whose parent run has already ended, and tells the parent thread's followers.
pub(super) async fn child_ended(
    store: &Arc<dyn Store>,
    bus: &Arc<dyn EventBus>,
    child: &Run,
    thread: &Thread,
) {
    let Some(lineage) = Lineage::of(child, thread) else {
        return;
    };
    if lineage.delivery() != Some(Delivery::Background) {
        return;
    }
    let parent_thread = lineage.parent_thread_id();
    let parent_ended = match store.run(lineage.parent_run_id()).await {
        Ok(Some(parent)) => parent.status.is_terminal(),
        Ok(None) => false,
        Err(e) => {
            tracing::warn!(run_id = %child.id, error = %e, "cannot read a background child's parent run");
            false
        }
    };
    if !parent_ended {
        return;
    }
    let slug = lineage.subagent_slug();
    let notice = NewMessage {
        notice: Some(MessageNotice {
            run_id: child.id,
            thread_id: thread.id.clone(),
            subagent_slug: Some(slug.to_string()),
            status: child.status,
        }),
        ..NewMessage::text(
            parent_thread.clone(),
            None,
            MessageRole::System,
            text(child, slug),
        )
    };
    let message = match store.append_message(&notice).await {
        Ok(message) => message,
        Err(e) => {
            tracing::warn!(thread_id = %parent_thread, error = %e, "cannot append a completion notice");
            return;
        }
    };
    let event = ThreadEvent::Notice {
        message: Box::new(message),
        run: child.clone(),
        subagent_slug: Some(slug.to_string()),
    };
    if let Err(e) = bus.publish_thread(parent_thread, &event).await {
        tracing::warn!(thread_id = %parent_thread, error = %e, "cannot publish a completion notice");
    }
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
