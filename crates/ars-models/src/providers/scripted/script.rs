//! The script format of the scripted model (documented on the parent module), its
//! validation, and placeholder rendering.

use serde::Deserialize;
use serde_json::Value;

use crate::{Message, Role, Usage};

/// The placeholders a script may use.
const PLACEHOLDERS: [&str; 4] = ["input", "last_tool_result", "user_turns", "system_prompt"];

/// The longest delay a turn may ask for, so a typo cannot hang a run for hours.
const MAX_DELAY_MS: u64 = 10 * 60 * 1000;

/// A parsed, valid script.
#[derive(Debug, Clone)]
pub(super) struct Script {
    pub(super) turns: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Turn {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) tool_calls: Vec<ScriptedCall>,
    #[serde(default)]
    pub(super) delay_ms: u64,
    #[serde(default)]
    pub(super) chunk_delay_ms: u64,
    #[serde(default)]
    pub(super) error: Option<String>,
    #[serde(default)]
    pub(super) usage: Option<ScriptedUsage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptedCall {
    pub(super) name: String,
    /// An object, or raw JSON text (which may be deliberately broken, to test the runtime).
    #[serde(default)]
    pub(super) arguments: Value,
    #[serde(default)]
    pub(super) id: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScriptedUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl From<ScriptedUsage> for Usage {
    fn from(usage: ScriptedUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
        }
    }
}

impl Script {
    /// What plays when a scripted model has no script: an echo, enough for a demo.
    pub(super) fn echo() -> Self {
        Self {
            turns: vec![Turn {
                text: Some("You said: {{input}}".into()),
                tool_calls: Vec::new(),
                delay_ms: 0,
                chunk_delay_ms: 0,
                error: None,
                usage: None,
            }],
        }
    }

    /// Parses and checks a script; the error says which turn and field is wrong.
    pub(super) fn parse(value: &Value) -> Result<Self, String> {
        let turns = match value {
            Value::Array(turns) => turns,
            Value::Object(map) => {
                if let Some(key) = map.keys().find(|k| k.as_str() != "turns") {
                    return Err(format!(
                        "unknown field `{key}`; a script object has only `turns`"
                    ));
                }
                match map.get("turns") {
                    Some(Value::Array(turns)) => turns,
                    Some(_) => return Err("`turns` must be an array of turns".into()),
                    None => return Err("a script object needs a `turns` array".into()),
                }
            }
            _ => return Err("a script is an array of turns or an object with `turns`".into()),
        };
        if turns.is_empty() {
            return Err("a script needs at least one turn".into());
        }
        let turns = turns
            .iter()
            .enumerate()
            .map(|(i, turn)| parse_turn(turn).map_err(|e| format!("turn {i}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { turns })
    }

    /// The turn that plays for `messages`: one step further for each assistant message after
    /// the last user message, the last turn repeating once the script runs out.
    pub(super) fn turn_for(&self, messages: &[Message]) -> (usize, &Turn) {
        let start = messages
            .iter()
            .rposition(|m| m.role() == Role::User)
            .map_or(0, |i| i + 1);
        let played = messages[start..]
            .iter()
            .filter(|m| m.role() == Role::Assistant)
            .count();
        let index = played.min(self.turns.len() - 1);
        (index, &self.turns[index])
    }
}

fn parse_turn(value: &Value) -> Result<Turn, String> {
    if !value.is_object() {
        return Err("a turn must be an object".into());
    }
    let turn: Turn = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    for (name, delay) in [
        ("delay_ms", turn.delay_ms),
        ("chunk_delay_ms", turn.chunk_delay_ms),
    ] {
        if delay > MAX_DELAY_MS {
            return Err(format!(
                "`{name}` is {delay}, more than the {MAX_DELAY_MS} allowed"
            ));
        }
    }
    for text in turn.text.iter().chain(turn.error.iter()) {
        check_placeholders(text)?;
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        if call.name.trim().is_empty() {
            return Err(format!("tool call {i} needs a `name`"));
        }
        match &call.arguments {
            Value::Object(_) | Value::Null => check_placeholders(&call.arguments.to_string())?,
            Value::String(text) => check_placeholders(text)?,
            _ => {
                return Err(format!(
                    "tool call {i}: `arguments` must be an object or a string"
                ));
            }
        }
    }
    Ok(turn)
}

fn check_placeholders(text: &str) -> Result<(), String> {
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            return Ok(());
        };
        let name = after[..close].trim();
        if !PLACEHOLDERS.contains(&name) {
            return Err(format!(
                "unknown placeholder `{{{{{name}}}}}`; known: {}",
                PLACEHOLDERS.map(|p| format!("{{{{{p}}}}}")).join(", ")
            ));
        }
        rest = &after[close + 2..];
    }
    Ok(())
}

/// The values the placeholders stand for in one request.
pub(super) struct Context {
    input: String,
    last_tool_result: String,
    user_turns: String,
    system_prompt: String,
}

impl Context {
    pub(super) fn new(messages: &[Message]) -> Self {
        let last = |role: Role| {
            messages
                .iter()
                .rev()
                .find(|m| m.role() == role)
                .map(|m| m.content().to_string())
                .unwrap_or_default()
        };
        let system: Vec<&str> = messages
            .iter()
            .filter(|m| m.role() == Role::System)
            .map(Message::content)
            .collect();
        Self {
            input: last(Role::User),
            last_tool_result: last(Role::Tool),
            user_turns: messages
                .iter()
                .filter(|m| m.role() == Role::User)
                .count()
                .to_string(),
            system_prompt: system.join("\n\n"),
        }
    }

    /// `text` with every placeholder replaced.
    pub(super) fn render(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let value = after.find("}}").and_then(|close| {
                let value = match after[..close].trim() {
                    "input" => &self.input,
                    "last_tool_result" => &self.last_tool_result,
                    "user_turns" => &self.user_turns,
                    "system_prompt" => &self.system_prompt,
                    _ => return None,
                };
                Some((value, close))
            });
            match value {
                Some((value, close)) => {
                    out.push_str(value);
                    rest = &after[close + 2..];
                }
                None => {
                    out.push_str("{{");
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// Arguments as JSON text: strings are rendered as they are (they may be deliberately
    /// broken JSON), objects have their string values rendered.
    pub(super) fn render_arguments(&self, arguments: &Value) -> String {
        match arguments {
            Value::String(text) => self.render(text),
            Value::Null => "{}".into(),
            other => self.render_value(other).to_string(),
        }
    }

    fn render_value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.render(text)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.render_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.render_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}
