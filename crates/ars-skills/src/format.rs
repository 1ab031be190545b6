//! SKILL.md: YAML frontmatter between two `---` lines, then a Markdown body.
//!
//! [`parse_skill_md`] splits the file, reads the frontmatter as YAML and checks each field
//! against the Agent Skills rules, so every other part of ARS can trust a [`SkillManifest`].
//! Keys the spec does not define are kept in [`SkillManifest::extra`] and otherwise ignored, so
//! skills written for other runtimes still load.

use std::collections::BTreeMap;

use serde::Serialize;
use yaml_serde::Value;

use crate::error::SkillError;

/// The largest frontmatter accepted, in bytes. Real frontmatter is a few hundred bytes; the
/// limit keeps a hostile file from making the YAML parser do unbounded work.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// The longest skill name, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description, in characters (not bytes: a Chinese description counts each
/// character once).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility` note, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;
/// The longest YAML error message kept, in characters.
const MAX_YAML_ERROR_CHARS: usize = 300;
/// How deep the YAML parser reads (its own bound, which it does not let callers change).
const YAML_DEPTH: usize = 128;

/// A validated SKILL.md.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkillManifest {
    /// The skill's name: 1–64 of `[a-z0-9-]`, no leading, trailing or doubled `-`.
    pub name: String,
    /// What the skill does and when to use it, trimmed; this is what the model chooses by.
    pub description: String,
    /// The license of the skill's files, as written.
    pub license: Option<String>,
    /// Environment requirements (tools, network, …), trimmed; at most 500 characters.
    pub compatibility: Option<String>,
    /// Free-form string properties. Numbers and booleans are kept as their YAML text
    /// (`version: 1.0` becomes `"1.0"`); lists, mappings and nulls are refused.
    pub metadata: BTreeMap<String, String>,
    /// Tools the skill expects to use, from `allowed-tools` (a space-separated string, as
    /// the spec writes it, or a YAML list of strings).
    pub allowed_tools: Vec<String>,
    /// Every other frontmatter key, kept as JSON and otherwise ignored.
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The Markdown after the closing `---` line, with line endings normalised to `\n`.
    pub body: String,
}

/// Parses and validates a SKILL.md.
///
/// The text must start with a `---` line (after an optional UTF-8 BOM), then the YAML
/// frontmatter, then a closing `---` line, then the body. CRLF line endings are accepted.
pub fn parse_skill_md(text: &str) -> Result<SkillManifest, SkillError> {
    let (yaml, body) = split_frontmatter(text)?;
    let value: Value = yaml_serde::from_str(&yaml).map_err(|err| {
        let message = err.to_string();
        // The parser stops at 128 levels (so nothing recursive walks deeper); say so plainly.
        if message.starts_with("recursion limit exceeded") {
            return SkillError::FrontmatterSyntax(format!(
                "nested deeper than {YAML_DEPTH} levels"
            ));
        }
        SkillError::FrontmatterSyntax(shorten(&message))
    })?;
    let mapping = match value {
        Value::Mapping(mapping) => mapping,
        other => {
            return Err(SkillError::FrontmatterNotMapping {
                found: kind(&other),
            });
        }
    };

    let mut fields: BTreeMap<String, Value> = BTreeMap::new();
    for (key, value) in mapping {
        let Value::String(key) = key else {
            return Err(field_error(
                &scalar_text(&key).unwrap_or_else(|| "?".to_owned()),
                "must be a text key",
            ));
        };
        fields.insert(key, value);
    }

    let name = required_string(&mut fields, "name")?;
    validate_name(&name).map_err(|err| match err {
        SkillError::InvalidName { rule, .. } => field_error("name", rule),
        other => other,
    })?;

    let description = required_string(&mut fields, "description")?
        .trim()
        .to_owned();
    if description.is_empty() {
        return Err(field_error("description", "must not be empty"));
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(field_error(
            "description",
            &format!("must be at most {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }

    let license = optional_string(&mut fields, "license")?;
    let compatibility = optional_string(&mut fields, "compatibility")?
        .map(|text| text.trim().to_owned())
        .map(|text| {
            let chars = text.chars().count();
            if chars == 0 || chars > MAX_COMPATIBILITY_CHARS {
                Err(field_error(
                    "compatibility",
                    &format!("must be 1–{MAX_COMPATIBILITY_CHARS} characters when present"),
                ))
            } else {
                Ok(text)
            }
        })
        .transpose()?;
    let metadata = metadata(fields.remove("metadata"))?;
    let allowed_tools = allowed_tools(fields.remove("allowed-tools"))?;

    let mut extra = BTreeMap::new();
    for (key, value) in fields {
        let json = serde_json::to_value(&value).map_err(|_| {
            field_error(
                &key,
                "cannot be represented as JSON (use text keys and no tags)",
            )
        })?;
        extra.insert(key, json);
    }

    Ok(SkillManifest {
        name,
        description,
        license,
        compatibility,
        metadata,
        allowed_tools,
        extra,
        body,
    })
}

/// Checks a skill name, also used for the folder that holds a skill.
///
/// A name is 1–64 characters of lowercase ASCII letters, digits and `-`; it neither starts
/// nor ends with `-` and never has `--`.
pub fn validate_name(name: &str) -> Result<(), SkillError> {
    let refuse = |rule| {
        Err(SkillError::InvalidName {
            name: shorten(name),
            rule,
        })
    };
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return refuse("must be 1–64 characters of lowercase letters, digits and `-`");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return refuse(
            "must be 1–64 characters of lowercase letters, digits and `-` (no capitals, \
             spaces, underscores or other characters)",
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        return refuse("must not start or end with `-`");
    }
    if name.contains("--") {
        return refuse("must not contain `--`");
    }
    Ok(())
}

/// Splits a SKILL.md into its frontmatter YAML and its body, both with `\n` line endings.
fn split_frontmatter(text: &str) -> Result<(String, String), SkillError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let text = text.replace("\r\n", "\n");
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if is_fence(first) => {}
        _ => return Err(SkillError::MissingFrontmatter),
    }
    let yaml_start = text.find('\n').map_or(text.len(), |at| at + 1);
    let mut offset = yaml_start;
    for line in lines {
        if is_fence(line) {
            let yaml = &text[yaml_start..offset];
            if yaml.len() > MAX_FRONTMATTER_BYTES {
                return Err(SkillError::FrontmatterTooLarge {
                    limit: MAX_FRONTMATTER_BYTES,
                });
            }
            let body = &text[offset + line.len()..];
            return Ok((yaml.to_owned(), body.to_owned()));
        }
        offset += line.len();
    }
    Err(SkillError::UnterminatedFrontmatter)
}

/// Whether a line is a `---` fence (trailing spaces allowed).
fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Takes a required string field out of the frontmatter.
fn required_string(
    fields: &mut BTreeMap<String, Value>,
    field: &str,
) -> Result<String, SkillError> {
    optional_string(fields, field)?.ok_or_else(|| field_error(field, "is required"))
}

/// Takes an optional string field out of the frontmatter; `null` counts as absent.
fn optional_string(
    fields: &mut BTreeMap<String, Value>,
    field: &str,
) -> Result<Option<String>, SkillError> {
    match fields.remove(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(field_error(
            field,
            &format!("must be a string, not {}", kind(&other)),
        )),
    }
}

/// Reads `metadata`: a mapping of strings to strings, scalar values stringified.
fn metadata(value: Option<Value>) -> Result<BTreeMap<String, String>, SkillError> {
    let mapping = match value {
        None | Some(Value::Null) => return Ok(BTreeMap::new()),
        Some(Value::Mapping(mapping)) => mapping,
        Some(other) => {
            return Err(field_error(
                "metadata",
                &format!(
                    "must be a mapping of strings to strings, not {}",
                    kind(&other)
                ),
            ));
        }
    };
    let mut out = BTreeMap::new();
    for (key, value) in mapping {
        let key = scalar_text(&key)
            .filter(|_| !key.is_null())
            .ok_or_else(|| field_error("metadata", "must have text keys"))?;
        let text = match &value {
            Value::Null => None,
            other => scalar_text(other),
        }
        .ok_or_else(|| {
            field_error(
                &format!("metadata.{key}"),
                &format!(
                    "must be a string (numbers and booleans are accepted as text), not {}",
                    kind(&value)
                ),
            )
        })?;
        out.insert(key, text);
    }
    Ok(out)
}

/// Reads `allowed-tools`: a space-separated string or a list of strings.
fn allowed_tools(value: Option<Value>) -> Result<Vec<String>, SkillError> {
    let rule = "must be a space-separated string or a list of strings";
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(text.split_whitespace().map(str::to_owned).collect()),
        Some(Value::Sequence(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
                _ => Err(field_error("allowed-tools", rule)),
            })
            .collect(),
        Some(_) => Err(field_error("allowed-tools", rule)),
    }
}

/// The text of a scalar (`1.0`, `true`, `abc`); `None` for lists, mappings and tagged values.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null => Some("null".to_owned()),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => None,
    }
}

/// What kind of YAML value this is, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

fn field_error(field: &str, rule: &str) -> SkillError {
    SkillError::Field {
        field: field.to_owned(),
        rule: rule.to_owned(),
    }
}

/// Cuts text to a readable length on a character boundary, so errors never dump input.
pub(crate) fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_YAML_ERROR_CHARS {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_YAML_ERROR_CHARS).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests;
