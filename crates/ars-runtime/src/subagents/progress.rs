//! Light progress for `subagent_status`: short, human-readable lines derived from a child
//! run's committed messages — never raw events.

use ars_domain::{Message, MessageRole};

const ARG_CHARS: usize = 60;
const WORDS: usize = 12;

/// The last `n` summaries of `messages`, oldest first.
pub fn summarize(messages: &[Message], n: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for m in messages {
        match m.role {
            MessageRole::Assistant => {
                for call in &m.tool_calls {
                    lines.push(describe_call(&call.name, &call.arguments, m, messages));
                }
                let text = first_words(&m.content, WORDS);
                if !text.is_empty() {
                    lines.push(format!("said: {text}"));
                }
            }
            MessageRole::Tool if m.is_error => {
                lines.push(format!(
                    "{} failed: {}",
                    m.tool_name.as_deref().unwrap_or("tool"),
                    first_words(&m.content, WORDS)
                ));
            }
            _ => {}
        }
    }
    let skip = lines.len().saturating_sub(n);
    lines.split_off(skip)
}

/// "wrote report.md" for a successful write, else "called read_file notes.md".
fn describe_call(name: &str, arguments: &str, _owner: &Message, _all: &[Message]) -> String {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let key = ["path", "command", "pattern", "subagent_slug", "run_id"]
        .iter()
        .find_map(|k| args.get(*k).and_then(|v| v.as_str()));
    let arg = key.map(|v| truncate(v, ARG_CHARS)).unwrap_or_default();
    match name {
        "write_file" => format!("wrote {arg}"),
        "edit_file" => format!("edited {arg}"),
        _ if arg.is_empty() => format!("called {name}"),
        _ => format!("called {name} {arg}"),
    }
}

fn first_words(text: &str, n: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = words.iter().take(n).copied().collect::<Vec<_>>().join(" ");
    if words.len() > n {
        out.push('…');
    }
    truncate(&out, 120)
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{MessageId, ThreadId, ToolCallRecord};

    fn message(role: MessageRole, content: &str, calls: &[(&str, &str)]) -> Message {
        Message {
            id: MessageId::new(),
            thread_id: ThreadId::new(),
            run_id: None,
            seq: 0,
            role,
            content: content.into(),
            tool_calls: calls
                .iter()
                .map(|(n, a)| ToolCallRecord {
                    interrupted: false,
                    id: "c".into(),
                    name: n.to_string(),
                    arguments: a.to_string(),
                })
                .collect(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: None,
            created_at: ars_domain::time::now(),
            replaced_by_run_id: None,
            steer: false,
        }
    }

    #[test]
    fn summaries_name_the_files_and_the_first_words() {
        let messages = vec![
            message(MessageRole::User, "do it", &[]),
            message(
                MessageRole::Assistant,
                "",
                &[("read_file", r#"{"path":"notes.md"}"#)],
            ),
            message(
                MessageRole::Assistant,
                "",
                &[("write_file", r#"{"path":"report.md","content":"x"}"#)],
            ),
            message(
                MessageRole::Assistant,
                "The report is ready and covers all three topics in depth as asked",
                &[],
            ),
        ];
        assert_eq!(
            summarize(&messages, 3),
            vec![
                "called read_file notes.md".to_string(),
                "wrote report.md".to_string(),
                "said: The report is ready and covers all three topics in depth as…".to_string(),
            ]
        );
        assert_eq!(summarize(&messages, 1).len(), 1);
    }
}
