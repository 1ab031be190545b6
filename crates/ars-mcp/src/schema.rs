//! A tool's arguments checked against the input schema its server declared, before the call,
//! so the model reads what is wrong in words it can act on.
//!
//! The schema comes from the server: it is compiled without any way to fetch other schemas
//! (no files, no network), so a `$ref` out of it is refused rather than followed. A schema
//! that does not compile checks nothing (the server still validates what it gets) and is
//! logged.

use serde_json::Value;

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
    /// Compiles `schema` for tool `tool` of `server`.
    pub fn new(server: &str, tool: &str, schema: &Value) -> Self {
        match jsonschema::validator_for(schema) {
            Ok(validator) => Self {
                validator: Some(validator),
            },
            Err(error) => {
                tracing::warn!(server, tool, %error, "an MCP tool's input schema does not compile; its arguments are not checked before calls");
                Self { validator: None }
            }
        }
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_checked_against_the_declared_schema() {
        let schema = ArgsSchema::new(
            "s",
            "echo",
            &json!({"type": "object", "properties": {"message": {"type": "string"}},
                    "required": ["message"]}),
        );
        assert!(schema.check(&json!({"message": "hi"})).is_ok());
        let missing = schema.check(&json!({})).unwrap_err();
        assert!(missing.contains("message"), "{missing}");
        let wrong = schema.check(&json!({"message": 3})).unwrap_err();
        assert!(wrong.starts_with("/message: "), "{wrong}");
    }

    #[test]
    fn a_schema_that_reaches_outside_checks_nothing_and_reads_nothing() {
        let schema = ArgsSchema::new("s", "t", &json!({"$ref": "file:///etc/passwd"}));
        assert!(schema.check(&json!({"anything": true})).is_ok());
    }
}
