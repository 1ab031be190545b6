//! A run's assistant text as it streams, then how the run ended: what both streaming answers
//! (chat completion chunks, response events) are written from.

use futures::{Stream, StreamExt};

use ars_domain::{MessageRole, Run, RunId};
use ars_events::{EventKind, EventStream};
use ars_runtime::Runtime;

use super::OpenAiError;
use crate::ApiError;
use crate::protocols::{CancelOnDrop, ended};

/// One piece of a streamed answer.
pub(crate) enum Piece {
    /// More of the answer's text.
    Text(String),
    /// The run ended (any status); the last piece.
    Ended(Box<Run>),
    /// The run's events could not be read to the end; the last piece.
    Failed(OpenAiError),
}

struct Reading {
    events: EventStream,
    runtime: Runtime,
    run: RunId,
    /// The text streamed of the assistant message in progress.
    streamed: String,
    /// Whether any text went out: a later message's text is set off by a blank line.
    any_text: bool,
    done: bool,
    guard: CancelOnDrop,
}

impl Reading {
    /// `text` as the next piece, set off from an earlier message's text.
    fn piece(&mut self, text: &str) -> Piece {
        let piece = if self.any_text && self.streamed.is_empty() {
            format!("\n\n{text}")
        } else {
            text.to_string()
        };
        self.streamed.push_str(text);
        self.any_text = true;
        Piece::Text(piece)
    }
}

/// The pieces of `run`'s answer: every assistant message's text as the model streams it (a
/// message no delta streamed comes whole when it is stored), then the run once it ended. The
/// run is cancelled if the stream is dropped before it ends (the client went away).
pub(crate) async fn pieces(
    runtime: &Runtime,
    run: RunId,
) -> Result<impl Stream<Item = Piece> + Send + 'static, ApiError> {
    let events = runtime.events().subscribe(run, 0).await?;
    let reading = Reading {
        events,
        runtime: runtime.clone(),
        run,
        streamed: String::new(),
        any_text: false,
        done: false,
        guard: CancelOnDrop::new(runtime, run),
    };
    Ok(futures::stream::unfold(reading, |mut reading| async move {
        if reading.done {
            return None;
        }
        loop {
            let event = match reading.events.next().await {
                Some(Ok(event)) => event,
                // The events cannot be read any further: the client hears why; the run goes
                // on (its answer stays readable through /api).
                Some(Err(e)) => {
                    reading.done = true;
                    reading.guard.disarm();
                    return Some((Piece::Failed(ApiError::from(e).into()), reading));
                }
                // Ended without its terminal event: read how the run ended.
                None => {
                    reading.done = true;
                    reading.guard.disarm();
                    let piece = match ended(&reading.runtime, reading.run).await {
                        Ok(run) => Piece::Ended(Box::new(run)),
                        Err(e) => Piece::Failed(e.into()),
                    };
                    return Some((piece, reading));
                }
            };
            match event.into_event().kind {
                EventKind::MessageStarted {
                    role: MessageRole::Assistant,
                } => reading.streamed.clear(),
                EventKind::MessageDelta { text } if !text.is_empty() => {
                    let piece = reading.piece(&text);
                    return Some((piece, reading));
                }
                EventKind::MessageCompleted { message }
                    if message.role == MessageRole::Assistant =>
                {
                    let rest = message
                        .content
                        .strip_prefix(reading.streamed.as_str())
                        .unwrap_or_default()
                        .to_string();
                    if !rest.is_empty() {
                        let piece = reading.piece(&rest);
                        reading.streamed.clear();
                        return Some((piece, reading));
                    }
                    reading.streamed.clear();
                }
                kind if kind.is_terminal() => {
                    reading.done = true;
                    reading.guard.disarm();
                    let piece = match ended(&reading.runtime, reading.run).await {
                        Ok(run) => Piece::Ended(Box::new(run)),
                        Err(e) => Piece::Failed(e.into()),
                    };
                    return Some((piece, reading));
                }
                _ => {}
            }
        }
    }))
}
