//! One MCP server tool as a run's [`Tool`]: arguments checked against the server's schema,
//! the call made through the shared connection within the time limit and cancelled with the
//! run, the result turned into text for the model with images and resources saved as files
//! in the workdir.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use ars_domain::McpServer;
use ars_mcp::content::{self, Attachment};
use ars_mcp::{ArgsSchema, McpError, ServerTool, names};
use ars_sandbox::WriteMode;

use super::McpHub;
use crate::tool::{Tool, ToolContext, ToolError};

/// Where saved attachments go, below the workdir: `mcp/<server>/…`.
pub const OUTPUT_DIR: &str = "mcp";

/// A tool of an MCP server, offered as `mcp__<server>__<tool>`.
pub struct McpTool {
    hub: McpHub,
    server: Arc<McpServer>,
    /// The name the model calls it by.
    name: String,
    /// The server's own name for it.
    tool: String,
    description: String,
    parameters: Arc<Value>,
    schema: Arc<ArgsSchema>,
}

impl McpTool {
    /// The tool, or `None` when its input schema could not be checked safely (the listing
    /// said why, in [`ServerTool::problem`]).
    pub(super) fn new(hub: McpHub, server: Arc<McpServer>, tool: &ServerTool) -> Option<Self> {
        let schema = Arc::clone(tool.schema.as_ref()?);
        let description = if tool.description.is_empty() {
            tool.title.clone().unwrap_or_else(|| tool.name.clone())
        } else {
            tool.description.clone()
        };
        Some(Self {
            schema,
            name: names::tool_name(&server.fields.slug, &tool.name),
            tool: tool.name.clone(),
            description,
            parameters: Arc::new(tool.input_schema.clone()),
            server,
            hub,
        })
    }

    fn slug(&self) -> &str {
        &self.server.fields.slug
    }

    /// Writes the attachments into the workdir; answers a line per file (or why not).
    async fn save(&self, attachments: Vec<Attachment>, ctx: &ToolContext) -> Vec<String> {
        let mut lines = Vec::with_capacity(attachments.len());
        let stem = format!(
            "{}-{}",
            file_safe(&self.tool, 40),
            file_safe(&ctx.call_id, 40)
        );
        for (n, attachment) in attachments.into_iter().enumerate() {
            let path = format!(
                "{OUTPUT_DIR}/{}/{stem}-{}.{}",
                self.slug(),
                n + 1,
                attachment.extension()
            );
            let size = attachment.bytes.len();
            let what = match (&attachment.uri, &attachment.mime_type) {
                (Some(uri), Some(mime)) => format!("{} {uri} ({mime}", attachment.kind),
                (Some(uri), None) => format!("{} {uri} (", attachment.kind),
                (None, Some(mime)) => format!("{} ({mime}", attachment.kind),
                (None, None) => format!("{} (", attachment.kind),
            };
            let sep = if what.ends_with('(') { "" } else { ", " };
            let written = async {
                ctx.sandbox()
                    .await?
                    .write_bytes(&ctx.scope, &path, attachment.bytes, WriteMode::Replace)
                    .await
            };
            match written.await {
                Ok(written) => lines.push(format!(
                    "[{what}{sep}{size} bytes) saved to {}]",
                    written.entry.path
                )),
                Err(e) => lines.push(format!(
                    "[{what}{sep}{size} bytes) could not be saved: {e}]"
                )),
            }
        }
        lines
    }

    /// Reads linked resources and saves them like attachments; a link that cannot be read is
    /// named as it is.
    async fn fetch_links(
        &self,
        links: Vec<content::ResourceLink>,
        connection: &ars_mcp::Connection,
        ctx: &ToolContext,
    ) -> (Vec<Attachment>, Vec<String>) {
        let mut attachments = Vec::new();
        let mut notes = Vec::new();
        let timeout = self.hub.config().call_timeout;
        for link in links {
            match connection
                .read_resource(&link.uri, timeout, &ctx.cancel)
                .await
            {
                Ok(read) => {
                    for resource in read.contents {
                        match content::resource_bytes(resource) {
                            Ok(attachment) => attachments.push(attachment),
                            Err(note) => notes.push(note),
                        }
                    }
                }
                Err(e) => notes.push(format!(
                    "[linked resource {} ({}): not read: {e}]",
                    link.uri, link.name
                )),
            }
        }
        (attachments, notes)
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Arc<Value> {
        Arc::clone(&self.parameters)
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "the arguments must be a JSON object, not {other}"
                )));
            }
        };
        self.schema
            .check(&Value::Object(arguments.clone()))
            .map_err(ToolError::InvalidArguments)?;
        let (key, connection) = self
            .hub
            .connection(&self.server, &ctx.scope)
            .await
            .map_err(failed)?;
        let timeout = self.hub.config().call_timeout;
        let answered = connection
            .call(&self.tool, arguments, timeout, &ctx.cancel)
            .await;
        let result = match answered {
            Ok(result) => result,
            Err(e) => {
                if e.breaks_connection() || connection.is_closed() {
                    self.hub.pool().discard(&key, &connection).await;
                }
                return Err(failed(e));
            }
        };
        let content::ToolOutput {
            text,
            mut attachments,
            links,
            is_error,
        } = content::convert(result);
        let mut notes = Vec::new();
        if !links.is_empty() {
            let (linked, link_notes) = self.fetch_links(links, &connection, ctx).await;
            attachments.extend(linked);
            notes = link_notes;
        }
        drop(connection);
        let mut saved = self.save(attachments, ctx).await;
        saved.extend(notes);
        let mut text = text;
        if !saved.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&saved.join("\n"));
        }
        let text = truncate(text, self.hub.config().max_result_chars);
        if is_error {
            let text = if text.is_empty() {
                format!("MCP server `{}` says the call failed", self.slug())
            } else {
                text
            };
            return Err(ToolError::Failed(text));
        }
        Ok(text)
    }
}

fn failed(error: McpError) -> ToolError {
    ToolError::Failed(error.to_string())
}

/// `text` cut to `max` characters, with a note saying how much was left out.
fn truncate(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let mut cut: String = text.chars().take(max).collect();
    cut.push_str(&format!(
        "\n[result truncated: {} of {total} characters shown]",
        max
    ));
    cut
}

/// `text` as part of a file name: ASCII letters, digits, `-` and `_`, at most `max`.
fn file_safe(text: &str, max: usize) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(max)
        .collect();
    if safe.is_empty() { "call".into() } else { safe }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_are_cut_with_a_note() {
        assert_eq!(truncate("short".into(), 10), "short");
        let cut = truncate("é".repeat(20), 5);
        assert!(
            cut.starts_with("ééééé\n[result truncated: 5 of 20"),
            "{cut}"
        );
    }

    #[test]
    fn file_names_keep_only_safe_characters() {
        assert_eq!(file_safe("get-tiny-image", 40), "get-tiny-image");
        assert_eq!(file_safe("../../etc", 40), "______etc");
        assert_eq!(file_safe("", 40), "call");
        assert_eq!(file_safe(&"x".repeat(100), 40).len(), 40);
    }
}
