//! Live run events: the `EventBus` seam and its in-process and Redis Streams implementations.
//!
//! The runtime publishes a closed set of [`EventKind`]s per run; the bus numbers them 1, 2, 3, …
//! and keeps them (for `retention` after the run's terminal event) so the API can stream them as
//! SSE with `Last-Event-ID` resume, without gaps or duplicates.
//!
//! - [`event`]: the event types, the wire shape the API serializes as-is.
//! - [`bus`]: the object-safe [`EventBus`] trait.
//! - [`shared`]: [`SharedEvent`], a published event as every subscriber of its run receives it:
//!   one copy and one JSON text for all of them.
//! - [`in_process`]: [`InProcessBus`], memory only, for the embedded single-process server.
//! - [`redis_bus`]: [`RedisBus`], Redis Streams, for several instances sharing one Redis.
//! - [`control`]: the [`ControlChannel`] between instances (cancel a run, a run ended), in
//!   process or over Redis pub/sub.
//! - [`topic`]: events for whoever follows a key at the time — not numbered, not stored — in
//!   process ([`Topics`]); the Redis bus carries them over pub/sub.
//! - [`thread`]: [`ThreadEvent`]s (a thread's runs, subagent runs and notices changed), a topic
//!   per thread.
//! - [`knowledge`]: [`KnowledgeEvent`]s (a knowledge base's documents changed), a topic per
//!   knowledge base.
//!
//! **Boundary:** this is the only crate that knows Redis; neither implementation knows HTTP.

pub mod bus;
pub mod control;
pub mod error;
pub mod event;
pub mod in_process;
pub mod knowledge;
pub mod redis_bus;
pub mod shared;
pub mod thread;
pub mod topic;

pub use bus::{EventBus, EventStream};
pub use control::{ControlChannel, LocalChannel, RedisChannel, Signal, SignalStream};
pub use error::EventError;
pub use event::{EventKind, PREVIEW_CHARS, ParentRef, RunEvent, RunRef, preview};
pub use in_process::{DEFAULT_MEMORY_BUDGET, InProcessBus, InProcessConfig, estimated_size};
pub use knowledge::{KnowledgeEvent, KnowledgeEventStream, LocalKnowledgeTopics};
pub use redis_bus::{RedisBus, RedisConfig};
pub use shared::SharedEvent;
pub use thread::{LocalTopics, THREAD_BACKLOG, ThreadEvent, ThreadEventStream};
pub use topic::{TOPIC_BACKLOG, TopicStream, Topics};
