//! An agent's runtime context (`config_json.context`) and how it is layered over the defaults.
//!
//! Resolution order for every field: the agent's own context → the backend defaults
//! (`SubAgentContext` for subagents) → `BaseContext` (server defaults). A field that is absent
//! (`None`) inherits; a field that is present, even as an empty list, is the agent's choice.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ApprovalRules, Backend, ValidationError};

/// Which chat model an agent talks to, and with what parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// A configured provider name, e.g. `openai` or `scripted`.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub provider: String,
    /// The model name as the provider knows it, e.g. `gpt-4o-mini`.
    #[schema(
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 2.0)]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub top_p: Option<f64>,
    /// Provider `scripted` only: the deterministic turns the test/demo model plays.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub script: Option<serde_json::Value>,
}

/// Per-run limits. Absent fields inherit from the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The most model steps one run may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000)]
    pub max_steps: Option<u32>,
    /// The wall-clock limit of one run, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 86400)]
    pub timeout_s: Option<u64>,
    /// The most tokens (prompt + completion) one run may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1_000_000_000_000i64)]
    pub max_tokens: Option<u64>,
    /// How long a run waits for a decision on a call or an answer to a question before the
    /// pending calls are rejected, in seconds; absent, it waits until someone decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 2592000)]
    pub approval_timeout_s: Option<u64>,
    /// The most tokens a run may spend together with every subagent run it starts (its
    /// rolled-up usage); past it the run stops (`budget_exceeded`) and its running subagents
    /// are cancelled. A subagent's own budget is the lower of this and what remains of its
    /// parent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1_000_000_000_000i64)]
    pub max_total_tokens: Option<u64>,
}

/// `config_json.context`: one form for every agent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentContext {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::object::optional_object"
    )]
    pub model: Option<ModelConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 100000)]
    pub system_prompt: Option<String>,
    /// Names of built-in tools the agent may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge_bases: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Normal agents only: the allow-list of subagent slugs. Missing or `[]` means every
    /// subagent visible to the user at run time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagents: Option<Vec<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::object::optional_object"
    )]
    pub limits: Option<Limits>,
    /// Whether the sandboxed shell may reach the network (default: no).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Tool name or glob (`execute`, `mcp__github__*`, `*`) → `allow`, `ask` or `deny`; merged
    /// key by key over the defaults, the most specific match decides, no match allows.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::object::optional_object"
    )]
    pub approvals: Option<ApprovalRules>,
    /// Normal agents: what a background subagent's result does once it ends — `wake` (default):
    /// the running parent reads it as a message, an idle parent thread gets a new run acting on
    /// it; `note`: a note on the parent thread, read by its next run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_results: Option<SubagentResults>,
}

/// What a background subagent's result does to its parent thread
/// (`config_json.context.subagent_results`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SubagentResults {
    /// The parent acts on it without being asked: its active run reads the completion notice
    /// before its next model call; an idle parent thread gets a new run whose input it is.
    #[default]
    Wake,
    /// A completion notice on the parent thread once the parent's run has ended, read by the
    /// thread's next run.
    Note,
}

/// The names of the built-in tools; the default `BaseContext` grants them all.
pub const BUILTIN_TOOLS: [&str; 7] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "execute",
];

/// The server's default contexts, from configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ContextDefaults {
    /// `BaseContext`: what every agent inherits.
    pub base: AgentContext,
    /// `SubAgentContext`: layered between a subagent's own context and `base`.
    pub subagent: AgentContext,
}

/// Hard ceilings that no configuration may exceed.
pub const MAX_STEPS_CEILING: u32 = 1_000;
pub const TIMEOUT_CEILING_S: u64 = 24 * 60 * 60;
pub const MAX_SYSTEM_PROMPT_CHARS: usize = 100_000;
pub const MAX_LIST_LEN: usize = 256;
/// The most completion tokens one model call may ask for.
pub const MODEL_MAX_TOKENS_CEILING: u32 = 1_000_000_000;
/// The most tokens one run may spend.
pub const RUN_MAX_TOKENS_CEILING: u64 = 1_000_000_000_000;
/// Longest entry of a name list, in characters.
pub const MAX_NAME_CHARS: usize = 128;
/// The context's name lists, as their JSON fields are called.
pub const NAME_LISTS: [&str; 5] = [
    "tools",
    "knowledge_bases",
    "mcp_servers",
    "skills",
    "subagents",
];

impl Default for ContextDefaults {
    fn default() -> Self {
        Self {
            base: AgentContext {
                model: None,
                system_prompt: Some("You are a helpful assistant.".into()),
                tools: Some(BUILTIN_TOOLS.iter().map(|t| t.to_string()).collect()),
                knowledge_bases: Some(Vec::new()),
                mcp_servers: Some(Vec::new()),
                // Every skill the user can see.
                skills: Some(vec!["*".into()]),
                subagents: None,
                limits: Some(Limits {
                    max_steps: Some(50),
                    timeout_s: Some(600),
                    max_tokens: None,
                    approval_timeout_s: None,
                    max_total_tokens: None,
                }),
                network: Some(false),
                // Everything allowed.
                approvals: None,
                subagent_results: Some(SubagentResults::Wake),
            },
            subagent: AgentContext {
                system_prompt: Some(
                    "You are a general-purpose subagent. Work on the task you are given, \
                     using your tools and the shared workdir, and finish with a concise, \
                     complete answer for the agent that delegated it."
                        .into(),
                ),
                limits: Some(Limits {
                    max_steps: Some(30),
                    timeout_s: Some(300),
                    max_tokens: None,
                    approval_timeout_s: None,
                    max_total_tokens: None,
                }),
                ..AgentContext::default()
            },
        }
    }
}

/// Where a resolved field's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The agent's own `config_json.context`.
    Agent,
    /// The `SubAgentContext` defaults.
    SubagentDefaults,
    /// The `BaseContext` defaults.
    Base,
    /// Nothing set it anywhere.
    Unset,
}

/// Effective limits after layering.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ResolvedLimits {
    pub max_steps: u32,
    pub timeout_s: u64,
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_timeout_s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_total_tokens: Option<u64>,
}

/// The context an agent actually runs with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResolvedContext {
    /// `None` when no layer names a model: such an agent cannot run until one is configured.
    pub model: Option<ModelConfig>,
    pub system_prompt: String,
    pub tools: Vec<String>,
    pub knowledge_bases: Vec<String>,
    pub mcp_servers: Vec<String>,
    pub skills: Vec<String>,
    /// The stored allow-list (normal agents only; always empty for subagents).
    pub subagents: Vec<String>,
    pub limits: ResolvedLimits,
    /// Whether the sandboxed shell may reach the network.
    pub network: bool,
    /// Every layer's approval rules merged, the agent's over the defaults'.
    pub approvals: ApprovalRules,
    /// What a background subagent's result does to the agent's thread.
    pub subagent_results: SubagentResults,
    /// For each field, the layer its value came from.
    pub sources: BTreeMap<String, Layer>,
}

impl ContextDefaults {
    /// Layers `own` over the defaults that apply to `backend`.
    pub fn resolve(&self, backend: Backend, own: &AgentContext) -> ResolvedContext {
        let middle = match backend {
            Backend::SubAgent => Some(&self.subagent),
            Backend::Default => None,
        };
        let layers: Vec<(Layer, &AgentContext)> = [
            Some((Layer::Agent, own)),
            middle.map(|m| (Layer::SubagentDefaults, m)),
            Some((Layer::Base, &self.base)),
        ]
        .into_iter()
        .flatten()
        .collect();

        let mut sources = BTreeMap::new();
        let mut pick = |name: &str, get: &dyn Fn(&AgentContext) -> bool| {
            let layer = layers
                .iter()
                .find(|(_, c)| get(c))
                .map_or(Layer::Unset, |(l, _)| *l);
            sources.insert(name.to_string(), layer);
            layer
        };
        let from = |layer: Layer| layers.iter().find(|(l, _)| *l == layer).map(|(_, c)| *c);

        let model = from(pick("model", &|c| c.model.is_some())).and_then(|c| c.model.clone());
        let system_prompt = from(pick("system_prompt", &|c| c.system_prompt.is_some()))
            .and_then(|c| c.system_prompt.clone())
            .unwrap_or_default();
        let mut list = |name: &str, get: fn(&AgentContext) -> &Option<Vec<String>>| {
            from(pick(name, &|c| get(c).is_some()))
                .and_then(|c| get(c).clone())
                .unwrap_or_default()
        };
        let tools = list("tools", |c| &c.tools);
        let knowledge_bases = list("knowledge_bases", |c| &c.knowledge_bases);
        let mcp_servers = list("mcp_servers", |c| &c.mcp_servers);
        let skills = list("skills", |c| &c.skills);

        let limit = |get: &dyn Fn(&Limits) -> Option<u64>| {
            layers
                .iter()
                .find_map(|(_, c)| c.limits.as_ref().and_then(get))
        };
        let limits = ResolvedLimits {
            max_steps: limit(&|l| l.max_steps.map(u64::from))
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or(50),
            timeout_s: limit(&|l| l.timeout_s).unwrap_or(600),
            max_tokens: limit(&|l| l.max_tokens),
            approval_timeout_s: limit(&|l| l.approval_timeout_s),
            max_total_tokens: limit(&|l| l.max_total_tokens),
        };
        let network = from(pick("network", &|c| c.network.is_some()))
            .and_then(|c| c.network)
            .unwrap_or(false);
        // Key by key: the lowest layer first, each higher one over it.
        pick("approvals", &|c| c.approvals.is_some());
        let approvals = layers
            .iter()
            .rev()
            .filter_map(|(_, c)| c.approvals.as_ref())
            .fold(ApprovalRules::default(), |under, rules| rules.over(&under));
        let subagent_results = from(pick("subagent_results", &|c| c.subagent_results.is_some()))
            .and_then(|c| c.subagent_results)
            .unwrap_or_default();
        let subagents = match backend {
            Backend::Default => own.subagents.clone().unwrap_or_default(),
            Backend::SubAgent => Vec::new(),
        };
        ResolvedContext {
            model,
            system_prompt,
            tools,
            knowledge_bases,
            mcp_servers,
            skills,
            subagents,
            limits,
            network,
            approvals,
            subagent_results,
            sources,
        }
    }
}

impl AgentContext {
    /// Checks the shape of every field; `prefix` is the path of this context in the payload.
    pub fn validate(&self, prefix: &str) -> Result<(), ValidationError> {
        let field = |name: &str| format!("{prefix}.{name}");
        if let Some(model) = &self.model {
            if model.provider.trim().is_empty() {
                return Err(
                    ValidationError::invalid(field("model.provider"), "must not be empty")
                        .because(crate::ErrorReason::Blank),
                );
            }
            if model.name.trim().is_empty() {
                return Err(
                    ValidationError::invalid(field("model.name"), "must not be empty")
                        .because(crate::ErrorReason::Blank),
                );
            }
            if let Some(t) = model.temperature
                && !(0.0..=2.0).contains(&t)
            {
                return Err(ValidationError::invalid(
                    field("model.temperature"),
                    "must be between 0 and 2",
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 0u64)
                        .with("max", 2u64),
                ));
            }
            if let Some(p) = model.top_p
                && !(0.0..=1.0).contains(&p)
            {
                return Err(ValidationError::invalid(
                    field("model.top_p"),
                    "must be between 0 and 1",
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 0u64)
                        .with("max", 1u64),
                ));
            }
            if let Some(tokens) = model.max_tokens
                && !(1..=MODEL_MAX_TOKENS_CEILING).contains(&tokens)
            {
                return Err(ValidationError::invalid(
                    field("model.max_tokens"),
                    format!("must be between 1 and {MODEL_MAX_TOKENS_CEILING}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", MODEL_MAX_TOKENS_CEILING),
                ));
            }
        }
        if let Some(prompt) = &self.system_prompt
            && prompt.chars().count() > MAX_SYSTEM_PROMPT_CHARS
        {
            return Err(ValidationError::too_long(
                field("system_prompt"),
                MAX_SYSTEM_PROMPT_CHARS,
            ));
        }
        for (name, list) in [
            ("tools", &self.tools),
            ("knowledge_bases", &self.knowledge_bases),
            ("mcp_servers", &self.mcp_servers),
            ("skills", &self.skills),
            ("subagents", &self.subagents),
        ] {
            validate_name_list(&field(name), list.as_deref().unwrap_or_default())?;
        }
        if let Some(approvals) = &self.approvals {
            approvals.validate(&field("approvals"))?;
        }
        if let Some(limits) = &self.limits {
            if let Some(steps) = limits.max_steps
                && !(1..=MAX_STEPS_CEILING).contains(&steps)
            {
                return Err(ValidationError::invalid(
                    field("limits.max_steps"),
                    format!("must be between 1 and {MAX_STEPS_CEILING}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", MAX_STEPS_CEILING),
                ));
            }
            if let Some(timeout) = limits.timeout_s
                && !(1..=TIMEOUT_CEILING_S).contains(&timeout)
            {
                return Err(ValidationError::invalid(
                    field("limits.timeout_s"),
                    format!("must be between 1 and {TIMEOUT_CEILING_S}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", TIMEOUT_CEILING_S),
                ));
            }
            if let Some(tokens) = limits.max_tokens
                && !(1..=RUN_MAX_TOKENS_CEILING).contains(&tokens)
            {
                return Err(ValidationError::invalid(
                    field("limits.max_tokens"),
                    format!("must be between 1 and {RUN_MAX_TOKENS_CEILING}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", RUN_MAX_TOKENS_CEILING),
                ));
            }
            if let Some(tokens) = limits.max_total_tokens
                && !(1..=RUN_MAX_TOKENS_CEILING).contains(&tokens)
            {
                return Err(ValidationError::invalid(
                    field("limits.max_total_tokens"),
                    format!("must be between 1 and {RUN_MAX_TOKENS_CEILING}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", RUN_MAX_TOKENS_CEILING),
                ));
            }
            use crate::waiting::APPROVAL_TIMEOUT_CEILING_S;
            if let Some(wait) = limits.approval_timeout_s
                && !(1..=APPROVAL_TIMEOUT_CEILING_S).contains(&wait)
            {
                return Err(ValidationError::invalid(
                    field("limits.approval_timeout_s"),
                    format!("must be between 1 and {APPROVAL_TIMEOUT_CEILING_S}"),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 1u64)
                        .with("max", APPROVAL_TIMEOUT_CEILING_S),
                ));
            }
        }
        Ok(())
    }
}

/// A list of names (tools, slugs, ids): bounded, no blanks, no duplicates.
fn validate_name_list(field: &str, names: &[String]) -> Result<(), ValidationError> {
    if names.len() > MAX_LIST_LEN {
        return Err(ValidationError::invalid(
            field,
            format!("must have at most {MAX_LIST_LEN} entries"),
        )
        .because(crate::Reason::new(crate::ErrorReason::TooMany).with("max", MAX_LIST_LEN)));
    }
    let mut seen = std::collections::HashSet::new();
    for name in names {
        if name.trim().is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(ValidationError::invalid(
                field,
                "entries must be 1-128 characters",
            ));
        }
        if !seen.insert(name) {
            return Err(
                ValidationError::invalid(field, format!("lists `{name}` twice")).because(
                    crate::Reason::new(crate::ErrorReason::Duplicate).with("name", name.as_str()),
                ),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_results_wake_the_parent_unless_the_agent_or_the_defaults_say_note() {
        let defaults = ContextDefaults::default();
        let resolved = defaults.resolve(Backend::Default, &AgentContext::default());
        assert_eq!(resolved.subagent_results, SubagentResults::Wake);
        assert_eq!(resolved.sources["subagent_results"], Layer::Base);
        let own = AgentContext {
            subagent_results: Some(SubagentResults::Note),
            ..AgentContext::default()
        };
        let resolved = defaults.resolve(Backend::Default, &own);
        assert_eq!(resolved.subagent_results, SubagentResults::Note);
        assert_eq!(resolved.sources["subagent_results"], Layer::Agent);
        let parsed: AgentContext =
            serde_json::from_value(serde_json::json!({"subagent_results": "note"})).unwrap();
        assert_eq!(parsed.subagent_results, Some(SubagentResults::Note));
        assert!(
            serde_json::from_value::<AgentContext>(serde_json::json!({"subagent_results": "x"}))
                .is_err()
        );
    }

    #[test]
    fn empty_subagent_context_resolves_from_subagent_defaults_then_base() {
        let mut defaults = ContextDefaults::default();
        defaults.base.model = Some(ModelConfig {
            provider: "openai".into(),
            name: "m".into(),
            temperature: None,
            max_tokens: None,
            top_p: None,
            script: None,
        });
        let resolved = defaults.resolve(Backend::SubAgent, &AgentContext::default());
        assert_eq!(resolved.model.as_ref().map(|m| m.name.as_str()), Some("m"));
        assert_eq!(resolved.sources["model"], Layer::Base);
        assert_eq!(resolved.sources["system_prompt"], Layer::SubagentDefaults);
        assert_eq!(resolved.limits.max_steps, 30);
        assert_eq!(resolved.limits.timeout_s, 300);
    }

    #[test]
    fn normal_agents_skip_the_subagent_layer_and_own_fields_win() {
        let defaults = ContextDefaults::default();
        let own = AgentContext {
            tools: Some(vec!["ls".into()]),
            limits: Some(Limits {
                max_steps: Some(7),
                ..Limits::default()
            }),
            ..AgentContext::default()
        };
        let resolved = defaults.resolve(Backend::Default, &own);
        assert_eq!(resolved.tools, vec!["ls".to_string()]);
        assert_eq!(resolved.sources["tools"], Layer::Agent);
        assert_eq!(resolved.sources["system_prompt"], Layer::Base);
        assert_eq!(resolved.limits.max_steps, 7);
        assert_eq!(resolved.limits.timeout_s, 600);
    }

    #[test]
    fn out_of_range_limits_are_rejected_with_their_field() {
        let ctx = AgentContext {
            limits: Some(Limits {
                max_steps: Some(0),
                ..Limits::default()
            }),
            ..AgentContext::default()
        };
        let err = ctx.validate("config_json.context").unwrap_err();
        assert_eq!(err.field(), "config_json.context.limits.max_steps");
    }
}
