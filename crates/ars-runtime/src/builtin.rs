//! The built-in tools: files and shell in the run's sandbox scope (SPEC §6).
//!
//! Each is a thin adapter from typed arguments to a [`Sandbox`](ars_sandbox::Sandbox) call;
//! the sandbox enforces the scope. Paths are virtual: relative to the workdir, or absolute
//! under `/home/gem/user-data` and `/home/gem/skills`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use ars_sandbox::ExecRequest;

use crate::tool::{Tool, ToolContext, ToolError, ToolRegistry, parse_args, to_json};
use crate::tool_meta;

/// Default and ceiling of `execute`'s timeout, in seconds.
const EXEC_DEFAULT_TIMEOUT_S: u64 = 120;
const EXEC_MAX_TIMEOUT_S: u64 = 1800;

/// Every built-in tool.
pub fn builtin_tools() -> ToolRegistry {
    ToolRegistry::new([
        Arc::new(Ls) as Arc<dyn Tool>,
        Arc::new(ReadFile),
        Arc::new(WriteFile),
        Arc::new(EditFile),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(Execute),
        Arc::new(AskUser),
    ])
}

/// The name of the tool that asks the user a question: a valid call of it puts the run in
/// `waiting` (see `agent_loop`), and the answer becomes its result.
pub const ASK_USER: &str = "ask_user";

/// `ask_user`: never runs by itself. The loop stops the turn at a valid call and the person's
/// answer becomes the result; a call reaches here only with arguments that are not a
/// question, and is told so.
struct AskUser;

#[async_trait]
impl Tool for AskUser {
    tool_meta!(
        ASK_USER,
        "Ask the user a question and wait for the answer (the run pauses until they reply). Use it when you cannot go on without their choice or information; offer options when the answer is one of a few.",
        json!({"type": "object", "properties": {
            "question": {"type": "string", "minLength": 1, "maxLength": 4000},
            "options": {"type": "array", "maxItems": 20, "items": {"type": "string", "minLength": 1, "maxLength": 500}, "description": "Answers to choose from (the user may still answer otherwise)"}
        }, "required": ["question"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        match ars_domain::waiting::Question::parse(&args) {
            Err(e) => Err(ToolError::InvalidArguments(e)),
            Ok(_) => Err(ToolError::Failed(
                "the question could not be put to the user; go on without it".into(),
            )),
        }
    }
}

struct Ls;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LsArgs {
    #[serde(default = "dot")]
    path: String,
}

fn dot() -> String {
    ".".into()
}

#[async_trait]
impl Tool for Ls {
    tool_meta!(
        "ls",
        "List a directory. Paths are relative to the workdir or absolute under /home/gem/user-data or /home/gem/skills.",
        json!({"type": "object", "properties": {"path": {"type": "string", "description": "Directory; default: the workdir"}}, "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: LsArgs = parse_args(args)?;
        to_json(&ctx.sandbox().await?.list(&ctx.scope, &args.path).await?)
    }
}

struct ReadFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    limit: Option<usize>,
}

#[async_trait]
impl Tool for ReadFile {
    tool_meta!(
        "read_file",
        "Read a text file with line numbers. Use offset (1-based first line) and limit (line count) for long files.",
        json!({"type": "object", "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0, "description": "First line, 1-based"},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines"}
        }, "required": ["path"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: ReadArgs = parse_args(args)?;
        let out = ctx
            .sandbox()
            .await?
            .read(&ctx.scope, &args.path, args.offset, args.limit)
            .await?;
        let mut text = out.content;
        if out.truncated {
            text.push_str(&format!(
                "\n[showing lines {}-{} of {}; use offset/limit for more]",
                out.first_line,
                out.first_line + out.lines_returned.saturating_sub(1),
                out.total_lines
            ));
        }
        Ok(text)
    }
}

struct WriteFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteFile {
    tool_meta!(
        "write_file",
        "Create or overwrite a file with the given content (parent directories are created).",
        json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args: WriteArgs = parse_args(args)?;
        to_json(
            &ctx.sandbox()
                .await?
                .write(&ctx.scope, &args.path, &args.content)
                .await?,
        )
    }
}

struct EditFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

#[async_trait]
impl Tool for EditFile {
    tool_meta!(
        "edit_file",
        "Replace an exact string in a file. old_string must occur exactly once unless replace_all is true.",
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"},
            "replace_all": {"type": "boolean", "default": false}
        }, "required": ["path", "old_string", "new_string"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let a: EditArgs = parse_args(args)?;
        to_json(
            &ctx.sandbox()
                .await?
                .edit(
                    &ctx.scope,
                    &a.path,
                    &a.old_string,
                    &a.new_string,
                    a.replace_all,
                )
                .await?,
        )
    }
}

struct Glob;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlobArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Tool for Glob {
    tool_meta!(
        "glob",
        "Find files by glob pattern (e.g. **/*.md), from the workdir or the given directory.",
        json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}}, "required": ["pattern"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let a: GlobArgs = parse_args(args)?;
        to_json(
            &ctx.sandbox()
                .await?
                .glob(&ctx.scope, &a.pattern, a.path.as_deref())
                .await?,
        )
    }
}

struct Grep;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
}

#[async_trait]
impl Tool for Grep {
    tool_meta!(
        "grep",
        "Search file contents with a regular expression; answers file:line:text lines.",
        json!({"type": "object", "properties": {
            "pattern": {"type": "string", "description": "Regular expression"},
            "path": {"type": "string", "description": "File or directory; default: the workdir"},
            "glob": {"type": "string", "description": "Only files matching this glob"}
        }, "required": ["pattern"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let a: GrepArgs = parse_args(args)?;
        let out = ctx
            .sandbox()
            .await?
            .grep(&ctx.scope, &a.pattern, a.path.as_deref(), a.glob.as_deref())
            .await?;
        Ok(out.render())
    }
}

struct Execute;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecArgs {
    command: String,
    #[serde(default)]
    timeout_s: Option<u64>,
}

#[async_trait]
impl Tool for Execute {
    tool_meta!(
        "execute",
        "Run a shell command (bash) in the workdir, isolated: only the user's workspace and skills are visible, no network unless allowed, no server credentials. Never use it to call ARS itself or its subagents.",
        json!({"type": "object", "properties": {
            "command": {"type": "string"},
            "timeout_s": {"type": "integer", "minimum": 1, "maximum": EXEC_MAX_TIMEOUT_S, "description": "Default 120"}
        }, "required": ["command"], "additionalProperties": false})
    );
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let a: ExecArgs = parse_args(args)?;
        let timeout_s = a
            .timeout_s
            .unwrap_or(EXEC_DEFAULT_TIMEOUT_S)
            .clamp(1, EXEC_MAX_TIMEOUT_S);
        let request = ExecRequest {
            command: a.command,
            timeout: Duration::from_secs(timeout_s),
            allow_network: ctx.allow_network,
        };
        let out = ctx
            .sandbox()
            .await?
            .execute(&ctx.scope, request, ctx.cancel.child_token())
            .await?;
        to_json(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_an_object_schema_and_a_description() {
        let registry = builtin_tools();
        assert_eq!(
            registry.names(),
            [
                "ask_user",
                "edit_file",
                "execute",
                "glob",
                "grep",
                "ls",
                "read_file",
                "write_file"
            ]
        );
        for info in registry.infos() {
            assert_eq!(info.parameters["type"], "object", "{}", info.name);
            assert!(!info.description.is_empty());
        }
    }

    #[test]
    fn bad_arguments_name_the_field() {
        let err = parse_args::<ReadArgs>(json!({"path": 3}))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref()
                .map(|e| e.starts_with("invalid arguments: path")),
            Some(true)
        );
        let err = parse_args::<ReadArgs>(json!({"path": "a", "bogus": 1}))
            .err()
            .map(|e| e.to_string());
        assert!(err.unwrap_or_default().contains("unknown field `bogus`"));
    }
}
