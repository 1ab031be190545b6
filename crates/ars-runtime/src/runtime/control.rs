//! The control channel as the runtime uses it: a cancel sent by any instance stops the run
//! where it executes, "this run ended" wakes waiters on every instance, and "this account
//! changed" reaches whoever remembers credentials ([`Runtime::account_changes`]).
//!
//! **Invariant:** a signal only ever speeds things up. A missed `Cancel` is caught by the
//! caller's fallback (it ends the run in the store after [`CANCEL_ANSWER`]) and, for the
//! executor, by the next lease heartbeat; a missed `Ended` by the waiter's next store read; a
//! missed `AccountChanged` by the credentials' next read, at most a second later.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{broadcast, watch};

use ars_domain::RunId;
use ars_events::Signal;

use super::{Inner, Runtime};

/// How long a cancel of a run executing elsewhere waits for that instance to end it before
/// ending it in the store itself (the run then ends within about this long even when its
/// instance died and its lease has not run out yet).
pub(super) const CANCEL_ANSWER: Duration = Duration::from_millis(800);

/// Back-off between attempts to listen again after the channel's connection is lost.
const RELISTEN_MIN: Duration = Duration::from_millis(200);
const RELISTEN_MAX: Duration = Duration::from_secs(10);

/// Follows the control channel until the runtime shuts down or is dropped, listening again
/// (with back-off) whenever the connection is lost. `listening` turns true once it listens.
pub(super) fn spawn_listener(runtime: &Runtime, listening: watch::Sender<bool>) {
    let inner = Arc::downgrade(&runtime.inner);
    let control = Arc::clone(&runtime.inner.control);
    let shutdown = runtime.inner.shutdown.clone();
    tokio::spawn(async move {
        let mut backoff = RELISTEN_MIN;
        loop {
            let mut signals = tokio::select! {
                listened = control.listen() => match listened {
                    Ok(signals) => signals,
                    Err(e) => {
                        tracing::warn!(error = %e, retry_in_ms = backoff.as_millis(), "cannot listen on the control channel");
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            () = shutdown.cancelled() => return,
                        }
                        backoff = (backoff * 2).min(RELISTEN_MAX);
                        continue;
                    }
                },
                () = shutdown.cancelled() => return,
            };
            listening.send_replace(true);
            backoff = RELISTEN_MIN;
            loop {
                let signal = tokio::select! {
                    signal = signals.next() => signal,
                    () = shutdown.cancelled() => return,
                };
                let Some(signal) = signal else {
                    tracing::warn!("lost the control channel's connection; listening again");
                    listening.send_replace(false);
                    break;
                };
                if !handle(&inner, signal) {
                    return;
                }
            }
        }
    });
}

/// Acts on one signal; `false` once the runtime is gone.
fn handle(inner: &Weak<Inner>, signal: Signal) -> bool {
    let Some(inner) = inner.upgrade() else {
        return false;
    };
    match signal {
        Signal::Cancel { run_id } => {
            let token = inner
                .active
                .lock()
                .ok()
                .and_then(|a| a.get(&run_id).map(|r| r.cancel.clone()));
            if let Some(token) = token {
                tracing::info!(run_id = %run_id, "cancelled through another instance");
                token.cancel();
            }
        }
        Signal::Ended { run_id } => {
            // Nobody waiting is fine.
            let _ = inner.ended.send(run_id);
        }
        Signal::AccountChanged { user_id } => {
            // Nobody remembering credentials is fine.
            let _ = inner.accounts.send(user_id);
        }
    }
    true
}

impl Runtime {
    /// Tells every instance that `run_id` ended (after its end was written).
    pub(super) async fn announce_end(&self, run_id: RunId) {
        if let Err(e) = self.inner.control.send(Signal::Ended { run_id }).await {
            tracing::warn!(run_id = %run_id, error = %e, "cannot announce the end of a run");
        }
    }

    /// Tells every instance, this one included, that `user`'s account or tokens changed (after
    /// the change was written), so none goes on using what it remembers of them.
    pub async fn announce_account_change(&self, user: ars_domain::UserId) {
        let signal = Signal::AccountChanged { user_id: user };
        if let Err(e) = self.inner.control.send(signal).await {
            tracing::warn!(user_id = %user, error = %e, "cannot announce an account's change");
        }
    }

    /// The users whose account or tokens changed from now on, on any instance, as the control
    /// channel tells them. Lagging behind skips some (`RecvError::Lagged`): forget everything
    /// then. A change the channel lost is not told at all.
    pub fn account_changes(&self) -> broadcast::Receiver<ars_domain::UserId> {
        self.inner.accounts.subscribe()
    }

    /// Waits until the control channel listens, at most `timeout`; whether it does. A server
    /// calls this before serving, so a cancel sent right after it answers is heard.
    pub async fn control_listening(&self, timeout: Duration) -> bool {
        let mut listening = self.inner.listening.clone();
        tokio::time::timeout(timeout, listening.wait_for(|l| *l))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}
