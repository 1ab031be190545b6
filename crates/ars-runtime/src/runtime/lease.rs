//! Run leases (SPEC §8): each run this instance executes is held by a lease in the store — this
//! instance's id and an expiry — created with the run and renewed by one heartbeat for all of
//! them. With [`Recovery::ExpiredLeases`] the same heartbeat reaps the active runs whose lease
//! ran out (a crashed instance's), so no instance ever ends another live instance's runs.
//!
//! **Invariant:** a run this instance executes but can no longer renew (it was cancelled or
//! reaped elsewhere) is stopped here at the next beat.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{Recovery, Runtime, RuntimeConfig};
use crate::metrics;

/// The fewest milliseconds between two beats, however short the TTL.
const MIN_BEAT: Duration = Duration::from_millis(50);

/// Now, in Unix milliseconds: the clock leases are written in.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

pub(super) fn ttl_ms(config: &RuntimeConfig) -> i64 {
    i64::try_from(config.lease_ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Beats every third of the TTL until the runtime shuts down or is dropped.
pub(super) fn spawn_heartbeat(runtime: &Runtime) {
    let inner = Arc::downgrade(&runtime.inner);
    let shutdown = runtime.inner.shutdown.clone();
    let every = (runtime.inner.config.lease_ttl / 3).max(MIN_BEAT);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                () = shutdown.cancelled() => return,
            }
            let Some(inner) = inner.upgrade() else {
                return;
            };
            Runtime { inner }.beat().await;
        }
    });
}

impl Runtime {
    /// Renews this instance's leases, stops the local runs that were ended elsewhere, and
    /// (scaled recovery) reaps expired ones.
    async fn beat(&self) {
        let config = &self.inner.config;
        let store = &self.inner.store;
        // Only runs started before the renewal can be missing from its answer.
        let local: Vec<_> = self
            .inner
            .active
            .lock()
            .map(|a| a.iter().map(|(id, r)| (*id, r.cancel.clone())).collect())
            .unwrap_or_default();
        // Nothing executing here, nothing to renew (runs created after the snapshot carry a
        // fresh lease of their own).
        let renewal = if local.is_empty() {
            Ok(Vec::new())
        } else {
            store
                .renew_leases(&config.instance_id, now_ms() + ttl_ms(config))
                .await
        };
        match renewal {
            Ok(renewed) => {
                metrics::leases_renewed(renewed.len());
                for (id, cancel) in local {
                    if !renewed.contains(&id) && !cancel.is_cancelled() {
                        tracing::warn!(run_id = %id, "the run was ended elsewhere; stopping it here");
                        cancel.cancel();
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "cannot renew the run leases"),
        }
        self.sweep_waits().await;
        self.sweep_plugins().await;
        if config.recovery == Recovery::ExpiredLeases {
            match store.reap_expired_runs(now_ms()).await {
                Ok(ids) => {
                    if let Err(e) = self.after_reaping(&ids).await {
                        tracing::warn!(error = %e, "cannot finish reaping runs");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot reap runs with expired leases"),
            }
        }
    }
}
