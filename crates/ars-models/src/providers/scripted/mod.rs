//! The scripted provider: a deterministic **test and demo model** with no network.
//!
//! It plays the turns of a script (`ModelConfig.script`) instead of thinking, so the whole
//! runtime (tool loops, subagents, cancellation, usage budgets) can be exercised end to end and
//! demonstrated without an API key. It is not meant to answer real questions.
//!
//! Which turn plays: the number of assistant messages after the last user message. Each new
//! user message therefore replays the script from its first turn, and each step of a tool loop
//! advances one turn; past the end, the last turn repeats. Without a script the model echoes
//! the user (`You said: {{input}}`).
//!
//! Text streams as word-sized deltas; tool-call ids default to `call_<turn>_<i>`; usage, when
//! the turn gives none, is estimated as a quarter of the characters in and out.
//! [`validate_script`] checks a script when an agent is saved.
//!
//! # Script format
//!
//! An array of turns, or `{ "turns": [...], "when": [...] }`: `when` lists other turns for a
//! last user message containing a text, `{ "input_contains": "[notice]", "turns": [...] }`, tried
//! in order (e.g. an agent that starts a background subagent, and reports when its result wakes
//! it). A turn:
//!
//! | field            | type                                 | meaning                                      |
//! |------------------|--------------------------------------|----------------------------------------------|
//! | `text`           | string                               | answer text, streamed in word-sized deltas   |
//! | `tool_calls`     | `[{name, arguments, id?}]`           | `arguments`: an object, or raw JSON text     |
//! | `delay_ms`       | integer                              | wait before the first event                  |
//! | `chunk_delay_ms` | integer                              | wait between text deltas                     |
//! | `error`          | string                               | after any text, fail with `ModelError::Provider` |
//! | `usage`          | `{prompt_tokens, completion_tokens}` | reported usage; estimated when absent        |
//!
//! Text, error messages and the string values inside object `arguments` may use `{{input}}`
//! (the last user message), `{{last_tool_result}}` (the last tool message),
//! `{{last_tool_result.run_id}}` / `{{tool_result.1.run_id}}` (a field of the last, or the i-th since
//! the last user message, JSON tool result), `{{user_turns}}`
//! (how many user messages the request has) and `{{system_prompt}}`. Delays are capped at ten
//! minutes. Example, a one-step tool loop:
//!
//! ```json
//! [
//!   { "text": "Let me check.", "tool_calls": [{ "name": "shell", "arguments": { "command": "ls" } }] },
//!   { "text": "The directory holds: {{last_tool_result}}" }
//! ]
//! ```

mod script;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;

use self::script::{Context, Script, Turn};
use crate::{
    ChatEvent, ChatModel, ChatRequest, ChatStream, FinishReason, Message, ModelError, Usage,
};

/// Checks a script without running it, so the API can refuse a bad one when an agent is
/// saved. The message names the offending turn and field.
pub fn validate_script(script: &serde_json::Value) -> Result<(), String> {
    Script::parse(script).map(|_| ())
}

/// A model that plays a script.
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    provider: String,
    name: String,
    script: Arc<Script>,
}

impl ScriptedModel {
    /// A model named `name` of provider `provider` playing `script` (the echo script if
    /// `None`).
    pub fn new(
        provider: impl Into<String>,
        name: impl Into<String>,
        script: Option<&serde_json::Value>,
    ) -> Result<Self, ModelError> {
        let script = match script {
            Some(value) => Script::parse(value)
                .map_err(|e| ModelError::Config(format!("invalid script: {e}")))?,
            None => Script::echo(),
        };
        Ok(Self {
            provider: provider.into(),
            name: name.into(),
            script: Arc::new(script),
        })
    }
}

/// One step of a scripted answer.
enum Step {
    Sleep(Duration),
    Emit(ChatEvent),
    Fail(String),
}

#[async_trait]
impl ChatModel for ScriptedModel {
    fn provider(&self) -> &str {
        &self.provider
    }

    fn model(&self) -> &str {
        &self.name
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, ModelError> {
        let (index, turn) = self.script.turn_for(&request.messages);
        let steps = plan(index, turn, &request.messages);
        // Sleeps happen while the stream is polled, so dropping it mid-answer cancels at once.
        let stream = futures::stream::unfold(steps, |mut steps| async move {
            loop {
                match steps.pop_front()? {
                    Step::Sleep(duration) => tokio::time::sleep(duration).await,
                    Step::Emit(event) => return Some((Ok(event), steps)),
                    Step::Fail(message) => {
                        steps.clear();
                        return Some((Err(ModelError::Provider(message)), steps));
                    }
                }
            }
        });
        Ok(stream.boxed())
    }
}

/// Everything turn `index` will do for `messages`, in order.
fn plan(index: usize, turn: &Turn, messages: &[Message]) -> VecDeque<Step> {
    let context = Context::new(messages);
    let mut steps = VecDeque::new();
    if turn.delay_ms > 0 {
        steps.push_back(Step::Sleep(Duration::from_millis(turn.delay_ms)));
    }
    let text = turn
        .text
        .as_deref()
        .map(|t| context.render(t))
        .unwrap_or_default();
    for (i, chunk) in word_chunks(&text).into_iter().enumerate() {
        if i > 0 && turn.chunk_delay_ms > 0 {
            steps.push_back(Step::Sleep(Duration::from_millis(turn.chunk_delay_ms)));
        }
        steps.push_back(Step::Emit(ChatEvent::TextDelta { text: chunk }));
    }
    if let Some(error) = &turn.error {
        steps.push_back(Step::Fail(context.render(error)));
        return steps;
    }
    let mut completion_chars = text.chars().count();
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let arguments = context.render_arguments(&call.arguments);
        completion_chars += call.name.chars().count() + arguments.chars().count();
        // Two fragments, the way real servers stream a call: id and name, then arguments.
        steps.push_back(Step::Emit(ChatEvent::ToolCallDelta {
            index: i,
            id: Some(
                call.id
                    .clone()
                    .unwrap_or_else(|| format!("call_{index}_{i}")),
            ),
            name: Some(call.name.clone()),
            arguments: String::new(),
        }));
        steps.push_back(Step::Emit(ChatEvent::ToolCallDelta {
            index: i,
            id: None,
            name: None,
            arguments,
        }));
    }
    let reason = if turn.tool_calls.is_empty() {
        FinishReason::Stop
    } else {
        FinishReason::ToolCalls
    };
    steps.push_back(Step::Emit(ChatEvent::Finished { reason }));
    let usage = turn.usage.map_or_else(
        || Usage {
            prompt_tokens: estimate_tokens(prompt_chars(messages)),
            completion_tokens: estimate_tokens(completion_chars),
        },
        Usage::from,
    );
    steps.push_back(Step::Emit(ChatEvent::Usage(usage)));
    steps
}

/// Splits text after each run of whitespace, so the deltas join back to the exact text.
fn word_chunks(text: &str) -> Vec<String> {
    let mut chunks: Vec<String> = Vec::new();
    for piece in text.split_inclusive(char::is_whitespace) {
        match chunks.last_mut() {
            Some(last) if piece.trim().is_empty() => last.push_str(piece),
            _ => chunks.push(piece.to_string()),
        }
    }
    chunks
}

fn prompt_chars(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| match m {
            Message::Assistant {
                content,
                tool_calls,
            } => {
                content.chars().count()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.chars().count() + c.arguments.chars().count())
                        .sum::<usize>()
            }
            other => other.content().chars().count(),
        })
        .sum()
}

/// About four characters a token, the usual rule of thumb; never zero for a non-empty text.
fn estimate_tokens(chars: usize) -> u64 {
    u64::try_from(chars.div_ceil(4)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_chunks_join_back_to_the_text() {
        let text = " Hello,  brave new\nworld ";
        let chunks = word_chunks(text);
        assert_eq!(chunks.concat(), text);
        assert_eq!(chunks, [" ", "Hello,  ", "brave ", "new\n", "world "]);
    }

    #[test]
    fn token_estimates_round_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(8), 2);
    }
}
