//! A streaming response body → [`ChatStream`].
//!
//! The body is read lazily by whoever polls the stream; there is no background task. Dropping
//! the stream drops the body, which closes the connection and so aborts the request.

use std::collections::VecDeque;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::{BoxStream, StreamExt};

use super::wire::{ChunkError, ChunkParser};
use crate::secret::Redactor;
use crate::{ChatEvent, ChatStream, ModelError};

/// The longest one event may be: the SSE parser holds an event whole until its blank line,
/// so a stream that never ends one would be buffered without bound.
const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Why the byte stream under the SSE parser stopped.
#[derive(Debug)]
enum Transport {
    /// No byte came within the idle timeout.
    Idle,
    Network(String),
    /// An event longer than [`MAX_EVENT_BYTES`].
    EventTooLong,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idle => f.write_str("idle timeout"),
            Self::Network(message) => f.write_str(message),
            Self::EventTooLong => write!(
                f,
                "an event longer than {} MiB",
                MAX_EVENT_BYTES / (1024 * 1024)
            ),
        }
    }
}

/// Counts the bytes of the event being received, so an endless one is refused.
#[derive(Default)]
struct EventBound {
    /// Bytes since the last event boundary (a blank line).
    since: usize,
    /// Whether the last byte other than `\r` was a `\n`.
    at_line_start: bool,
    exceeded: bool,
}

impl EventBound {
    /// `false` once the event being received is longer than [`MAX_EVENT_BYTES`].
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &byte in bytes {
            match byte {
                b'\r' => {}
                b'\n' if self.at_line_start => self.since = 0,
                b'\n' => {
                    self.at_line_start = true;
                    self.since += 1;
                }
                _ => {
                    self.at_line_start = false;
                    self.since += 1;
                }
            }
            if self.since > MAX_EVENT_BYTES {
                self.exceeded = true;
                return false;
            }
        }
        true
    }
}

type Events = BoxStream<'static, Result<eventsource_stream::Event, EventStreamError<Transport>>>;

struct State {
    events: Events,
    parser: ChunkParser,
    pending: VecDeque<ChatEvent>,
    /// Set once the stream has ended, normally or with an error; nothing is read after.
    done: bool,
    provider: String,
    idle_timeout: Duration,
    redactor: Redactor,
}

impl State {
    fn error(&mut self, error: ModelError) -> Option<Result<ChatEvent, ModelError>> {
        self.done = true;
        Some(Err(error))
    }

    fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// The next item of the chat stream.
    async fn next(&mut self) -> Option<Result<ChatEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if self.done {
                return None;
            }
            match self.events.next().await {
                Some(Ok(event)) => {
                    let data = event.data.trim();
                    if data == "[DONE]" {
                        self.parser.finish(&mut self.pending);
                        self.done = true;
                    } else if !data.is_empty() {
                        let Err(error) = self.parser.chunk(data, &mut self.pending) else {
                            continue;
                        };
                        let error = match error {
                            ChunkError::Malformed(message) => ModelError::MalformedStream {
                                provider: self.provider.clone(),
                                message,
                            },
                            ChunkError::Provider(message) => {
                                ModelError::Provider(self.redact(&message))
                            }
                        };
                        return self.error(error);
                    }
                }
                Some(Err(EventStreamError::Transport(Transport::Idle))) => {
                    return self.error(ModelError::Idle {
                        provider: self.provider.clone(),
                        waited: self.idle_timeout,
                    });
                }
                Some(Err(EventStreamError::Transport(Transport::EventTooLong))) => {
                    return self.error(ModelError::MalformedStream {
                        provider: self.provider.clone(),
                        message: Transport::EventTooLong.to_string(),
                    });
                }
                Some(Err(EventStreamError::Transport(Transport::Network(message)))) => {
                    tracing::debug!(
                        provider = %self.provider,
                        error = %self.redact(&message),
                        "the model stream broke"
                    );
                    return self.error(ModelError::StreamCut {
                        provider: self.provider.clone(),
                        how: "broke the connection",
                    });
                }
                Some(Err(error)) => {
                    return self.error(ModelError::MalformedStream {
                        provider: self.provider.clone(),
                        message: error.to_string(),
                    });
                }
                None if self.parser.finished() => {
                    // No `[DONE]`, but the model had said why it stopped: the answer is whole.
                    self.parser.finish(&mut self.pending);
                    self.done = true;
                }
                None => {
                    return self.error(ModelError::StreamCut {
                        provider: self.provider.clone(),
                        how: "closed the stream",
                    });
                }
            }
        }
    }
}

/// Wraps a successful streaming response.
pub(super) fn chat_stream(
    response: reqwest::Response,
    provider: String,
    idle_timeout: Duration,
    redactor: Redactor,
) -> ChatStream {
    let bytes = futures::stream::unfold(
        Some(response.bytes_stream().boxed()),
        move |body| async move {
            let mut body = body?;
            match tokio::time::timeout(idle_timeout, body.next()).await {
                Err(_) => Some((Err::<Bytes, _>(Transport::Idle), None)),
                Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(body))),
                Ok(Some(Err(error))) => {
                    let message = super::http::describe(&error);
                    Some((Err(Transport::Network(message)), None))
                }
                Ok(None) => None,
            }
        },
    );
    let bytes = bytes.scan(EventBound::default(), |bound, item| {
        let item = match item {
            _ if bound.exceeded => None,
            Ok(bytes) if !bound.feed(&bytes) => Some(Err(Transport::EventTooLong)),
            other => Some(other),
        };
        futures::future::ready(item)
    });
    let state = State {
        events: bytes.eventsource().boxed(),
        parser: ChunkParser::default(),
        pending: VecDeque::new(),
        done: false,
        provider,
        idle_timeout,
        redactor,
    };
    futures::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_counted_until_its_blank_line() {
        let mut bound = EventBound::default();
        assert!(bound.feed(b"data: {}\r\n\r\ndata: x\n"));
        assert_eq!(bound.since, 8);
        assert!(bound.feed(b"\n"));
        assert_eq!(bound.since, 0);
        let big = vec![b'x'; MAX_EVENT_BYTES];
        assert!(bound.feed(&big));
        assert!(!bound.feed(b"y"));
        assert!(bound.exceeded);
    }
}
