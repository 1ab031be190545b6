//! Waiting runs. A run whose turn needs people's decisions writes what it waits on and ends its
//! task: it holds no lease and no slot, so it survives restarts unchanged. Decisions reaching
//! any instance take it back (`RunStore::resume_run`, only while it still waits on exactly
//! what they were checked against) and execute it there; the heartbeat's sweep rejects what
//! nobody decided within the agent's `approval_timeout_s`.

use std::collections::HashMap;

use ars_domain::waiting::{self, PendingRequest};
use ars_domain::{
    Caller, DecisionInput, Lease, Resolution, Run, RunId, RunStatus, Thread, ValidationError,
};
use ars_events::{EventKind, ThreadEvent};
use ars_store::StoredWaiting;

use super::{Runtime, lease};
use crate::emitter::Emitter;
use crate::runs::RuntimeError;

impl Runtime {
    /// After `run` started waiting: the `waiting` status for its followers, its row for its
    /// thread's followers and the plug-ins following it, and what it waits on for the
    /// followers of its thread and of the thread above it.
    pub(super) async fn waits(&self, emitter: &Emitter, thread: &Thread, run: Run) {
        emitter.emit(EventKind::status(RunStatus::Waiting)).await;
        self.tell_changed(&emitter.feed, &run).await;
        self.publish_up(thread, ThreadEvent::ApprovalRequested { run })
            .await;
    }

    /// Decides everything run `run_id` waits on at once and resumes it on this instance.
    /// `NotWaiting` when it does not wait (any more); `Invalid` when the decisions do not name
    /// each pending call exactly once, as its kind needs, or edited arguments do not fit the
    /// tool's schema.
    pub async fn decide(
        &self,
        run_id: RunId,
        decisions: &[DecisionInput],
    ) -> Result<Run, RuntimeError> {
        let Some(stored) = self.inner.store.run_waiting(run_id).await? else {
            let run = self.stored_run(run_id).await?;
            return Err(RuntimeError::NotWaiting { status: run.status });
        };
        let resolutions =
            waiting::resolve(&stored.waiting.items, decisions).map_err(RuntimeError::Invalid)?;
        check_edits(&stored, decisions)?;
        self.resume(run_id, stored, resolutions).await
    }

    /// Takes the waiting run and executes it here with `resolutions`.
    async fn resume(
        &self,
        run_id: RunId,
        stored: StoredWaiting,
        resolutions: HashMap<String, Resolution>,
    ) -> Result<Run, RuntimeError> {
        let store = &self.inner.store;
        let lease = Lease {
            owner: self.inner.config.instance_id.clone(),
            expires_ms: lease::now_ms() + lease::ttl_ms(&self.inner.config),
        };
        let Some(run) = store.resume_run(run_id, &lease, &stored.stored).await? else {
            let now = self.stored_run(run_id).await?;
            return Err(RuntimeError::NotWaiting { status: now.status });
        };
        let thread = store
            .thread(&run.thread_id)
            .await?
            .ok_or(RuntimeError::NotFound(ars_domain::Subject::Thread))?;
        let user = store
            .user(run.user_id)
            .await?
            .ok_or(RuntimeError::NotFound(ars_domain::Subject::User))?;
        let call_ids = stored
            .waiting
            .items
            .iter()
            .map(|i| i.call_id.clone())
            .collect();
        self.publish_up(
            &thread,
            ThreadEvent::ApprovalResolved {
                run: run.clone(),
                call_ids,
            },
        )
        .await;
        let cancel = self.inner.shutdown.child_token();
        let slot = crate::runs::Slot::waiting(self.inner.slots.clone());
        self.launch(
            run.clone(),
            thread,
            Caller::from(&user),
            cancel,
            slot,
            super::execute::Begin::Resume(resolutions),
        )
        .await;
        Ok(run)
    }

    /// Rejects what nobody decided in time, for every waiting run whose deadline passed (on
    /// any instance: the first to take a run resumes it).
    pub(super) async fn sweep_waits(&self) {
        let store = &self.inner.store;
        let ids = match store.expired_waits(lease::now_ms()).await {
            Ok(ids) => ids,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the waiting runs past their deadline");
                return;
            }
        };
        for id in ids {
            let stored = match store.run_waiting(id).await {
                Ok(Some(stored)) => stored,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(run_id = %id, error = %e, "cannot read what a run waits on");
                    continue;
                }
            };
            let after_s = stored.waiting.timeout_s.unwrap_or_default();
            let resolutions = stored
                .waiting
                .items
                .iter()
                .map(|i| (i.call_id.clone(), Resolution::TimedOut { after_s }))
                .collect();
            match self.resume(id, stored, resolutions).await {
                Ok(_) => {
                    tracing::info!(run_id = %id, after_s, "nobody decided in time: the pending calls were rejected");
                }
                Err(RuntimeError::NotWaiting { .. }) => {}
                Err(e) => {
                    tracing::warn!(run_id = %id, error = %e, "cannot reject a run's pending calls")
                }
            }
        }
    }

    /// Publishes `event` to the followers of `thread` and, for a child thread, of its parent
    /// thread (the root's owner sees the whole tree's pending items in one place).
    async fn publish_up(&self, thread: &Thread, event: ThreadEvent) {
        let mut threads = vec![&thread.id];
        if let Some(lineage) = &thread.lineage {
            threads.push(&lineage.parent_thread_id);
        }
        for id in threads {
            if let Err(e) = self.inner.events.publish_thread(id, &event).await {
                tracing::warn!(thread_id = %id, error = %e, "cannot publish a thread event");
            }
        }
    }
}

/// Edited arguments must fit their tool's schema, as a model's call would (checked with the
/// same bounded reader as an MCP tool's).
fn check_edits(stored: &StoredWaiting, decisions: &[DecisionInput]) -> Result<(), RuntimeError> {
    for (i, d) in decisions.iter().enumerate() {
        let Some(arguments) = &d.arguments else {
            continue;
        };
        let Some(schema) = stored.waiting.schemas.get(&d.call_id) else {
            continue;
        };
        let tool = stored
            .waiting
            .items
            .iter()
            .find_map(|item| match &item.request {
                PendingRequest::Approval { tool, .. } if item.call_id == d.call_id => {
                    Some(tool.as_str())
                }
                _ => None,
            })
            .unwrap_or_default();
        let field = format!("decisions[{i}].arguments");
        let checker = ars_mcp::ArgsSchema::new("ars", tool, schema).map_err(|e| {
            RuntimeError::Invalid(ValidationError::invalid(
                &field,
                format!("`{tool}`'s schema cannot be read: {e}"),
            ))
        })?;
        if let Err(why) = checker.check(arguments) {
            return Err(RuntimeError::Invalid(ValidationError::invalid(
                field,
                format!("do not fit `{tool}`'s schema: {why}"),
            )));
        }
    }
    Ok(())
}
