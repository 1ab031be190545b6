//! Folds a stream of [`ChatEvent`]s into a finished [`AssistantTurn`].
//!
//! The runtime forwards each event to its listeners as it arrives and pushes it here too; when
//! the stream ends, [`TurnAccumulator::finish`] hands back the whole turn.

use std::collections::BTreeMap;

use futures::StreamExt;

use crate::{AssistantTurn, ChatEvent, ChatStream, FinishReason, ModelError, ToolCall, Usage};

/// Joins the text deltas and assembles tool calls by index from their fragments.
#[derive(Debug, Default)]
pub struct TurnAccumulator {
    /// Named in the error when the stream was malformed.
    provider: String,
    text: String,
    /// By index, so calls interleaved in the stream come out in the model's order.
    calls: BTreeMap<usize, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<FinishReason>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

impl TurnAccumulator {
    pub fn new() -> Self {
        Self::default()
    }

    /// An accumulator whose errors name `provider`.
    pub fn for_provider(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            ..Self::default()
        }
    }

    /// Takes one event into account.
    pub fn push(&mut self, event: &ChatEvent) {
        match event {
            ChatEvent::TextDelta { text } => self.text.push_str(text),
            ChatEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => {
                let call = self.calls.entry(*index).or_default();
                if let Some(id) = id {
                    join_fragment(&mut call.id, id);
                }
                if let Some(name) = name {
                    join_fragment(&mut call.name, name);
                }
                call.arguments.push_str(arguments);
            }
            ChatEvent::Usage(usage) => self.usage = Some(*usage),
            ChatEvent::Finished { reason } => self.finish_reason = Some(reason.clone()),
        }
    }

    /// The text so far, e.g. to save a partial answer when a run is cancelled.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The finished turn. A tool call without a name is a malformed stream; one without an id
    /// gets `call_<index>` so the tool message can still refer to it.
    pub fn finish(self) -> Result<AssistantTurn, ModelError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.name.is_empty() {
                return Err(ModelError::MalformedStream {
                    provider: self.provider,
                    message: format!("tool call #{index} has no function name"),
                });
            }
            tool_calls.push(ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            });
        }
        let finish_reason = self.finish_reason.unwrap_or(if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        });
        Ok(AssistantTurn {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason,
        })
    }

    /// Drains `stream` and returns the finished turn, for callers that do not need the deltas.
    pub async fn collect(self, mut stream: ChatStream) -> Result<AssistantTurn, ModelError> {
        let mut acc = self;
        while let Some(event) = stream.next().await {
            acc.push(&event?);
        }
        acc.finish()
    }
}

/// Ids and names normally arrive whole in one fragment, but some servers split them and others
/// repeat them on every fragment: append a piece, ignore a repeat of the whole.
fn join_fragment(acc: &mut String, fragment: &str) {
    if acc != fragment {
        acc.push_str(fragment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> ChatEvent {
        ChatEvent::ToolCallDelta {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: args.to_string(),
        }
    }

    #[test]
    fn interleaved_fragments_assemble_by_index() {
        let mut acc = TurnAccumulator::new();
        for event in [
            ChatEvent::TextDelta { text: "Hi ".into() },
            delta(1, Some("b"), Some("second"), ""),
            delta(0, Some("a"), Some("fir"), "{\"x\""),
            delta(0, None, Some("st"), ":1}"),
            delta(1, Some("b"), Some("second"), "{}"),
            ChatEvent::Finished {
                reason: FinishReason::ToolCalls,
            },
        ] {
            acc.push(&event);
        }
        let turn = acc.finish().unwrap();
        assert_eq!(turn.text, "Hi ");
        let names: Vec<_> = turn.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        assert_eq!(turn.tool_calls[0].arguments, "{\"x\":1}");
        assert_eq!(turn.tool_calls[1].id, "b");
        assert_eq!(turn.tool_calls[1].arguments, "{}");
    }

    #[test]
    fn missing_finish_reason_is_inferred_and_missing_ids_are_filled() {
        let mut acc = TurnAccumulator::new();
        acc.push(&delta(0, None, Some("t"), "{}"));
        let turn = acc.finish().unwrap();
        assert_eq!(turn.finish_reason, FinishReason::ToolCalls);
        assert_eq!(turn.tool_calls[0].id, "call_0");
    }

    #[test]
    fn a_tool_call_without_name_is_malformed() {
        let mut acc = TurnAccumulator::new();
        acc.push(&delta(0, Some("x"), None, "{}"));
        assert!(matches!(
            acc.finish(),
            Err(ModelError::MalformedStream { .. })
        ));
    }
}
