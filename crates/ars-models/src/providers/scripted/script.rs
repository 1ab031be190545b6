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
    /// Other turns for a last user message that contains a text, tried in order.
    pub(super) when: Vec<Branch>,
}

/// `when: [{input_contains, turns}]`: what plays instead when the last user message contains
/// `input_contains`.
#[derive(Debug, Clone)]
pub(super) struct Branch {
    input_contains: String,
    turns: Vec<Turn>,
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
            when: Vec::new(),
        }
    }

    /// Parses and checks a script; the error says which turn and field is wrong.
    pub(super) fn parse(value: &Value) -> Result<Self, String> {
        let (turns, when) = match value {
            Value::Array(turns) => (turns, None),
            Value::Object(map) => {
                if let Some(key) = map
                    .keys()
                    .find(|k| !["turns", "when"].contains(&k.as_str()))
                {
                    return Err(format!(
                        "unknown field `{key}`; a script object has only `turns` and `when`"
                    ));
                }
                match map.get("turns") {
                    Some(Value::Array(turns)) => (turns, map.get("when")),
                    Some(_) => return Err("`turns` must be an array of turns".into()),
                    None => return Err("a script object needs a `turns` array".into()),
                }
            }
            _ => return Err("a script is an array of turns or an object with `turns`".into()),
        };
        let turns = parse_turns(turns, "")?;
        let when = match when {
            None => Vec::new(),
            Some(Value::Array(branches)) => branches
                .iter()
                .enumerate()
                .map(|(i, branch)| parse_branch(branch).map_err(|e| format!("when {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err("`when` must be an array of {input_contains, turns}".into()),
        };
        Ok(Self { turns, when })
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
        let input = start.checked_sub(1).map_or("", |i| messages[i].content());
        let turns = self
            .when
            .iter()
            .find(|b| input.contains(&b.input_contains))
            .map_or(&self.turns, |b| &b.turns);
        let index = played.min(turns.len() - 1);
        (index, &turns[index])
    }
}

fn parse_turns(turns: &[Value], at: &str) -> Result<Vec<Turn>, String> {
    if turns.is_empty() {
        return Err(format!("{at}a script needs at least one turn"));
    }
    turns
        .iter()
        .enumerate()
        .map(|(i, turn)| parse_turn(turn).map_err(|e| format!("{at}turn {i}: {e}")))
        .collect()
}

fn parse_branch(value: &Value) -> Result<Branch, String> {
    let Value::Object(map) = value else {
        return Err("a branch is an object {input_contains, turns}".into());
    };
    if let Some(key) = map
        .keys()
        .find(|k| !["input_contains", "turns"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field `{key}`; a branch has `input_contains` and `turns`"
        ));
    }
    let Some(Value::String(input_contains)) = map.get("input_contains") else {
        return Err("`input_contains` must be a string".into());
    };
    let Some(Value::Array(turns)) = map.get("turns") else {
        return Err("`turns` must be an array of turns".into());
    };
    Ok(Branch {
        input_contains: input_contains.clone(),
        turns: parse_turns(turns, "")?,
    })
}

/// The most tokens a scripted turn may report: what a run's usage can hold.
const MAX_USAGE_TOKENS: u64 = i64::MAX as u64;

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
    if let Some(usage) = turn.usage {
        // A run stores its usage as signed 64-bit counts, as the API's schema states.
        for (name, tokens) in [
            ("prompt_tokens", usage.prompt_tokens),
            ("completion_tokens", usage.completion_tokens),
        ] {
            if tokens > MAX_USAGE_TOKENS {
                return Err(format!(
                    "`usage.{name}` is {tokens}, more than the {MAX_USAGE_TOKENS} allowed"
                ));
            }
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
        if !PLACEHOLDERS.contains(&name) && !is_field_placeholder(name) {
            return Err(format!(
                "unknown placeholder `{{{{{name}}}}}`; known: {}",
                PLACEHOLDERS.map(|p| format!("{{{{{p}}}}}")).join(", ")
            ));
        }
        rest = &after[close + 2..];
    }
    Ok(())
}

/// `last_tool_result.<field>[.<field>…]`, `tool_result.<i>` or `tool_result.<i>.<field>…`: the
/// i-th tool result since the last user message, or a field of a JSON tool result, so a script
/// can pass a `run_id` from one tool call to the next.
fn is_field_placeholder(name: &str) -> bool {
    let mut parts = name.split('.');
    match parts.next() {
        Some("last_tool_result") => parts.next().is_some(),
        Some("tool_result") => parts.next().is_some_and(|i| i.parse::<usize>().is_ok()),
        _ => false,
    }
}

/// Looks up a dotted field path in a JSON text; strings come out bare, other values as JSON.
fn json_field<'a>(text: &str, path: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut value: Value = serde_json::from_str(text).ok()?;
    for key in path {
        value = match value {
            Value::Object(mut map) => map.remove(key)?,
            Value::Array(mut items) => {
                let i: usize = key.parse().ok()?;
                if i < items.len() {
                    items.swap_remove(i)
                } else {
                    return None;
                }
            }
            _ => return None,
        };
    }
    Some(match value {
        Value::String(s) => s,
        other => other.to_string(),
    })
}

/// The values the placeholders stand for in one request.
pub(super) struct Context {
    input: String,
    last_tool_result: String,
    /// Tool results since the last user message, in order.
    tool_results: Vec<String>,
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
            tool_results: {
                let since_user = messages
                    .iter()
                    .rposition(|m| m.role() == Role::User)
                    .map_or(0, |i| i + 1);
                messages[since_user..]
                    .iter()
                    .filter(|m| m.role() == Role::Tool)
                    .map(|m| m.content().to_string())
                    .collect()
            },
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
                let name = after[..close].trim();
                let value = match name {
                    "input" => self.input.clone(),
                    "last_tool_result" => self.last_tool_result.clone(),
                    "user_turns" => self.user_turns.clone(),
                    "system_prompt" => self.system_prompt.clone(),
                    _ => self.field(name)?,
                };
                Some((value, close))
            });
            match value {
                Some((value, close)) => {
                    out.push_str(&value);
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

    /// A field placeholder's value; empty when the result is not JSON or lacks the field.
    fn field(&self, name: &str) -> Option<String> {
        if !is_field_placeholder(name) {
            return None;
        }
        let mut parts = name.split('.');
        let source = match parts.next() {
            Some("last_tool_result") => Some(self.last_tool_result.as_str()),
            _ => parts
                .next()
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| self.tool_results.get(i).map(String::as_str)),
        };
        let path: Vec<&str> = parts.collect();
        Some(match source {
            Some(text) if path.is_empty() => text.to_string(),
            Some(text) => json_field(text, path.into_iter()).unwrap_or_default(),
            None => String::new(),
        })
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

#[cfg(test)]
mod field_tests {
    use super::*;

    #[test]
    fn field_placeholders_read_json_tool_results() {
        let messages = vec![
            Message::user("go"),
            Message::tool("a", r#"{"run_id":"r1","n":{"x":2}}"#),
            Message::tool("b", r#"{"run_id":"r2"}"#),
        ];
        let ctx = Context::new(&messages);
        assert_eq!(ctx.render("{{last_tool_result.run_id}}"), "r2");
        assert_eq!(
            ctx.render("{{tool_result.0.run_id}}/{{tool_result.0.n.x}}"),
            "r1/2"
        );
        assert_eq!(ctx.render("[{{tool_result.5.run_id}}]"), "[]");
        assert!(check_placeholders("{{tool_result.0.run_id}}").is_ok());
        assert!(check_placeholders("{{tool_result.x.run_id}}").is_err());
        assert_eq!(ctx.render("{{tool_result.1}}"), r#"{"run_id":"r2"}"#);
    }
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn scripted_usage_is_bounded_by_what_a_run_stores() {
        let turn = |tokens: u64| serde_json::json!([{"text": "hi", "usage": {"prompt_tokens": tokens, "completion_tokens": 0}}]);
        assert!(Script::parse(&turn(i64::MAX as u64)).is_ok());
        let err = Script::parse(&turn(i64::MAX as u64 + 1)).unwrap_err();
        assert!(err.contains("usage.prompt_tokens"), "{err}");
    }
}

#[cfg(test)]
mod when_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_last_user_message_containing_a_branchs_text_plays_that_branchs_turns() {
        let script = Script::parse(&json!({
            "turns": [{"text": "start"}, {"text": "started"}],
            "when": [{"input_contains": "[notice]", "turns": [{"text": "reported"}]}]
        }))
        .unwrap();
        let text = |messages: &[Message]| script.turn_for(messages).1.text.clone();
        assert_eq!(text(&[Message::user("go")]).as_deref(), Some("start"));
        assert_eq!(
            text(&[Message::user("go"), Message::assistant("start", Vec::new())]).as_deref(),
            Some("started")
        );
        let woken = [
            Message::user("go"),
            Message::assistant("started", Vec::new()),
            Message::user("[notice] done"),
        ];
        assert_eq!(text(&woken).as_deref(), Some("reported"));
        for bad in [
            json!({"turns": [{}], "when": {}}),
            json!({"turns": [{}], "when": [{"turns": [{}]}]}),
            json!({"turns": [{}], "when": [{"input_contains": "x", "turns": []}]}),
            json!({"turns": [{}], "when": [{"input_contains": "x", "turns": [{}], "y": 1}]}),
        ] {
            assert!(Script::parse(&bad).is_err(), "{bad}");
        }
    }
}
