//! How a run looks in the terminal: streamed text as it arrives, one line per tool call started
//! (`⚙ read_file {"path":"notes.md"}`) and finished (`✓ read_file: <preview>`, `✗` on error), and
//! a clear line when a run ends any other way than `success`.
//!
//! Conversation goes to `out`, problems to `err`; both are plain writers so tests can read them.

use std::io::{self, Write};

use ars_domain::{MessageRole, Run, RunStatus};
use ars_events::EventKind;

/// Longest tool-argument text shown on a `⚙` line, in characters.
const ARGS_CHARS: usize = 200;

/// Longest tool-result preview shown on a `✓` line, in characters.
const RESULT_CHARS: usize = 120;

/// Whether the run goes on after an event.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Ended(RunStatus),
}

/// Writes one run after another.
pub struct Renderer<O: Write, E: Write> {
    out: O,
    err: E,
    /// The cursor is not at the start of a line (streamed text without its newline yet).
    mid_line: bool,
    /// Some answer text was streamed during this run.
    streamed: bool,
}

impl<O: Write, E: Write> Renderer<O, E> {
    pub fn new(out: O, err: E) -> Self {
        Self {
            out,
            err,
            mid_line: false,
            streamed: false,
        }
    }

    /// Ends a partly written line, so the next line starts at the margin.
    fn line_break(&mut self) -> io::Result<()> {
        if self.mid_line {
            writeln!(self.out)?;
            self.mid_line = false;
        }
        Ok(())
    }

    /// Renders one event of the current run.
    pub fn event(&mut self, kind: &EventKind) -> io::Result<Flow> {
        match kind {
            EventKind::MessageDelta { text } => {
                write!(self.out, "{text}")?;
                self.mid_line = !text.ends_with('\n');
                self.streamed |= !text.is_empty();
            }
            EventKind::MessageCompleted { message } if message.role == MessageRole::Assistant => {
                self.line_break()?;
            }
            EventKind::ToolCallStarted {
                name, arguments, ..
            } => {
                self.line_break()?;
                writeln!(self.out, "⚙ {name} {}", compact_arguments(arguments))?;
            }
            EventKind::ToolCallFinished {
                name,
                is_error,
                preview,
                ..
            } => {
                self.line_break()?;
                let mark = if *is_error { '✗' } else { '✓' };
                writeln!(
                    self.out,
                    "{mark} {name}: {}",
                    one_line(preview, RESULT_CHARS)
                )?;
            }
            EventKind::Error { message } => {
                self.line_break()?;
                writeln!(self.err, "warning: {message}")?;
            }
            EventKind::RunStatus {
                status,
                error,
                output,
                ..
            } if status.is_terminal() => {
                self.finish(*status, error.as_deref(), output.as_deref())?;
                return Ok(Flow::Ended(*status));
            }
            _ => {}
        }
        self.out.flush()?;
        Ok(Flow::Continue)
    }

    /// Ends the current run from the stored run, when its events could not be streamed.
    pub fn run_ended(&mut self, run: &Run) -> io::Result<()> {
        self.finish(run.status, run.error.as_deref(), run.output.as_deref())
    }

    fn finish(
        &mut self,
        status: RunStatus,
        error: Option<&str>,
        output: Option<&str>,
    ) -> io::Result<()> {
        self.line_break()?;
        match status {
            RunStatus::Success => {
                // Nothing was streamed (a resumed or replaced stream): show the answer now.
                if let Some(output) = output.filter(|_| !self.streamed) {
                    writeln!(self.out, "{output}")?;
                }
            }
            RunStatus::Cancelled => writeln!(self.err, "✗ run cancelled")?,
            other => writeln!(
                self.err,
                "✗ run ended with status `{}`: {}",
                other.as_str(),
                error.unwrap_or("no reason given")
            )?,
        }
        self.streamed = false;
        self.out.flush()?;
        self.err.flush()
    }

    /// A line about the chat itself (`cancelling…`, a new thread).
    pub fn notice(&mut self, text: &str) -> io::Result<()> {
        self.line_break()?;
        writeln!(self.err, "{text}")?;
        self.err.flush()
    }

    /// A request failed: say so, clearly, on its own line.
    pub fn error(&mut self, error: &anyhow::Error) -> io::Result<()> {
        self.line_break()?;
        writeln!(self.err, "error: {error:#}")?;
        self.err.flush()
    }

    pub fn prompt(&mut self) -> io::Result<()> {
        self.line_break()?;
        write!(self.out, "> ")?;
        self.out.flush()
    }
}

/// Tool arguments on one line: re-serialized compactly when they are JSON, as given otherwise.
fn compact_arguments(arguments: &str) -> String {
    let compact = serde_json::from_str::<serde_json::Value>(arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| arguments.to_string());
    one_line(&compact, ARGS_CHARS)
}

/// The first line of `text`, cut to `max` characters; `…` marks anything left out.
fn one_line(text: &str, max: usize) -> String {
    let text = text.trim();
    let first = text.lines().next().unwrap_or_default();
    let cut: String = first.chars().take(max).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(events: &[EventKind]) -> (String, String, Vec<Flow>) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let flows = {
            let mut renderer = Renderer::new(&mut out, &mut err);
            events
                .iter()
                .map(|e| renderer.event(e).unwrap_or(Flow::Continue))
                .collect()
        };
        (
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
            flows,
        )
    }

    #[test]
    fn text_streams_inline_and_tool_calls_get_their_own_lines() {
        let (out, err, flows) = render(&[
            EventKind::status(RunStatus::Running),
            EventKind::MessageDelta {
                text: "Let me".into(),
            },
            EventKind::MessageDelta {
                text: " look.".into(),
            },
            EventKind::ToolCallStarted {
                call_id: "c1".into(),
                name: "read_file".into(),
                arguments: "{ \"path\": \"notes.md\" }".into(),
            },
            EventKind::tool_call_finished("c1", "read_file", false, "line one\nline two"),
            EventKind::tool_call_finished("c2", "ls", true, "no such dir"),
            EventKind::MessageDelta {
                text: "Done.".into(),
            },
            EventKind::RunStatus {
                status: RunStatus::Success,
                error: None,
                error_code: None,
                output: Some("Done.".into()),
            },
        ]);
        assert_eq!(
            out,
            "Let me look.\n⚙ read_file {\"path\":\"notes.md\"}\n✓ read_file: line one…\n✗ ls: no such dir\nDone.\n"
        );
        assert_eq!(err, "");
        assert_eq!(flows.last(), Some(&Flow::Ended(RunStatus::Success)));
        assert_eq!(flows[0], Flow::Continue);
    }

    #[test]
    fn failed_and_cancelled_runs_say_so_on_stderr() {
        let (_, err, _) = render(&[EventKind::RunStatus {
            status: RunStatus::Error,
            error: Some("model error: boom".into()),
            error_code: None,
            output: None,
        }]);
        assert_eq!(err, "✗ run ended with status `error`: model error: boom\n");
        let (_, err, _) = render(&[EventKind::status(RunStatus::Cancelled)]);
        assert_eq!(err, "✗ run cancelled\n");
    }

    #[test]
    fn long_arguments_are_cut_on_one_line() {
        let long = format!("{{\"content\": \"{}\"}}", "x".repeat(500));
        let shown = compact_arguments(&long);
        assert_eq!(shown.chars().count(), ARGS_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(compact_arguments("not json"), "not json");
    }
}
