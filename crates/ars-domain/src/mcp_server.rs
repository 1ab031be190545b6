//! MCP servers as a managed resource: what an agent names in `context.mcp_servers`, how the
//! server is reached (a command run in the sandbox, or a Streamable HTTP endpoint), and the
//! rules every write of one obeys.
//!
//! MCP servers share like agents and skills ([`crate::ShareConfig`], through
//! [`crate::Shared`]). Environment values and header values may be secrets: those are stored
//! only [`Sealed`] (see [`crate::secret`]), each bound to its server and field, and never read
//! back. `Authorization`-like headers are always secret.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{McpServerId, UserId};
use crate::model_provider::{is_header_token, is_port, validate_secret};
use crate::secret::Sealed;
use crate::{ShareConfig, ValidationError};

/// The longest slug.
pub const SLUG_MAX_CHARS: usize = 64;
/// The longest display name.
pub const NAME_MAX_CHARS: usize = 128;
/// The longest description.
pub const DESCRIPTION_MAX_CHARS: usize = 4000;
/// The longest command, argument, working directory or value.
pub const TEXT_MAX_CHARS: usize = 8192;
/// The most arguments of a command.
pub const MAX_ARGS: usize = 256;
/// The most environment variables or headers.
pub const MAX_VARIABLES: usize = 64;
/// The longest environment variable or header name.
pub const VARIABLE_NAME_MAX_CHARS: usize = 128;
/// The most tool names an allow-list holds.
pub const MAX_ENABLED_TOOLS: usize = 1000;
/// The longest tool name (MCP allows 128).
pub const TOOL_NAME_MAX_CHARS: usize = 128;
/// The longest URL.
pub const URL_MAX_CHARS: usize = 2048;
/// The longest header value.
pub const HEADER_VALUE_MAX_CHARS: usize = crate::model_provider::SECRET_MAX_CHARS;

/// Header names whose value is a secret whatever the write says.
pub const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
];

/// Headers the MCP client writes itself, so a server entry may not.
pub const RESERVED_HEADERS: [&str; 9] = [
    "accept",
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// An MCP server as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    pub id: McpServerId,
    pub fields: McpServerFields,
    /// `None` once the owner's account is gone: admins and managers still manage it.
    pub owner_id: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Everything a write of an MCP server sets. Secrets arrive sealed.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerFields {
    /// What agents write in `context.mcp_servers` and tools are named by (see
    /// [`validate_slug`]).
    pub slug: String,
    pub name: String,
    pub description: String,
    pub transport: McpTransport,
    /// The tools offered to agents; `None`: all the server lists.
    pub enabled_tools: Option<Vec<String>>,
    pub share_config: ShareConfig,
}

/// How the server is reached. Stored as JSON (secrets sealed inside).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum McpTransport {
    /// A command run in the sandbox of the run that uses it, speaking MCP on stdin/stdout.
    Stdio(StdioTransport),
    /// An MCP endpoint over Streamable HTTP.
    StreamableHttp(HttpTransport),
}

impl McpTransport {
    pub fn kind(&self) -> McpTransportKind {
        match self {
            Self::Stdio(_) => McpTransportKind::Stdio,
            Self::StreamableHttp(_) => McpTransportKind::StreamableHttp,
        }
    }
}

/// The two transports, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpTransportKind {
    Stdio,
    StreamableHttp,
}

/// A command and its environment. The command runs inside the sandbox: paths are the
/// sandbox's (`/home/gem/...`), and programs those the sandbox's read-only system offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StdioTransport {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Variable name → value; secret values sealed for [`env_context`].
    #[serde(default)]
    pub env: BTreeMap<String, McpValue>,
    /// The working directory, a path in the sandbox; `None`: the conversation's workdir.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Whether the process may reach the network (off by default, like agents' shells).
    #[serde(default)]
    pub network: bool,
}

/// An HTTP endpoint and the headers sent with every request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HttpTransport {
    pub url: String,
    /// Lower-case header name → value; secret values sealed for [`header_context`].
    #[serde(default)]
    pub headers: BTreeMap<String, McpValue>,
}

/// An environment or header value: shown to whoever manages the server, or secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum McpValue {
    Plain(String),
    Secret(Sealed),
}

impl McpValue {
    pub fn is_secret(&self) -> bool {
        matches!(self, Self::Secret(_))
    }
}

/// What the value of environment variable `name` of server `id` is sealed for.
pub fn env_context(id: McpServerId, name: &str) -> String {
    format!("mcp_server/{id}/env/{name}")
}

/// What the value of header `name` (lower case) of server `id` is sealed for.
pub fn header_context(id: McpServerId, name: &str) -> String {
    format!("mcp_server/{id}/header/{name}")
}

/// A slug is 1-64 characters of `a-z`, `0-9` and `-`, starting and ending with a letter or
/// digit: tools are named `mcp__<slug>__<tool>`, so a slug never holds `_`.
pub fn validate_slug(slug: &str) -> Result<(), ValidationError> {
    let ok_chars = slug
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if slug.is_empty()
        || slug.len() > SLUG_MAX_CHARS
        || !ok_chars
        || !alnum(slug.chars().next())
        || !alnum(slug.chars().last())
    {
        return Err(ValidationError::invalid(
            "slug",
            format!(
                "must be 1-{SLUG_MAX_CHARS} characters of a-z, 0-9 and '-', starting and \
                 ending with a letter or digit"
            ),
        )
        .because(crate::Reason::new(crate::ErrorReason::BadSlug).with("max", SLUG_MAX_CHARS)));
    }
    Ok(())
}

/// A display name: 1-128 characters without control characters or bidirectional controls
/// ([`crate::text::forbidden_in_name`]); answered trimmed.
pub fn normalize_name(name: &str) -> Result<String, ValidationError> {
    // Measured as sent (what the OpenAPI `maxLength` states), then trimmed.
    let too_long = name.chars().count() > NAME_MAX_CHARS;
    let name = name.trim();
    if name.is_empty() || too_long || name.chars().any(crate::text::forbidden_in_name) {
        return Err(ValidationError::invalid(
            "name",
            format!(
                "must be 1-{NAME_MAX_CHARS} characters without control characters or \
                 bidirectional controls (such as U+202E)"
            ),
        ));
    }
    Ok(name.to_string())
}

/// A description: at most 4000 characters as sent; answered trimmed.
pub fn normalize_description(description: &str) -> Result<String, ValidationError> {
    if description.chars().count() > DESCRIPTION_MAX_CHARS {
        return Err(ValidationError::too_long(
            "description",
            DESCRIPTION_MAX_CHARS,
        ));
    }
    Ok(description.trim().to_string())
}

/// Text handed to a process or sent on the wire: at most 8192 characters, no NUL (which a
/// command line cannot carry) and, where `single_line`, no line breaks.
fn check_text(field: &str, text: &str, single_line: bool) -> Result<(), ValidationError> {
    if text.chars().count() > TEXT_MAX_CHARS {
        return Err(ValidationError::too_long(field, TEXT_MAX_CHARS));
    }
    if text.contains('\0') {
        return Err(ValidationError::invalid(field, "must not contain NUL")
            .because(crate::ErrorReason::BadCharacters));
    }
    if single_line && text.contains(['\r', '\n']) {
        return Err(ValidationError::invalid(field, "must be one line")
            .because(crate::ErrorReason::BadCharacters));
    }
    Ok(())
}

/// Checks a stdio server's command, arguments and working directory (not its environment,
/// whose values arrive separately): the command is not empty, the working directory, when
/// set, an absolute sandbox path without `..`.
pub fn validate_stdio(
    command: &str,
    args: &[String],
    cwd: Option<&str>,
) -> Result<(), ValidationError> {
    if command.trim().is_empty() {
        return Err(ValidationError::invalid(
            "transport.command",
            "must name a program, e.g. npx or /usr/bin/node",
        ));
    }
    check_text("transport.command", command, true)?;
    if args.len() > MAX_ARGS {
        return Err(ValidationError::invalid(
            "transport.args",
            format!("must hold at most {MAX_ARGS} arguments"),
        )
        .because(crate::Reason::new(crate::ErrorReason::TooMany).with("max", MAX_ARGS)));
    }
    for (i, arg) in args.iter().enumerate() {
        check_text(&format!("transport.args[{i}]"), arg, false)?;
    }
    if let Some(cwd) = cwd {
        check_text("transport.cwd", cwd, true)?;
        if !cwd.starts_with('/') || cwd.split('/').any(|part| part == "..") {
            return Err(ValidationError::invalid(
                "transport.cwd",
                "must be an absolute path in the sandbox without `..`, e.g. /home/gem/user-data",
            ));
        }
    }
    Ok(())
}

/// Checks an environment variable's name: a letter or `_`, then letters, digits and `_`.
pub fn validate_env_name(name: &str) -> Result<(), ValidationError> {
    let ok = name.len() <= VARIABLE_NAME_MAX_CHARS
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(ValidationError::invalid(
            format!("transport.env.{name}"),
            format!(
                "a variable name must be 1-{VARIABLE_NAME_MAX_CHARS} characters of letters, \
                 digits and '_', not starting with a digit"
            ),
        ));
    }
    Ok(())
}

/// Checks an environment value.
pub fn validate_env_value(name: &str, value: &str) -> Result<(), ValidationError> {
    check_text(&format!("transport.env.{name}"), value, false)
}

/// Checks a header name and answers it in lower case.
pub fn normalize_header_name(name: &str) -> Result<String, ValidationError> {
    let field = format!("transport.headers.{name}");
    if !is_header_token(name, VARIABLE_NAME_MAX_CHARS) {
        return Err(ValidationError::invalid(
            field,
            format!(
                "a header name must be 1-{VARIABLE_NAME_MAX_CHARS} characters of letters, \
                 digits and !#$%&'*+-.^_`|~"
            ),
        ));
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED_HEADERS.contains(&lower.as_str()) {
        return Err(ValidationError::invalid(
            field,
            format!("`{name}` is written by the MCP client itself"),
        ));
    }
    Ok(lower)
}

/// Whether header `name` (lower case) is always kept secret.
pub fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.contains(&name)
}

/// Checks a header value: 1-4096 visible ASCII characters, spaces and tabs, answered trimmed
/// (the rule of a model provider's header values).
pub fn normalize_header_value(name: &str, value: &str) -> Result<String, ValidationError> {
    validate_secret(&format!("transport.headers.{name}"), value, true)
}

/// Checks a Streamable HTTP endpoint: `http://` or `https://`, a host, an optional port, path
/// and query; no credentials (send them as a secret header), no fragment, ASCII only. Answered
/// trimmed, otherwise as given.
pub fn normalize_url(url: &str) -> Result<String, ValidationError> {
    let bad = |why: &str| {
        ValidationError::invalid("transport.url", why.to_string())
            .because(crate::ErrorReason::BadUrl)
    };
    let url = url.trim();
    if url.chars().count() > URL_MAX_CHARS {
        return Err(bad(&format!("must be at most {URL_MAX_CHARS} characters")));
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| {
            bad("must start with http:// or https://, e.g. http://127.0.0.1:3001/mcp")
        })?;
    if !url.chars().all(|c| c.is_ascii_graphic()) {
        return Err(bad(
            "must be ASCII without spaces (write an international host name in its xn-- form)",
        ));
    }
    if url.contains('#') {
        return Err(bad("must not have a fragment"));
    }
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad(
            "must not hold credentials: send them in a header (e.g. Authorization), which is kept secret",
        ));
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6
            .split_once(']')
            .map(|(address, _)| address)
            .unwrap_or_default(),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    if host.is_empty() {
        return Err(bad("must name a host, e.g. https://mcp.example.com/mcp"));
    }
    if let Some((_, port)) = authority.rsplit_once(':').filter(|(_, p)| !p.contains(']'))
        && !is_port(port)
    {
        return Err(bad("has an invalid port (1-65535)"));
    }
    Ok(url.to_string())
}

/// Checks an allow-list of tool names: at most 1000, each 1-128 characters of letters,
/// digits, `_`, `-`, `.` and `/`, none twice. Answered in the order given.
pub fn normalize_enabled_tools(tools: &[String]) -> Result<Vec<String>, ValidationError> {
    if tools.len() > MAX_ENABLED_TOOLS {
        return Err(ValidationError::invalid(
            "enabled_tools",
            format!("must list at most {MAX_ENABLED_TOOLS} tools"),
        )
        .because(crate::Reason::new(crate::ErrorReason::TooMany).with("max", MAX_ENABLED_TOOLS)));
    }
    let mut out: Vec<String> = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let tool = tool.trim();
        let ok = !tool.is_empty()
            && tool.len() <= TOOL_NAME_MAX_CHARS
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
        if !ok {
            return Err(ValidationError::invalid(
                format!("enabled_tools[{i}]"),
                format!(
                    "a tool name is 1-{TOOL_NAME_MAX_CHARS} characters of letters, digits, \
                     '_', '-', '.' and '/'"
                ),
            ));
        }
        if out.iter().any(|t| t == tool) {
            return Err(ValidationError::invalid(
                format!("enabled_tools[{i}]"),
                format!("`{tool}` is listed twice"),
            )
            .because(
                crate::Reason::new(crate::ErrorReason::Duplicate).with("name", tool.to_string()),
            ));
        }
        out.push(tool.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lower_case_letters_digits_and_inner_dashes() {
        for good in ["fs", "server-everything", "a1", "9"] {
            assert!(validate_slug(good).is_ok(), "{good}");
        }
        let long = "a".repeat(SLUG_MAX_CHARS + 1);
        for bad in [
            "",
            "-x",
            "x-",
            "Fs",
            "my_fs",
            "a b",
            "ä",
            "a__b",
            long.as_str(),
        ] {
            let err = validate_slug(bad).unwrap_err();
            assert_eq!(err.field(), "slug", "{bad}");
        }
    }

    #[test]
    fn names_and_descriptions_are_trimmed_and_bounded() {
        assert_eq!(normalize_name("  Files  ").unwrap(), "Files");
        assert!(normalize_name(" ").is_err());
        assert!(normalize_name("a\u{7}b").is_err());
        assert!(normalize_name("report\u{202E}fdp.exe").is_err());
        assert_eq!(normalize_description(" 读写文件 ").unwrap(), "读写文件");
        assert!(normalize_description(&"x".repeat(DESCRIPTION_MAX_CHARS + 1)).is_err());
        // Measured as sent, as the OpenAPI document's `maxLength` says: white space counts.
        let padded = format!(" {}", "x".repeat(DESCRIPTION_MAX_CHARS));
        assert!(normalize_description(&padded).is_err());
        let padded = format!("\u{85}{}", "n".repeat(NAME_MAX_CHARS));
        assert!(normalize_name(&padded).is_err());
    }

    #[test]
    fn a_stdio_command_is_not_empty_and_its_cwd_is_an_absolute_sandbox_path() {
        let args = vec![
            "-y".to_string(),
            "@modelcontextprotocol/server-everything".into(),
        ];
        assert!(validate_stdio("npx", &args, None).is_ok());
        assert!(validate_stdio("node", &[], Some("/home/gem/user-data")).is_ok());
        assert_eq!(
            validate_stdio("  ", &[], None).unwrap_err().field(),
            "transport.command"
        );
        assert_eq!(
            validate_stdio("a\nb", &[], None).unwrap_err().field(),
            "transport.command"
        );
        assert_eq!(
            validate_stdio("node", &["ok".into(), "a\0b".into()], None)
                .unwrap_err()
                .field(),
            "transport.args[1]"
        );
        for cwd in ["relative", "/home/gem/../etc"] {
            assert_eq!(
                validate_stdio("node", &[], Some(cwd)).unwrap_err().field(),
                "transport.cwd"
            );
        }
    }

    #[test]
    fn environment_names_follow_the_shell_rules() {
        assert!(validate_env_name("API_KEY").is_ok() && validate_env_name("_x1").is_ok());
        for bad in ["", "1A", "A-B", "A B", "Ä"] {
            assert!(validate_env_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn header_names_are_lower_cased_the_client_s_own_are_refused_and_credentials_are_secret() {
        assert_eq!(normalize_header_name("X-Org").unwrap(), "x-org");
        for reserved in ["Mcp-Session-Id", "content-type", "Host"] {
            let err = normalize_header_name(reserved).unwrap_err();
            assert!(err.to_string().contains("MCP client"), "{err}");
        }
        assert!(normalize_header_name("bad header").is_err());
        assert!(is_secret_header("authorization") && is_secret_header("x-api-key"));
        assert!(!is_secret_header("x-org"));
        assert_eq!(
            normalize_header_value("authorization", " Bearer abc ").unwrap(),
            "Bearer abc"
        );
        assert!(normalize_header_value("x", "").is_err());
        assert!(normalize_header_value("x", "a\nb").is_err());
    }

    #[test]
    fn urls_are_http_or_https_with_a_host_and_no_credentials() {
        for good in [
            "http://127.0.0.1:3001/mcp",
            "https://mcp.example.com/mcp?team=1",
            "http://[::1]:8080/mcp",
            "http://localhost",
        ] {
            assert_eq!(normalize_url(good).unwrap(), good);
        }
        for bad in [
            "ftp://x/mcp",
            "127.0.0.1:3001",
            "http://",
            "http://user:pw@host/mcp",
            "http://host:99999/mcp",
            "http://host:x/mcp",
            "http://host/mcp#frag",
            "http://hö.st/",
        ] {
            let err = normalize_url(bad).unwrap_err();
            assert_eq!(err.field(), "transport.url", "{bad}");
        }
    }

    #[test]
    fn enabled_tools_are_names_listed_once() {
        let list = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(
            normalize_enabled_tools(&list(&["echo", " add "])).unwrap(),
            list(&["echo", "add"])
        );
        assert_eq!(
            normalize_enabled_tools(&list(&["echo", "echo"]))
                .unwrap_err()
                .field(),
            "enabled_tools[1]"
        );
        assert!(normalize_enabled_tools(&list(&["has space"])).is_err());
    }

    #[test]
    fn a_transport_round_trips_through_its_stored_json_with_secrets_sealed() {
        let transport = McpTransport::StreamableHttp(HttpTransport {
            url: "http://127.0.0.1:3001/mcp".into(),
            headers: BTreeMap::from([
                (
                    "authorization".to_string(),
                    McpValue::Secret(Sealed::from_stored("v1.k.x".into())),
                ),
                ("x-org".to_string(), McpValue::Plain("acme".into())),
            ]),
        });
        let json = serde_json::to_value(&transport).unwrap();
        assert_eq!(json["type"], "streamable_http");
        assert_eq!(
            json["headers"]["x-org"],
            serde_json::json!({"kind": "plain", "value": "acme"})
        );
        assert_eq!(
            serde_json::from_value::<McpTransport>(json).unwrap(),
            transport
        );
        assert_eq!(transport.kind(), McpTransportKind::StreamableHttp);
    }
}
