//! The completion notice of a background child run (SPEC §7): when a child started with
//! [`Delivery::Background`] ends after its parent's run has ended, a system message on the
//! parent thread tells the parent's next turn how it ended.
//!
//! **Invariant:** the notice is written by whoever wrote the child's end — the run's own ending
//! path, or startup recovery for a child cut off by a crash — and by nobody else, so it is
//! written once and never by a task that polls.

use std::sync::Arc;

use ars_domain::{Delivery, MessageRole, NewMessage, Run, Thread};
use ars_store::Store;

/// How much of a result a completion notice quotes.
const NOTICE_CHARS: usize = 500;

/// Writes the notice for `child` (which just ended, on `thread`) if it is a background child
/// whose parent run has already ended.
pub(super) async fn child_ended(store: &Arc<dyn Store>, child: &Run, thread: &Thread) {
    let (Some(Delivery::Background), Some(parent_run), Some(parent_thread)) = (
        child.delivery,
        child.parent_run_id,
        thread.parent_thread_id.as_ref(),
    ) else {
        return;
    };
    let parent_ended = match store.run(parent_run).await {
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
    let result = child
        .output
        .as_deref()
        .or(child.error.as_deref())
        .unwrap_or("");
    let short: String = result.chars().take(NOTICE_CHARS).collect();
    let content = format!(
        "Background subagent run {} ({}) finished with status {}: {}",
        child.id,
        thread.subagent_slug.as_deref().unwrap_or("subagent"),
        child.status.as_str(),
        short
    );
    let notice = NewMessage::text(parent_thread.clone(), None, MessageRole::System, content);
    if let Err(e) = store.append_message(&notice).await {
        tracing::warn!(thread_id = %parent_thread, error = %e, "cannot append a completion notice");
    }
}
