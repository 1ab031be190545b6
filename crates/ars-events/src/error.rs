//! The one error type of the events crate.

/// Why a publish or a subscription failed.
///
/// `Closed` and `NotRetained` are expected outcomes the caller maps to a response (the API
/// answers 410 Gone for `NotRetained`); `Backend` and `Decode` are infrastructure failures.
#[derive(Debug, thiserror::Error)]
pub enum EventError {
    /// The run's terminal event was already published; a finished run's history is immutable.
    #[error("the run has already ended; no more events can be published")]
    Closed,
    /// The requested events are gone: the run is unknown, its log expired after retention or was
    /// evicted over the in-process bus's memory budget, or events after the requested id were
    /// dropped to bound memory. Streaming the rest would leave a gap, so the caller must reload
    /// the run from the store instead.
    #[error("the run's events are no longer retained")]
    NotRetained,
    /// The bus's backing service (Redis) failed or could not be reached.
    #[error("event bus backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// A stored event could not be read back (written by an incompatible version, or corrupt).
    #[error("stored event could not be decoded: {0}")]
    Decode(String),
}

impl EventError {
    /// Wraps a backend failure, keeping its source chain for logs.
    pub fn backend(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Backend(Box::new(err))
    }
}
