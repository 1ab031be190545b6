//! `PATCH /api/agent/{id}`: a JSON merge patch (RFC 7396) over an agent's writable fields, as
//! typed structs. Every level refuses keys it does not have; `null` removes a member (back to
//! its default), nested objects merge member by member, arrays are replaced. The merged write
//! is then validated exactly like a `PUT`.

use std::collections::BTreeMap;

use serde::Deserialize;
use utoipa::ToSchema;

use ars_domain::{
    Agent, AgentConfig, AgentContext, AgentInput, Approval, ApprovalRules, Backend, Limits,
    ModelConfig, ShareConfig,
};

use crate::ApiError;
use crate::routes::patch::{self, MergeInto, Patch, PatchOver, merge_json, missing};
use crate::routes::sharing::ShareConfigPatch;

/// The body of `PATCH /api/agent/{id}`: a JSON merge patch (RFC 7396) over `AgentWrite`.
/// Any of its fields, and no others; `null` removes a field (back to its default), nested
/// objects merge key by key, arrays are replaced.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentPatch {
    /// Cannot be removed, only changed.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")]
    slug: Patch<String>,
    /// Cannot be removed, only changed: at most 200 characters, not blank.
    #[serde(default)]
    #[schema(
        value_type = String,
        max_length = 200,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    name: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 4000)]
    description: Patch<String>,
    // A string, not a `Backend`: validation, not deserialization, names an unknown one.
    #[serde(default)]
    #[schema(value_type = Option<Backend>)]
    backend_id: Patch<String>,
    /// Derived from `backend_id` (read-only, as in `AgentWrite`).
    #[serde(default)]
    #[schema(value_type = Option<bool>, read_only)]
    is_subagent: Patch<bool>,
    #[serde(default, deserialize_with = "patch::object")]
    #[schema(value_type = Option<AgentConfig>)]
    config_json: Patch<AgentConfigPatch>,
    #[serde(default, deserialize_with = "patch::object")]
    #[schema(value_type = Option<ShareConfig>)]
    share_config: Patch<ShareConfigPatch>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    is_default: Patch<bool>,
}

/// `config_json` in a merge patch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentConfigPatch {
    #[serde(default, deserialize_with = "patch::object")]
    context: Patch<ContextPatch>,
}

/// `config_json.context` in a merge patch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextPatch {
    #[serde(default, deserialize_with = "patch::object")]
    model: Patch<ModelPatch>,
    #[serde(default)]
    system_prompt: Patch<String>,
    #[serde(default)]
    tools: Patch<Vec<String>>,
    #[serde(default)]
    knowledge_bases: Patch<Vec<String>>,
    #[serde(default)]
    mcp_servers: Patch<Vec<String>>,
    #[serde(default)]
    skills: Patch<Vec<String>>,
    #[serde(default)]
    subagents: Patch<Vec<String>>,
    #[serde(default, deserialize_with = "patch::object")]
    limits: Patch<LimitsPatch>,
    #[serde(default)]
    network: Patch<bool>,
    #[serde(default)]
    subagent_results: Patch<ars_domain::SubagentResults>,
    /// Rule by rule: a value sets a rule, `null` removes it.
    #[serde(default, deserialize_with = "patch::object")]
    approvals: Patch<ApprovalsPatch>,
}

/// `config_json.context.approvals` in a merge patch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(transparent)]
struct ApprovalsPatch(BTreeMap<String, Option<Approval>>);

impl MergeInto<ApprovalRules> for ApprovalsPatch {
    fn merge_into(
        self,
        stored: Option<ApprovalRules>,
        at: &str,
    ) -> Result<ApprovalRules, ApiError> {
        // A patch names rules as a write does (at most so many, each a tool name or glob),
        // those it removes too: the schema states one rule for both.
        let named = ApprovalRules(
            self.0
                .keys()
                .map(|k| (k.clone(), Approval::Allow))
                .collect(),
        );
        named.validate(at)?;
        let mut rules = stored.unwrap_or_default();
        for (key, approval) in self.0 {
            match approval {
                Some(approval) => rules.0.insert(key, approval),
                None => rules.0.remove(&key),
            };
        }
        Ok(rules)
    }
}

/// `config_json.context.model` in a merge patch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelPatch {
    #[serde(default)]
    provider: Patch<String>,
    #[serde(default)]
    name: Patch<String>,
    #[serde(default)]
    temperature: Patch<f64>,
    #[serde(default)]
    max_tokens: Patch<u32>,
    #[serde(default)]
    top_p: Patch<f64>,
    /// Free JSON: merged by RFC 7396 as well.
    #[serde(default)]
    script: Patch<serde_json::Value>,
}

/// `config_json.context.limits` in a merge patch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsPatch {
    #[serde(default)]
    max_steps: Patch<u32>,
    #[serde(default)]
    timeout_s: Patch<u64>,
    #[serde(default)]
    max_tokens: Patch<u64>,
    #[serde(default)]
    approval_timeout_s: Patch<u64>,
    #[serde(default)]
    max_total_tokens: Patch<u64>,
}

impl AgentPatch {
    /// The patch over `base`. Members are merged in the order a `PUT` body is read (by key),
    /// and a slug or name the patch removed is missed last, as serde misses a field.
    pub(super) fn merged(self, base: AgentInput) -> Result<AgentInput, ApiError> {
        let config_json = self
            .config_json
            .merge_or_default(base.config_json, "config_json")?;
        let share_config = self
            .share_config
            .merge_or_default(base.share_config, "share_config")?;
        let slug = self
            .slug
            .optional(Some(base.slug))
            .ok_or_else(|| missing("", "slug"))?;
        let name = self
            .name
            .optional(Some(base.name))
            .ok_or_else(|| missing("", "name"))?;
        Ok(AgentInput {
            slug,
            name,
            description: self.description.or_default(base.description),
            backend_id: self.backend_id.optional(base.backend_id),
            is_subagent: self.is_subagent.optional(base.is_subagent),
            config_json,
            share_config,
            is_default: self.is_default.optional(base.is_default),
        })
    }
}

impl PatchOver<Agent> for AgentPatch {
    type Write = AgentInput;

    fn over(self, stored: &Agent) -> Result<AgentInput, ApiError> {
        self.merged(AgentInput::from_agent(stored))
    }
}

impl MergeInto<AgentConfig> for AgentConfigPatch {
    fn merge_into(self, stored: Option<AgentConfig>, at: &str) -> Result<AgentConfig, ApiError> {
        let stored = stored.unwrap_or_default();
        Ok(AgentConfig {
            context: self
                .context
                .merge_or_default(stored.context, &format!("{at}.context"))?,
        })
    }
}

impl MergeInto<AgentContext> for ContextPatch {
    fn merge_into(self, stored: Option<AgentContext>, at: &str) -> Result<AgentContext, ApiError> {
        let stored = stored.unwrap_or_default();
        Ok(AgentContext {
            limits: self.limits.merge(stored.limits, &format!("{at}.limits"))?,
            model: self.model.merge(stored.model, &format!("{at}.model"))?,
            system_prompt: self.system_prompt.optional(stored.system_prompt),
            tools: self.tools.optional(stored.tools),
            knowledge_bases: self.knowledge_bases.optional(stored.knowledge_bases),
            mcp_servers: self.mcp_servers.optional(stored.mcp_servers),
            skills: self.skills.optional(stored.skills),
            subagents: self.subagents.optional(stored.subagents),
            network: self.network.optional(stored.network),
            subagent_results: self.subagent_results.optional(stored.subagent_results),
            approvals: self
                .approvals
                .merge(stored.approvals, &format!("{at}.approvals"))?,
        })
    }
}

impl MergeInto<ModelConfig> for ModelPatch {
    fn merge_into(self, stored: Option<ModelConfig>, at: &str) -> Result<ModelConfig, ApiError> {
        let (provider, name, temperature, max_tokens, top_p, script) = match stored {
            Some(m) => (
                Some(m.provider),
                Some(m.name),
                m.temperature,
                m.max_tokens,
                m.top_p,
                m.script,
            ),
            None => (None, None, None, None, None, None),
        };
        let script = match self.script {
            Patch::Set(patch) => {
                let mut merged = script.unwrap_or(serde_json::Value::Null);
                merge_json(&mut merged, patch);
                Some(merged)
            }
            other => other.optional(script),
        };
        Ok(ModelConfig {
            provider: self
                .provider
                .optional(provider)
                .ok_or_else(|| missing(at, "provider"))?,
            name: self
                .name
                .optional(name)
                .ok_or_else(|| missing(at, "name"))?,
            temperature: self.temperature.optional(temperature),
            max_tokens: self.max_tokens.optional(max_tokens),
            top_p: self.top_p.optional(top_p),
            script,
        })
    }
}

impl MergeInto<Limits> for LimitsPatch {
    fn merge_into(self, stored: Option<Limits>, _at: &str) -> Result<Limits, ApiError> {
        let stored = stored.unwrap_or_default();
        Ok(Limits {
            max_steps: self.max_steps.optional(stored.max_steps),
            timeout_s: self.timeout_s.optional(stored.timeout_s),
            max_tokens: self.max_tokens.optional(stored.max_tokens),
            approval_timeout_s: self.approval_timeout_s.optional(stored.approval_timeout_s),
            max_total_tokens: self.max_total_tokens.optional(stored.max_total_tokens),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(body: serde_json::Value) -> AgentPatch {
        crate::extract::parse_json(&serde_json::to_vec(&body).unwrap()).unwrap()
    }

    fn base() -> AgentInput {
        AgentInput {
            slug: "a".into(),
            name: "A".into(),
            description: "first".into(),
            config_json: AgentConfig {
                context: AgentContext {
                    system_prompt: Some("Be brief.".into()),
                    model: Some(ModelConfig {
                        provider: "scripted".into(),
                        name: "m".into(),
                        temperature: Some(0.5),
                        max_tokens: None,
                        top_p: None,
                        script: Some(json!({"turns": [], "keep": 1})),
                    }),
                    ..AgentContext::default()
                },
            },
            ..AgentInput::default()
        }
    }

    #[test]
    fn members_merge_and_null_removes() {
        let merged = patch(json!({
            "description": null,
            "config_json": {"context": {"tools": ["ls"], "model": {"temperature": null,
                "script": {"keep": null, "added": true}}}},
        }))
        .merged(base())
        .unwrap();
        assert_eq!(merged.description, "");
        let context = merged.config_json.context;
        assert_eq!(context.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(context.tools, Some(vec!["ls".to_string()]));
        let model = context.model.unwrap();
        assert_eq!(
            (model.provider.as_str(), model.temperature),
            ("scripted", None)
        );
        assert_eq!(model.script, Some(json!({"turns": [], "added": true})));
    }

    #[test]
    fn a_member_a_merge_leaves_without_a_value_it_needs_is_missing() {
        let mut bare = base();
        bare.config_json.context.model = None;
        let error = patch(json!({"config_json": {"context": {"model": {"name": "m"}}}}))
            .merged(bare)
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            ApiError::unprocessable(
                "config_json.context.model.provider",
                "missing field `provider`"
            )
            .to_string()
        );
        let error = patch(json!({"slug": null})).merged(base()).unwrap_err();
        assert!(
            matches!(error.kind(), ApiError::Unprocessable { field: Some(f), .. } if f == "slug")
        );
    }

    #[test]
    fn unknown_keys_are_refused_at_every_level_even_with_null() {
        for body in [
            json!({"colour": null}),
            json!({"config_json": {"ctx": null}}),
            json!({"config_json": {"context": {"limits": {"bogus": null}}}}),
            json!({"share_config": {"extra": null}}),
        ] {
            let bytes = serde_json::to_vec(&body).unwrap();
            assert!(
                crate::extract::parse_json::<AgentPatch>(&bytes).is_err(),
                "{body}"
            );
        }
    }
}
