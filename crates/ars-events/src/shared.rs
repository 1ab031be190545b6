//! A published event as its subscribers receive it: one copy, and one JSON text, for all of them.
//!
//! A run streamed to a thousand browsers would otherwise cost a thousand copies of each event and
//! a thousand serializations of it, one per subscriber, all on the path between the publish and
//! the last subscriber's receipt. A [`SharedEvent`] is a reference to the event the bus retains:
//! cloning it copies a pointer, and its JSON ([`SharedEvent::json`]) is written by the first
//! subscriber that asks and read by every other.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use crate::RunEvent;

/// One run event, shared by everyone following its run. Reads as a [`RunEvent`] (it derefs to
/// one); [`SharedEvent::into_event`] gives an owned one to a caller that takes it apart.
#[derive(Clone)]
pub struct SharedEvent(Arc<Inner>);

struct Inner {
    event: RunEvent,
    /// The event as JSON (the same text `serde_json::to_string(&event)` gives), written once,
    /// when the first subscriber asks. Kept with the event for as long as any holder keeps it:
    /// only a run someone streams pays for the text.
    json: OnceLock<Box<str>>,
}

impl SharedEvent {
    /// The event as JSON, serialized on the first call and shared by every later one, on any
    /// clone.
    pub fn json(&self) -> serde_json::Result<&str> {
        if let Some(json) = self.0.json.get() {
            return Ok(json);
        }
        let json = serde_json::to_string(&self.0.event)?.into_boxed_str();
        // Two first callers may race: both serialize, one text is kept, both are equal.
        Ok(self.0.json.get_or_init(|| json))
    }

    /// The event itself: moved out when this is its last holder, else copied.
    pub fn into_event(self) -> RunEvent {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => inner.event,
            Err(shared) => shared.event.clone(),
        }
    }
}

impl From<RunEvent> for SharedEvent {
    fn from(event: RunEvent) -> Self {
        Self(Arc::new(Inner {
            event,
            json: OnceLock::new(),
        }))
    }
}

impl Deref for SharedEvent {
    type Target = RunEvent;

    fn deref(&self) -> &RunEvent {
        &self.0.event
    }
}

impl fmt::Debug for SharedEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.event.fmt(f)
    }
}

/// Equal when the events are: where or whether their JSON was written does not count.
impl PartialEq for SharedEvent {
    fn eq(&self, other: &Self) -> bool {
        self.0.event == other.0.event
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventKind, RunRef};
    use ars_domain::{RunId, ThreadId};

    fn delta(text: &str) -> RunEvent {
        RunEvent {
            id: 1,
            run: RunRef::top_level(RunId::new(), ThreadId::new()),
            at: chrono::Utc::now(),
            kind: EventKind::MessageDelta { text: text.into() },
        }
    }

    #[test]
    fn every_clone_reads_the_one_json_text_the_first_reader_wrote() {
        let event = delta("你好, \"world\"\n");
        let expected = serde_json::to_string(&event).unwrap();
        let first = SharedEvent::from(event);
        let second = first.clone();
        let written = first.json().unwrap();
        assert_eq!(written, expected);
        // The same text, not another copy of it.
        assert!(std::ptr::eq(written, second.json().unwrap()));
    }

    #[test]
    fn the_last_holder_moves_the_event_out_and_others_copy_it() {
        let event = delta("x");
        let shared = SharedEvent::from(event.clone());
        let held = shared.clone();
        assert_eq!(shared.into_event(), event);
        assert_eq!(held.into_event(), event);
    }
}
