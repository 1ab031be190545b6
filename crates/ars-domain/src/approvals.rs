//! `config_json.context.approvals`: what happens when the model calls a tool — run it
//! (`allow`), stop the run until a person decides (`ask`), or never offer it (`deny`).
//!
//! A rule's key is a tool name (`execute`) or a glob over names (`mcp__github__*`, `*`; `*`
//! stands for any run of characters, `?` for one). Layers merge key by key — the agent's own
//! rules over `[defaults.subagent]` (subagents) over `[defaults.base]` — and within the merged
//! rules the most specific match decides: an exact name first, then the glob with the most
//! literal characters (then the longer glob, then the first in order). A tool no rule matches
//! is allowed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::ValidationError;

/// What happens when the model calls a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// The call runs.
    Allow,
    /// The run waits for a person to approve, edit or reject the call.
    Ask,
    /// The tool is not offered to the model at all.
    Deny,
}

/// The most rules one context may hold.
pub const MAX_APPROVAL_RULES: usize = 256;
/// The longest rule key, in characters.
pub const MAX_APPROVAL_KEY_CHARS: usize = 128;

/// Rules keyed by tool name or glob.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ApprovalRules(pub BTreeMap<String, Approval>);

/// A rule's key as the schema states it (what [`ApprovalRules::validate`] checks).
const KEY_PATTERN: &str = "^[A-Za-z0-9_.*?-]+$";

/// A map whose keys are held to [`KEY_PATTERN`], so a client (and the fuzzer) know what
/// [`ApprovalRules::validate`] accepts.
impl PartialSchema for ApprovalRules {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "Tool name or glob (`execute`, `mcp__github__*`, `*`) → `allow`, `ask` or `deny`.",
            ))
            .property_names(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(MAX_APPROVAL_KEY_CHARS))
                    .pattern(Some(KEY_PATTERN)),
            ))
            .additional_properties(Some(Approval::schema()))
            .max_properties(Some(MAX_APPROVAL_RULES))
            .into()
    }
}

impl ToSchema for ApprovalRules {}

impl ApprovalRules {
    /// The decision for `tool`: the most specific matching rule's, or `allow`.
    pub fn decide(&self, tool: &str) -> Approval {
        if let Some(exact) = self.0.get(tool) {
            return *exact;
        }
        self.0
            .iter()
            .filter(|(key, _)| is_glob(key) && glob_matches(key, tool))
            .max_by_key(|(key, _)| (literal_chars(key), key.chars().count()))
            .map_or(Approval::Allow, |(_, approval)| *approval)
    }

    /// `self` over `under`, key by key.
    pub fn over(&self, under: &Self) -> Self {
        let mut merged = under.0.clone();
        merged.extend(self.0.iter().map(|(k, v)| (k.clone(), *v)));
        Self(merged)
    }

    /// Whether any tool needs a person's decision.
    pub fn asks(&self) -> bool {
        self.0.values().any(|a| *a == Approval::Ask)
    }

    pub fn validate(&self, field: &str) -> Result<(), ValidationError> {
        if self.0.len() > MAX_APPROVAL_RULES {
            return Err(ValidationError::invalid(
                field,
                format!("must have at most {MAX_APPROVAL_RULES} rules"),
            )
            .because(
                crate::Reason::new(crate::ErrorReason::TooMany).with("max", MAX_APPROVAL_RULES),
            ));
        }
        for key in self.0.keys() {
            let valid = !key.is_empty()
                && key.chars().count() <= MAX_APPROVAL_KEY_CHARS
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.*?".contains(c));
            if !valid {
                return Err(ValidationError::invalid(
                    format!("{field}.{key}"),
                    format!(
                        "a rule names a tool or a glob over tool names: 1-{MAX_APPROVAL_KEY_CHARS} \
                         of the letters, digits, `_`, `-`, `.`, `*` and `?`"
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn is_glob(key: &str) -> bool {
    key.contains(['*', '?'])
}

fn literal_chars(key: &str) -> usize {
    key.chars().filter(|c| !matches!(c, '*' | '?')).count()
}

/// `*` any run of characters, `?` exactly one; everything else literally. Iterative, with
/// one point of backtracking: linear in practice, `O(n·m)` at worst, no recursion.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, Approval)]) -> ApprovalRules {
        ApprovalRules(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
    }

    #[test]
    fn the_most_specific_rule_wins() {
        use Approval::*;
        let r = rules(&[
            ("*", Ask),
            ("mcp__github__*", Deny),
            ("mcp__github__get_*", Allow),
            ("execute", Allow),
        ]);
        assert_eq!(r.decide("execute"), Allow);
        assert_eq!(r.decide("write_file"), Ask);
        assert_eq!(r.decide("mcp__github__create_issue"), Deny);
        assert_eq!(r.decide("mcp__github__get_issue"), Allow);
        assert_eq!(rules(&[]).decide("execute"), Allow, "no rule: allowed");
    }

    #[test]
    fn layers_merge_key_by_key_and_the_upper_layer_wins_a_key() {
        use Approval::*;
        let base = rules(&[("*", Allow), ("execute", Ask)]);
        let own = rules(&[("execute", Allow), ("write_file", Deny)]);
        let merged = own.over(&base);
        assert_eq!(merged.decide("execute"), Allow);
        assert_eq!(merged.decide("write_file"), Deny);
        assert_eq!(merged.decide("ls"), Allow);
        assert!(!merged.asks());
        assert!(base.asks());
    }

    #[test]
    fn globs_match_runs_and_single_characters_without_recursion() {
        assert!(glob_matches("*", ""));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxbyy"));
        assert!(glob_matches("read_?ile", "read_file"));
        assert!(!glob_matches("read_?ile", "read_ile"));
        // Many stars over a long name that almost matches: still quick, never deep.
        let long = "a".repeat(10_000);
        assert!(!glob_matches(&"*a".repeat(60).replace("a*a", "a*b"), &long));
        assert!(glob_matches(&format!("{}*", "a".repeat(100)), &long));
    }

    #[test]
    fn rules_are_bounded_and_keys_are_names_or_globs() {
        assert!(
            rules(&[("mcp__x__*", Approval::Ask)])
                .validate("c.approvals")
                .is_ok()
        );
        let err = rules(&[("rm -rf", Approval::Ask)])
            .validate("c.approvals")
            .unwrap_err();
        assert_eq!(err.field(), "c.approvals.rm -rf");
        let many = ApprovalRules(
            (0..=MAX_APPROVAL_RULES)
                .map(|i| (format!("t{i}"), Approval::Ask))
                .collect(),
        );
        assert!(many.validate("c.approvals").is_err());
        let long = rules(&[(&"a".repeat(MAX_APPROVAL_KEY_CHARS + 1), Approval::Ask)]);
        assert!(long.validate("c.approvals").is_err());
    }
}
