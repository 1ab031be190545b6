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

/// Why the byte stream under the SSE parser stopped.
#[derive(Debug)]
enum Transport {
    /// No byte came within the idle timeout.
    Idle,
    Network(String),
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idle => f.write_str("idle timeout"),
            Self::Network(message) => f.write_str(message),
        }
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
