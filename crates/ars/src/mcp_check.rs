//! `ars mcp check`: what the web UI's "Test connection" shows, for operators, as JSON on
//! standard output — connect (a URL over Streamable HTTP, or a command over stdio, run here as
//! it is), initialise, list the tools and, with `--call`, call one.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use ars_mcp::{Connection, McpError, PeerText, Reach, content};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::cli::McpCheckArgs;

/// The name errors give the server: what the operator typed.
const SERVER: &str = "target";

pub async fn run(args: McpCheckArgs) -> anyhow::Result<()> {
    let timeout = Duration::from_secs(args.timeout_s.max(1));
    let arguments: serde_json::Map<String, Value> =
        serde_json::from_str(&args.arguments).context("--arguments must be a JSON object")?;
    let started = Instant::now();
    let mut child = None;
    let connection = match args.target.as_slice() {
        [url] if url.starts_with("http://") || url.starts_with("https://") => {
            let headers = parse_headers(&args.headers)?;
            // The operator's own command line: anywhere, and every word the server says.
            Connection::over_http(
                SERVER,
                url,
                &headers,
                timeout,
                &Reach::Anywhere,
                PeerText::Shown,
            )
            .await
        }
        [program, rest @ ..] => {
            if !args.headers.is_empty() {
                anyhow::bail!("--header is for URLs; a command gets its settings in its arguments");
            }
            let mut command = tokio::process::Command::new(program);
            command
                .args(rest)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true);
            let mut spawned = command
                .spawn()
                .with_context(|| format!("cannot start `{program}`"))?;
            match (spawned.stdout.take(), spawned.stdin.take()) {
                (Some(out), Some(input)) => {
                    child = Some(spawned);
                    Connection::over_streams(SERVER, out, input, timeout).await
                }
                _ => {
                    anyhow::bail!("cannot talk to `{program}`: its standard streams are not piped")
                }
            }
        }
        [] => anyhow::bail!("name a URL or a command"),
    };
    let (report, ok) = match connection {
        Err(e) => (failure(&e, started), false),
        Ok(connection) => {
            let answer = match ars_mcp::check(&connection, started, timeout).await {
                Err(e) => (failure(&e, started), false),
                Ok(report) => {
                    let mut value = json!({"ok": true});
                    merge(&mut value, serde_json::to_value(&report)?);
                    match &args.call {
                        None => (value, true),
                        Some(tool) => {
                            let (call, ok) = call(&connection, tool, arguments, timeout).await;
                            value["call"] = call;
                            value["ok"] = json!(ok);
                            (value, ok)
                        }
                    }
                }
            };
            connection.close().await;
            answer
        }
    };
    if let Some(mut child) = child {
        let _ = child.kill().await;
    }
    println!("{}", serde_json::to_string_pretty(&report)?);
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

async fn call(
    connection: &Connection,
    tool: &str,
    arguments: serde_json::Map<String, Value>,
    timeout: Duration,
) -> (Value, bool) {
    match connection
        .call(tool, arguments, timeout, &CancellationToken::new())
        .await
    {
        Err(e) => (json!({"tool": tool, "error": error(&e)}), false),
        Ok(result) => {
            let output = content::convert(result);
            let attachments: Vec<Value> = output
                .attachments
                .iter()
                .map(|a| json!({"kind": a.kind, "mime_type": a.mime_type, "uri": a.uri, "bytes": a.bytes.len()}))
                .collect();
            let links: Vec<Value> = output
                .links
                .iter()
                .map(|l| json!({"uri": l.uri, "name": l.name}))
                .collect();
            (
                json!({"tool": tool, "is_error": output.is_error, "text": output.text,
                       "attachments": attachments, "links": links}),
                !output.is_error,
            )
        }
    }
}

fn failure(e: &McpError, started: Instant) -> Value {
    json!({
        "ok": false,
        "latency_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "tools": [],
        "error": error(e),
    })
}

fn error(e: &McpError) -> Value {
    let mut error = json!({"kind": e.kind(), "message": e.to_string()});
    if let Some(status) = e.status() {
        error["status"] = json!(status);
    }
    error
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        into.extend(from);
    }
}

/// `NAME=VALUE` pairs, names lower-cased.
fn parse_headers(headers: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    headers
        .iter()
        .map(|pair| {
            let (name, value) = pair
                .split_once('=')
                .with_context(|| format!("--header `{pair}` is not NAME=VALUE"))?;
            Ok((name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect()
}
