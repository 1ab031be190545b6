//! An MCP server write, from either body shape to the fields the store keeps: every rule
//! checked, and the environment and header values merged over the stored ones, secret values
//! sealed with the server key.

use std::collections::BTreeMap;

use ars_domain::mcp_server::{
    self as rules, HttpTransport, MAX_VARIABLES, StdioTransport, env_context, header_context,
};
use ars_domain::{McpServer, McpServerFields, McpServerId, McpTransport, McpValue, SecretKey};

use super::{McpServerPatch, McpServerWrite, TransportWrite, ValueWrite};
use crate::ApiError;
use crate::routes::patch::PatchOver;

/// Everything a write asks for, before it is checked.
pub(crate) struct Changes {
    pub(crate) slug: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) transport: TransportWrite,
    pub(crate) enabled_tools: Option<Vec<String>>,
    pub(crate) share_config: ars_domain::ShareConfig,
}

impl Changes {
    pub(crate) fn from_write(write: McpServerWrite) -> Self {
        Self {
            slug: write.slug,
            name: write.name,
            description: write.description,
            transport: write.transport,
            enabled_tools: write.enabled_tools,
            share_config: write.share_config.unwrap_or_default(),
        }
    }

    /// Checks every rule and answers the fields to store for server `id`, merging values over
    /// `existing`'s when the transport keeps its type.
    pub(crate) fn checked(
        self,
        key: &SecretKey,
        id: McpServerId,
        existing: Option<&McpServer>,
    ) -> Result<McpServerFields, ApiError> {
        rules::validate_slug(&self.slug)?;
        if let Some(existing) = existing
            && existing.fields.slug != self.slug
        {
            // Well-formed, but not this server's: a conflict with what is stored.
            return Err(ApiError::Conflict {
                message: format!(
                    "the slug never changes (agents name the server by it): this one is `{}`",
                    existing.fields.slug
                ),
                field: Some("slug".into()),
            });
        }
        let name = rules::normalize_name(&self.name)?;
        let description = rules::normalize_description(&self.description)?;
        let enabled_tools = self
            .enabled_tools
            .as_deref()
            .map(rules::normalize_enabled_tools)
            .transpose()?;
        let stored = existing.map(|s| &s.fields.transport);
        let transport = match self.transport {
            TransportWrite::Stdio {
                command,
                args,
                env,
                cwd,
                network,
            } => {
                rules::validate_stdio(&command, &args, cwd.as_deref())?;
                let base = match stored {
                    Some(McpTransport::Stdio(old)) => old.env.clone(),
                    _ => BTreeMap::new(),
                };
                let env = merge(
                    base,
                    env.unwrap_or_default(),
                    |name| {
                        rules::validate_env_name(name)?;
                        Ok(name.to_string())
                    },
                    |name, value| {
                        rules::validate_env_value(name, value)?;
                        Ok(value.to_string())
                    },
                    |name, value| McpValue::Secret(key.seal(&env_context(id, name), value)),
                    |_| false,
                    "transport.env",
                )?;
                McpTransport::Stdio(StdioTransport {
                    command: command.trim().to_string(),
                    args,
                    env,
                    cwd,
                    network,
                })
            }
            TransportWrite::StreamableHttp { url, headers } => {
                let url = rules::normalize_url(&url)?;
                let base = match stored {
                    Some(McpTransport::StreamableHttp(old)) => old.headers.clone(),
                    _ => BTreeMap::new(),
                };
                let headers = merge(
                    base,
                    headers.unwrap_or_default(),
                    |name| Ok(rules::normalize_header_name(name)?),
                    |name, value| Ok(rules::normalize_header_value(name, value)?),
                    |name, value| McpValue::Secret(key.seal(&header_context(id, name), value)),
                    rules::is_secret_header,
                    "transport.headers",
                )?;
                McpTransport::StreamableHttp(HttpTransport { url, headers })
            }
        };
        Ok(McpServerFields {
            slug: self.slug,
            name,
            description,
            transport,
            enabled_tools,
            share_config: self.share_config.normalized(),
        })
    }
}

/// The patch over `stored`: absent fields keep their stored value, and so does `null` (but
/// for `enabled_tools`, where it means every tool); a transport sent merges its values over
/// the stored ones as a `PUT` does.
impl PatchOver<McpServer> for McpServerPatch {
    type Write = Changes;

    fn over(self, stored: &McpServer) -> Result<Changes, ApiError> {
        let stored = &stored.fields;
        Ok(Changes {
            slug: self.slug.or_keep(stored.slug.clone()),
            name: self.name.or_keep(stored.name.clone()),
            description: self.description.or_keep(stored.description.clone()),
            transport: self
                .transport
                .set()
                .unwrap_or_else(|| TransportWrite::keeping(&stored.transport)),
            enabled_tools: self.enabled_tools.optional(stored.enabled_tools.clone()),
            share_config: self.share_config.or_keep(stored.share_config.clone()),
        })
    }
}

/// `changes` over `base`: a name with a value sets it (secret when asked, or when
/// `always_secret` says so), `null` removes it, names not mentioned keep theirs. Names are
/// normalised by `name_rule` (two that normalise alike are refused), values by `value_rule`;
/// `seal` makes the stored secret of a (normalised) name and value.
fn merge(
    mut base: BTreeMap<String, McpValue>,
    changes: BTreeMap<String, Option<serde_json::Value>>,
    name_rule: impl Fn(&str) -> Result<String, ApiError>,
    value_rule: impl Fn(&str, &str) -> Result<String, ApiError>,
    seal: impl Fn(&str, &str) -> McpValue,
    always_secret: impl Fn(&str) -> bool,
    field: &str,
) -> Result<BTreeMap<String, McpValue>, ApiError> {
    let mut seen: Vec<String> = Vec::with_capacity(changes.len());
    for (name, change) in changes {
        let normal = name_rule(&name)?;
        if seen.contains(&normal) {
            return Err(ApiError::unprocessable(
                format!("{field}.{name}"),
                "named twice (header names ignore case)",
            ));
        }
        seen.push(normal.clone());
        match change {
            None => {
                base.remove(&normal);
            }
            Some(write) => {
                let (value, secret) = match value_write(&format!("{field}.{name}"), write)? {
                    ValueWrite::Plain(value) => (value, false),
                    ValueWrite::Secret(secret) => (secret, true),
                };
                let value = value_rule(&name, &value)?;
                let stored = if secret || always_secret(&normal) {
                    seal(&normal, &value)
                } else {
                    McpValue::Plain(value)
                };
                base.insert(normal, stored);
            }
        }
    }
    if base.len() > MAX_VARIABLES {
        return Err(ApiError::unprocessable(
            field,
            format!("at most {MAX_VARIABLES} entries"),
        ));
    }
    Ok(base)
}

/// A value as a write sends it: a string, or `{"secret": "<value>"}`.
fn value_write(field: &str, value: serde_json::Value) -> Result<ValueWrite, ApiError> {
    use serde_json::Value;
    let shape = || {
        ApiError::unprocessable(
            field,
            r#"must be a string, {"secret": "<value>"} for a secret, or null to remove it"#,
        )
    };
    match value {
        Value::String(text) => Ok(ValueWrite::Plain(text)),
        Value::Object(map) => match (map.len(), map.get("secret")) {
            (1, Some(Value::String(secret))) => Ok(ValueWrite::Secret(secret.clone())),
            _ => Err(shape()),
        },
        _ => Err(shape()),
    }
}
