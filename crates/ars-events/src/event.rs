//! The closed set of run events and the envelope every event travels in.
//!
//! These types are the whole contract between the runtime (which publishes) and the API (which
//! streams them as SSE, serializing [`RunEvent`] as-is): adding a variant is a wire change, and
//! the conformance suite snapshots each variant's JSON shape.

use ars_domain::{Message, MessageRole, RunErrorCode, RunId, RunStatus, ThreadId, Usage};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How many characters of a tool result an event carries: enough for a UI line, never the
/// megabytes a tool can return (the full result lives in the thread's messages).
pub const PREVIEW_CHARS: usize = 500;

/// Which run an event belongs to, so a subscriber of a subagent's run can place it in the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: RunId,
    pub thread_id: ThreadId,
    /// Set on child (subagent) runs; omitted from the wire for top-level runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ParentRef>,
}

impl RunRef {
    /// A run started by a user, not by another run's tool call.
    pub fn top_level(run_id: RunId, thread_id: ThreadId) -> Self {
        Self {
            run_id,
            thread_id,
            parent: None,
        }
    }

    /// A subagent run started by `parent`'s tool call.
    pub fn child(run_id: RunId, thread_id: ThreadId, parent: ParentRef) -> Self {
        Self {
            run_id,
            thread_id,
            parent: Some(parent),
        }
    }
}

/// Where a child run came from: the parent run, the tool call that started it (absent when the
/// child was started outside a tool call, e.g. a continuation) and the parent's thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParentRef {
    pub parent_run_id: RunId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_call_id: Option<String>,
    pub parent_thread_id: ThreadId,
}

/// One event of one run, as stored, replayed and sent over SSE.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    /// Per run: the first event is 1 and each next one is +1, so `Last-Event-ID` resume can
    /// detect gaps and skip duplicates by comparing numbers.
    pub id: u64,
    #[serde(flatten)]
    pub run: RunRef,
    /// When the bus accepted the event.
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened. The `type` tag doubles as the SSE `event:` name (see [`EventKind::name`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// The run changed status; a terminal status is the last event of the run.
    RunStatus {
        status: RunStatus,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        error: Option<String>,
        /// A failed run's stable code (see [`RunErrorCode`]), beside `error`'s words.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        error_code: Option<RunErrorCode>,
        /// The final assistant text, on `success`.
        #[serde(skip_serializing_if = "Option::is_none", default)]
        output: Option<String>,
    },
    /// The model began a message; deltas follow.
    MessageStarted { role: MessageRole },
    /// A piece of streamed assistant text.
    MessageDelta { text: String },
    /// A message was committed to the thread (the authoritative text). Boxed: it is the
    /// largest event by far, and every event is as large as the largest unless it is boxed.
    MessageCompleted { message: Box<Message> },
    /// A tool call began; `arguments` is the raw JSON text the model produced.
    ToolCallStarted {
        call_id: String,
        name: String,
        arguments: String,
    },
    /// A tool call ended; `preview` is the start of its result (see [`preview`]).
    ToolCallFinished {
        call_id: String,
        name: String,
        is_error: bool,
        preview: String,
    },
    /// Tokens spent so far, cumulative for the run (a late subscriber needs only the last one).
    Usage { usage: Usage },
    /// A non-fatal problem worth showing (a fatal one ends the run with an `error` status).
    Error { message: String },
}

impl EventKind {
    /// The SSE `event:` name; always equal to the JSON `type` tag.
    pub fn name(&self) -> &'static str {
        match self {
            Self::RunStatus { .. } => "run_status",
            Self::MessageStarted { .. } => "message_started",
            Self::MessageDelta { .. } => "message_delta",
            Self::MessageCompleted { .. } => "message_completed",
            Self::ToolCallStarted { .. } => "tool_call_started",
            Self::ToolCallFinished { .. } => "tool_call_finished",
            Self::Usage { .. } => "usage",
            Self::Error { .. } => "error",
        }
    }

    /// Whether this is the run's last event: after it the bus refuses publishes and every
    /// subscription ends.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::RunStatus { status, .. } if status.is_terminal())
    }

    /// A status change with no error or output.
    pub fn status(status: RunStatus) -> Self {
        Self::RunStatus {
            status,
            error: None,
            error_code: None,
            output: None,
        }
    }

    /// A finished tool call whose full `result` is cut to [`PREVIEW_CHARS`].
    pub fn tool_call_finished(
        call_id: impl Into<String>,
        name: impl Into<String>,
        is_error: bool,
        result: &str,
    ) -> Self {
        Self::ToolCallFinished {
            call_id: call_id.into(),
            name: name.into(),
            is_error,
            preview: preview(result, PREVIEW_CHARS),
        }
    }
}

/// The first characters of `text`, at most `max_chars` of them including a trailing `…` when
/// something was cut. Counts `char`s, so it never splits a multibyte character.
pub fn preview(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some(_) if max_chars == 0 => String::new(),
        Some(_) => {
            // Keep `max_chars - 1` characters and spend the last one on the ellipsis.
            let cut = text
                .char_indices()
                .nth(max_chars - 1)
                .map_or(text.len(), |(at, _)| at);
            let mut out = String::with_capacity(cut + '…'.len_utf8());
            out.push_str(&text[..cut]);
            out.push('…');
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_keeps_short_text_and_cuts_long_text_on_char_boundaries() {
        assert_eq!(preview("short", 10), "short");
        assert_eq!(preview("exact", 5), "exact");
        assert_eq!(preview("abcdef", 4), "abc…");
        assert_eq!(preview("日本語のテキスト", 4), "日本語…");
        assert_eq!(preview("é".repeat(600).as_str(), 500).chars().count(), 500);
        assert_eq!(preview("abc", 0), "");
        assert_eq!(preview("", 0), "");
    }

    #[test]
    fn only_terminal_statuses_are_terminal() {
        for status in RunStatus::ALL {
            assert_eq!(
                EventKind::status(status).is_terminal(),
                status.is_terminal()
            );
        }
        assert!(!EventKind::MessageDelta { text: "x".into() }.is_terminal());
    }

    /// Every event is as large as its largest kind: a run's log holds its events, and each
    /// waiting run its log, so a large kind stays boxed (a committed message is 300 bytes).
    #[test]
    fn an_event_stays_small_because_its_large_kinds_are_boxed() {
        assert!(
            std::mem::size_of::<RunEvent>() <= 256,
            "RunEvent is {} bytes",
            std::mem::size_of::<RunEvent>()
        );
    }
}
