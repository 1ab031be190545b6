//! The plug-in seam. A capability (subagents, Skills, MCP servers, knowledge bases, or one the
//! runtime has never heard of) is a [`MiddlewareFactory`] the server assembly hands the runtime
//! in [`crate::RuntimeParts::plugins`]. Its hooks let it own the capability end to end:
//!
//! - **run start** — [`MiddlewareFactory::build`] may mount a [`Middleware`] on the run being
//!   prepared (prompt, tools, tool calls, events), from its [`RunSetup`];
//! - **the run's life and end** — [`MiddlewareFactory::observe`] may follow any run, shaped by
//!   it or not, from its creation to its end ([`RunObserver`]: changes, tokens, the end on the
//!   instance that wrote it);
//! - **usage** — [`MiddlewareFactory::usage_beyond`] adds the tokens spent on a run's behalf
//!   outside it to the run's total;
//! - **sweeps** — [`MiddlewareFactory::sweep`] runs at startup and on every heartbeat, to
//!   finish what an instance that stopped left undone.
//!
//! A plug-in acts on runs only through [`Runs`], never the runtime itself.
//!
//! **Invariant:** the core names no capability. No core module imports a plug-in module; the
//! crate's `tests/core_names_no_capability.rs` reads the sources and keeps it so.

use std::sync::Arc;

use async_trait::async_trait;

use ars_domain::{Agent, Caller, ResolvedContext, Run, Thread, Usage};
use ars_sandbox::Scope;
use ars_store::StoreError;

use crate::emitter::Emitter;
use crate::feed::RunObserver;
use crate::middleware::Middleware;
use crate::runs::Runs;

/// What a plug-in knows about the run being prepared.
pub struct RunSetup<'a> {
    /// What the plug-in may do with runs (start, wait for, cancel others) and read.
    pub runs: &'a dyn Runs,
    /// The user the run acts for.
    pub caller: &'a Caller,
    pub run: &'a Run,
    pub thread: &'a Thread,
    pub agent: &'a Agent,
    pub context: &'a ResolvedContext,
    /// The run's sandbox scope: the workspace, workdir and Skills projection its tools see.
    /// Not prepared yet (the run's first tool call prepares it): a directory may be missing.
    pub scope: &'a Scope,
    /// Publishes to the run's event stream, e.g. a warning about a skipped capability.
    pub events: &'a Emitter,
}

/// A capability plug-in (see the module docs). Only [`MiddlewareFactory::build`] is required.
#[async_trait]
pub trait MiddlewareFactory: Send + Sync {
    /// Run start: the middleware this capability mounts on the run being prepared, or none
    /// (e.g. only for normal agents). Every plug-in's `build` runs at once with the others';
    /// the middlewares mount in the plug-ins' order.
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>>;

    /// Follows `run` on `thread` — called for every run as it is created, and for a run that
    /// executed elsewhere when this instance writes its end — whether or not this plug-in
    /// shapes it: a plug-in that starts runs from other runs follows those.
    fn observe(
        &self,
        _run: &Run,
        _thread: &Thread,
        _runs: &dyn Runs,
    ) -> Option<Arc<dyn RunObserver>> {
        None
    }

    /// Usage: the tokens spent on `run`'s behalf outside it (by the runs it started, say),
    /// which its total includes.
    async fn usage_beyond(&self, _run: &Run, _runs: &dyn Runs) -> Result<Usage, StoreError> {
        Ok(Usage::default())
    }

    /// Sweeps: called after startup recovery and on every heartbeat of every instance, to
    /// finish durably what the instance that should have done it left undone (it stopped
    /// first). Must be safe to run on several instances at once.
    async fn sweep(&self, _runs: &dyn Runs) {}
}
