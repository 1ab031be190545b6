//! Messages into running runs (steering). A message sent into an active run is a user message
//! of the run's thread marked `steer`, written under the run's fence (only while it is active);
//! the loop reads what arrived on its thread before each model call (`agent_loop`), so the
//! model sees it once, on whichever instance executes the run — or resumes it after a wait.

use ars_domain::{Message, MessageRole, NewMessage, RunId, RunInput};
use ars_store::StoreError;

use super::Runtime;
use crate::runs::RuntimeError;

impl Runtime {
    /// Sends `input` into run `run_id` while it is active (pending, running or waiting) and
    /// answers the message as stored. `Ended` once the run has ended: a new run continues its
    /// thread.
    pub async fn steer(&self, run_id: RunId, input: RunInput) -> Result<Message, RuntimeError> {
        let run = self.stored_run(run_id).await?;
        if run.status.is_terminal() {
            return Err(RuntimeError::Ended { status: run.status });
        }
        let message = NewMessage {
            steer: true,
            ..NewMessage::text(
                run.thread_id,
                Some(run.id),
                MessageRole::User,
                input.into_string(),
            )
        };
        match self.inner.store.append_message(&message).await {
            Ok(stored) => {
                crate::metrics::steer_message();
                Ok(stored)
            }
            // It ended between the read and the write: the fence kept the message out.
            Err(StoreError::RunEnded { .. }) => {
                let run = self.stored_run(run_id).await?;
                Err(RuntimeError::Ended { status: run.status })
            }
            Err(e) => Err(e.into()),
        }
    }
}
