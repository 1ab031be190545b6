//! A tool's arguments checked against the input schema its server declared, before the call,
//! so the model reads what is wrong in words it can act on.
//!
//! The schema comes from the server, which any user may add: [`ArgsSchema::new`] first
//! writes it out with every `$ref` followed, within bounds and without recursion
//! ([`expand`]), and refuses a schema that cannot be checked safely — references that loop
//! or point outside it, a schema too deep or too big — when the tool list is read, so such a
//! tool is never offered (the caller says why). What is compiled then has no references
//! left: the validator cannot loop, and its size and depth are bounded. A schema that passes
//! those bounds but does not compile (an unknown `$schema`, a bad pattern) checks nothing —
//! the server still validates what it gets — and is logged.

mod expand;

use serde_json::Value;

pub use expand::{Limits, SchemaRefused};

/// Errors listed in one message at most.
const MAX_ERRORS: usize = 5;

/// A compiled input schema.
pub struct ArgsSchema {
    validator: Option<jsonschema::Validator>,
}

impl std::fmt::Debug for ArgsSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgsSchema")
            .field("checks", &self.validator.is_some())
            .finish()
    }
}

impl ArgsSchema {
    /// Compiles `schema` for tool `tool` of `server`, or says why it cannot be checked
    /// safely.
    pub fn new(server: &str, tool: &str, schema: &Value) -> Result<Self, SchemaRefused> {
        Self::with_limits(server, tool, schema, Limits::default())
    }

    /// [`ArgsSchema::new`] within other bounds.
    pub fn with_limits(
        server: &str,
        tool: &str,
        schema: &Value,
        limits: Limits,
    ) -> Result<Self, SchemaRefused> {
        let expanded = expand::expand(schema, limits)?;
        if expanded.cut {
            tracing::debug!(
                server,
                tool,
                "an MCP tool's input schema is recursive; values nested deeper than its first levels are left to the server to check"
            );
        }
        match jsonschema::validator_for(&expanded.schema) {
            Ok(validator) => Ok(Self {
                validator: Some(validator),
            }),
            Err(error) => {
                tracing::warn!(server, tool, %error, "an MCP tool's input schema does not compile; its arguments are not checked before calls");
                Ok(Self { validator: None })
            }
        }
    }

    /// Whether arguments are checked at all (the schema compiled).
    pub fn checks(&self) -> bool {
        self.validator.is_some()
    }

    /// `Ok` when `args` fits, else what does not, path by path.
    pub fn check(&self, args: &Value) -> Result<(), String> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        let errors: Vec<String> = validator
            .iter_errors(args)
            .take(MAX_ERRORS + 1)
            .map(|error| {
                let path = error.instance_path.to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!("{path}: {error}")
                }
            })
            .collect();
        if errors.is_empty() {
            return Ok(());
        }
        let more = if errors.len() > MAX_ERRORS {
            "; …"
        } else {
            ""
        };
        Err(format!(
            "{}{more}",
            errors[..errors.len().min(MAX_ERRORS)].join("; ")
        ))
    }
}

#[cfg(test)]
mod tests;
