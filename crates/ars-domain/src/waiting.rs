//! A run that waits for people: the calls of one turn that need a decision (a tool whose
//! approval rule is `ask`) and the questions the model asked (`ask_user`), and the decisions
//! that resume it.
//!
//! A turn whose calls include any of them stops before any of its calls runs; the run is
//! `waiting`, holding no lease and no task, with its [`Waiting`] stored beside it. One set of
//! [`DecisionInput`]s decides every item at once ([`resolve`]), and the run resumes on whichever
//! instance received it: each call gets its [`Resolution`].

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::{RunId, ThreadId, ValidationError};

/// The longest answer, or reason for a refusal, in characters.
pub const MAX_DECISION_TEXT_CHARS: usize = 100_000;
/// The longest question `ask_user` may ask, in characters.
pub const MAX_QUESTION_CHARS: usize = 4_000;
/// The most options a question may offer, and the longest one in characters.
pub const MAX_QUESTION_OPTIONS: usize = 20;
pub const MAX_OPTION_CHARS: usize = 500;
/// The longest `approval_timeout_s`: 30 days.
pub const APPROVAL_TIMEOUT_CEILING_S: u64 = 30 * 24 * 3600;

/// What a pending item asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PendingRequest {
    /// A tool call to approve, edit or reject. `arguments` are the model's (a JSON object, or
    /// the text it sent when that is not one).
    Approval { tool: String, arguments: Value },
    /// A question to answer, with the options the model offered (possibly none: any answer).
    Question {
        question: String,
        #[serde(default)]
        options: Vec<String>,
    },
}

/// One call a waiting run needs a decision on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PendingItem {
    /// The model's tool-call id: what a decision names.
    pub call_id: String,
    #[serde(flatten)]
    pub request: PendingRequest,
    /// The waiting run, and its thread (a subagent's child thread for a child run).
    pub run_id: RunId,
    pub thread_id: ThreadId,
    /// The agent whose run waits.
    pub agent_slug: String,
}

/// What a waiting run keeps beside it until it is decided.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Waiting {
    /// Every item of the turn that needs a decision, in call order.
    pub items: Vec<PendingItem>,
    /// The input schema of each approval's tool, by call id, to check edited arguments.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemas: BTreeMap<String, Value>,
    /// When the items are rejected for want of a decision (Unix ms), if the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<i64>,
    /// The `approval_timeout_s` that set `until_ms`, for the words of that rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

/// A decision on an approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionKind {
    /// Run the call as the model sent it.
    Approve,
    /// Do not run it; `message` says why, and the model reads it.
    Reject,
    /// Run it with `arguments` instead (checked against the tool's schema).
    Edit,
}

/// One decision as a client sends it: `decision` (and for `edit` the `arguments`, for `reject`
/// an optional `message`) for an approval, `answer` for a question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionInput {
    #[schema(min_length = 1, max_length = 256)]
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionKind>,
    /// For `edit`: the arguments to run the call with (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// For `reject`: why, for the model to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 100000)]
    pub message: Option<String>,
    /// For a question: the answer, which becomes the tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 100000)]
    pub answer: Option<String>,
}

/// How one pending call is settled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolution {
    /// Run it as sent.
    Approve,
    /// Run it with these arguments.
    Edit { arguments: Value },
    /// Do not run it; the model is told it was refused, and why when a reason was given.
    Reject { message: Option<String> },
    /// The answer to a question: the tool's result.
    Answer { answer: String },
    /// Nobody decided within the agent's `approval_timeout_s`: not run.
    TimedOut { after_s: u64 },
}

impl Resolution {
    /// What the model reads as the result of a call that did not run, if it did not.
    pub fn refusal(&self, tool: &str) -> Option<String> {
        match self {
            Self::Reject { message: Some(why) } => Some(format!(
                "The user refused this call of `{tool}`; it did not run. Their reason: {why}"
            )),
            Self::Reject { message: None } => Some(format!(
                "The user refused this call of `{tool}`; it did not run. Do not repeat it \
                 unchanged; ask the user or take another way."
            )),
            Self::TimedOut { after_s } => Some(format!(
                "Nobody decided on this call of `{tool}` within {after_s} s, so it did not run."
            )),
            Self::Approve | Self::Edit { .. } | Self::Answer { .. } => None,
        }
    }
}

/// Every item of `waiting` settled by `decisions`, by call id; the decisions must name each
/// pending call exactly once, and each as its kind needs. Field paths in the errors are
/// `decisions[i].<field>`. Edited arguments are checked here to be an object; against the
/// tool's schema by the runtime, which can compile it.
pub fn resolve(
    items: &[PendingItem],
    decisions: &[DecisionInput],
) -> Result<HashMap<String, Resolution>, ValidationError> {
    let by_id: HashMap<&str, &PendingItem> =
        items.iter().map(|i| (i.call_id.as_str(), i)).collect();
    let mut seen = HashSet::new();
    let mut out = HashMap::with_capacity(decisions.len());
    for (i, d) in decisions.iter().enumerate() {
        let field = |name: &str| format!("decisions[{i}].{name}");
        let Some(item) = by_id.get(d.call_id.as_str()) else {
            return Err(ValidationError::invalid(
                field("call_id"),
                format!(
                    "`{}` is not a call this run waits on; it waits on {}",
                    d.call_id,
                    call_list(items)
                ),
            ));
        };
        if !seen.insert(d.call_id.as_str()) {
            return Err(ValidationError::invalid(
                field("call_id"),
                format!("`{}` is decided twice", d.call_id),
            ));
        }
        for (name, text) in [("message", &d.message), ("answer", &d.answer)] {
            if text
                .as_ref()
                .is_some_and(|t| t.chars().count() > MAX_DECISION_TEXT_CHARS)
            {
                return Err(ValidationError::too_long(
                    field(name),
                    MAX_DECISION_TEXT_CHARS,
                ));
            }
        }
        let resolution = match &item.request {
            // Options are suggestions: any answer is accepted, as a person may say "neither".
            PendingRequest::Question { .. } => {
                if d.decision.is_some() || d.arguments.is_some() || d.message.is_some() {
                    return Err(ValidationError::invalid(
                        field("answer"),
                        "this is a question: send only an `answer`",
                    ));
                }
                let Some(answer) = d.answer.clone() else {
                    return Err(ValidationError::invalid(
                        field("answer"),
                        "this is a question: send an `answer`",
                    ));
                };
                if answer.trim().is_empty() {
                    return Err(ValidationError::invalid(
                        field("answer"),
                        "the answer must not be blank",
                    ));
                }
                Resolution::Answer { answer }
            }
            PendingRequest::Approval { .. } => {
                if d.answer.is_some() {
                    return Err(ValidationError::invalid(
                        field("answer"),
                        "this is a tool call: send a `decision` (approve, reject or edit), not \
                         an answer",
                    ));
                }
                match d.decision {
                    None => {
                        return Err(ValidationError::invalid(
                            field("decision"),
                            "send `approve`, `reject` or `edit`",
                        ));
                    }
                    Some(DecisionKind::Approve) | Some(DecisionKind::Reject)
                        if d.arguments.is_some() =>
                    {
                        return Err(ValidationError::invalid(
                            field("arguments"),
                            "arguments go with `edit` only",
                        ));
                    }
                    Some(DecisionKind::Approve) if d.message.is_some() => {
                        return Err(ValidationError::invalid(
                            field("message"),
                            "a message goes with `reject` only",
                        ));
                    }
                    Some(DecisionKind::Approve) => Resolution::Approve,
                    Some(DecisionKind::Reject) => Resolution::Reject {
                        message: d.message.clone().filter(|m| !m.trim().is_empty()),
                    },
                    Some(DecisionKind::Edit) => match &d.arguments {
                        Some(arguments @ Value::Object(_)) if d.message.is_none() => {
                            Resolution::Edit {
                                arguments: arguments.clone(),
                            }
                        }
                        Some(Value::Object(_)) => {
                            return Err(ValidationError::invalid(
                                field("message"),
                                "a message goes with `reject` only",
                            ));
                        }
                        Some(_) => {
                            return Err(ValidationError::invalid(
                                field("arguments"),
                                "must be a JSON object",
                            ));
                        }
                        None => {
                            return Err(ValidationError::invalid(
                                field("arguments"),
                                "`edit` needs the new arguments",
                            ));
                        }
                    },
                }
            }
        };
        out.insert(d.call_id.clone(), resolution);
    }
    let missing: Vec<&str> = items
        .iter()
        .map(|i| i.call_id.as_str())
        .filter(|id| !seen.contains(id))
        .collect();
    if !missing.is_empty() {
        return Err(ValidationError::invalid(
            "decisions",
            format!(
                "decide every pending call at once; missing: {}",
                missing
                    .iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(out)
}

fn call_list(items: &[PendingItem]) -> String {
    items
        .iter()
        .map(|i| format!("`{}`", i.call_id))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The arguments of `ask_user`: a question, and optionally the answers to choose from.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub question: String,
    #[serde(default)]
    pub options: Vec<String>,
}

impl Question {
    /// Reads `ask_user`'s arguments, or says in words what is wrong with them.
    pub fn parse(arguments: &Value) -> Result<Self, String> {
        let question: Self = serde_json::from_value(arguments.clone()).map_err(|e| {
            format!("ask_user takes {{\"question\": text, \"options\"?: [text]}}: {e}")
        })?;
        if question.question.trim().is_empty() {
            return Err("the question must not be blank".into());
        }
        if question.question.chars().count() > MAX_QUESTION_CHARS {
            return Err(format!(
                "the question must be at most {MAX_QUESTION_CHARS} characters"
            ));
        }
        if question.options.len() > MAX_QUESTION_OPTIONS {
            return Err(format!("at most {MAX_QUESTION_OPTIONS} options"));
        }
        if question
            .options
            .iter()
            .any(|o| o.trim().is_empty() || o.chars().count() > MAX_OPTION_CHARS)
        {
            return Err(format!("options must be 1-{MAX_OPTION_CHARS} characters"));
        }
        Ok(question)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(call_id: &str, request: PendingRequest) -> PendingItem {
        PendingItem {
            call_id: call_id.into(),
            request,
            run_id: RunId::new(),
            thread_id: ThreadId::new(),
            agent_slug: "a".into(),
        }
    }

    fn approval(call_id: &str) -> PendingItem {
        item(
            call_id,
            PendingRequest::Approval {
                tool: "execute".into(),
                arguments: json!({"command": "ls"}),
            },
        )
    }

    fn question(call_id: &str) -> PendingItem {
        item(
            call_id,
            PendingRequest::Question {
                question: "which?".into(),
                options: vec!["a".into(), "b".into()],
            },
        )
    }

    fn decision(value: Value) -> DecisionInput {
        serde_json::from_value(value).expect("a decision")
    }

    fn field_of(e: ValidationError) -> String {
        match e {
            ValidationError::Invalid(f) => f.field,
            other => panic!("not a 422: {other}"),
        }
    }

    #[test]
    fn a_pending_item_has_the_named_wire_shape() {
        let run_id = RunId::new();
        let thread_id = ThreadId::new();
        let item = PendingItem {
            run_id,
            thread_id: thread_id.clone(),
            ..approval("c1")
        };
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            json!({"call_id": "c1", "kind": "approval", "tool": "execute",
                   "arguments": {"command": "ls"}, "run_id": run_id.to_string(),
                   "thread_id": thread_id.to_string(), "agent_slug": "a"})
        );
        let q = serde_json::to_value(question("c2")).unwrap();
        assert_eq!(q["kind"], "question");
        assert_eq!(q["options"], json!(["a", "b"]));
    }

    #[test]
    fn every_pending_call_is_decided_at_once_each_as_its_kind_needs() {
        let items = [
            approval("c1"),
            approval("c2"),
            approval("c3"),
            question("q"),
        ];
        let resolved = resolve(
            &items,
            &[
                decision(json!({"call_id": "c1", "decision": "approve"})),
                decision(json!({"call_id": "c2", "decision": "reject", "message": "no"})),
                decision(
                    json!({"call_id": "c3", "decision": "edit", "arguments": {"command": "pwd"}}),
                ),
                decision(json!({"call_id": "q", "answer": "b"})),
            ],
        )
        .unwrap();
        assert_eq!(resolved["c1"], Resolution::Approve);
        assert_eq!(
            resolved["c2"],
            Resolution::Reject {
                message: Some("no".into())
            }
        );
        assert_eq!(
            resolved["c3"],
            Resolution::Edit {
                arguments: json!({"command": "pwd"})
            }
        );
        assert_eq!(resolved["q"], Resolution::Answer { answer: "b".into() });
    }

    #[test]
    fn a_partial_unknown_twice_decided_or_ill_fitting_set_is_refused_naming_the_decision() {
        let items = [approval("c1"), approval("c2"), question("q")];
        let ok_rest = || {
            vec![
                decision(json!({"call_id": "c2", "decision": "approve"})),
                decision(json!({"call_id": "q", "answer": "a"})),
            ]
        };
        let with = |first: Value| {
            let mut all = vec![decision(first)];
            all.extend(ok_rest());
            resolve(&items, &all).map(|_| ()).map_err(field_of)
        };
        // Partial.
        assert_eq!(
            resolve(&items, &ok_rest()).map(|_| ()).map_err(field_of),
            Err("decisions".into())
        );
        // Unknown and twice.
        assert_eq!(
            with(json!({"call_id": "zz", "decision": "approve"})),
            Err("decisions[0].call_id".into())
        );
        // The second decision of `c2` is the one refused.
        assert_eq!(
            with(json!({"call_id": "c2", "decision": "approve"})),
            Err("decisions[1].call_id".into())
        );
        // Each kind as it needs.
        assert_eq!(
            with(json!({"call_id": "c1"})),
            Err("decisions[0].decision".into())
        );
        assert_eq!(
            with(json!({"call_id": "c1", "decision": "edit"})),
            Err("decisions[0].arguments".into())
        );
        assert_eq!(
            with(json!({"call_id": "c1", "decision": "edit", "arguments": [1]})),
            Err("decisions[0].arguments".into())
        );
        assert_eq!(
            with(json!({"call_id": "c1", "decision": "approve", "arguments": {}})),
            Err("decisions[0].arguments".into())
        );
        assert_eq!(
            with(json!({"call_id": "c1", "answer": "yes"})),
            Err("decisions[0].answer".into())
        );
        let mut all = vec![
            decision(json!({"call_id": "c1", "decision": "approve"})),
            decision(json!({"call_id": "c2", "decision": "approve"})),
            decision(json!({"call_id": "q", "decision": "approve"})),
        ];
        assert_eq!(
            resolve(&items, &all).map(|_| ()).map_err(field_of),
            Err("decisions[2].answer".into())
        );
        all[2] = decision(json!({"call_id": "q", "answer": "  "}));
        assert_eq!(
            resolve(&items, &all).map(|_| ()).map_err(field_of),
            Err("decisions[2].answer".into())
        );
        all[2] =
            decision(json!({"call_id": "q", "answer": "x".repeat(MAX_DECISION_TEXT_CHARS + 1)}));
        assert_eq!(
            resolve(&items, &all).map(|_| ()).map_err(field_of),
            Err("decisions[2].answer".into())
        );
    }

    #[test]
    fn a_refused_call_tells_the_model_it_did_not_run_and_why() {
        let with_reason = Resolution::Reject {
            message: Some("too risky".into()),
        };
        let text = with_reason.refusal("execute").unwrap();
        assert!(
            text.contains("did not run") && text.contains("too risky"),
            "{text}"
        );
        assert!(
            Resolution::TimedOut { after_s: 60 }
                .refusal("execute")
                .unwrap()
                .contains("60 s")
        );
        assert_eq!(Resolution::Approve.refusal("execute"), None);
    }

    #[test]
    fn a_question_is_checked_in_words() {
        assert!(Question::parse(&json!({"question": "which?", "options": ["a"]})).is_ok());
        for bad in [
            json!({}),
            json!({"question": " "}),
            json!({"question": "q", "options": [""]}),
            json!({"question": "q", "extra": 1}),
            json!({"question": "x".repeat(MAX_QUESTION_CHARS + 1)}),
        ] {
            assert!(Question::parse(&bad).is_err(), "{bad}");
        }
    }
}
