//! Lineage: where a run started by another run comes from. The run records the run and tool
//! call that started it and how that run takes its result ([`RunLineage`]); the child thread it
//! runs on records the thread that delegated and the subagent it runs ([`ThreadLineage`]).
//! Only the two together say where a child's events and result go, so [`Lineage::of`] is the
//! one place they are joined.
//!
//! On the wire and in the database both stay the flat nullable fields they have always been
//! (`parent_run_id`, `parent_tool_call_id`, `delivery`; `parent_thread_id`, `subagent_slug`):
//! [`Run`] and [`Thread`] flatten them through `run_fields` and `thread_fields`, so a run
//! without lineage still says `"parent_run_id": null`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::ToSchema;

use crate::{Run, RunId, Thread, ThreadId};

/// How a parent run receives a child run's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Delivery {
    /// The parent's tool call waits for the child (`task`); the child is cancelled with it.
    Wait,
    /// The child runs in the background (`subagent_start`) and may outlive the parent's run;
    /// when it ends after the parent's run, a notice goes to the parent thread.
    Background,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wait => "wait",
            Self::Background => "background",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Wait, Self::Background]
            .into_iter()
            .find(|d| d.as_str() == text)
    }
}

/// Set on a run another run's tool call started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLineage {
    /// The run whose tool call started this one.
    pub parent_run_id: RunId,
    /// The tool call in the parent run.
    pub parent_tool_call_id: Option<String>,
    /// Whether the parent waits for it or it runs in the background; `None` on runs recorded
    /// before deliveries were.
    pub delivery: Option<Delivery>,
}

/// Set on a child thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadLineage {
    /// The thread whose agent delegated to this one.
    pub parent_thread_id: ThreadId,
    /// The subagent this thread runs.
    pub subagent_slug: String,
}

/// A child run's whole lineage: its own and its thread's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lineage<'a> {
    pub run: &'a RunLineage,
    pub thread: &'a ThreadLineage,
}

impl<'a> Lineage<'a> {
    /// The lineage of `run` on `thread`, when both record one: a run with a parent on a
    /// thread without one (or the other way round) is no child the runtime can tell of.
    pub fn of(run: &'a Run, thread: &'a Thread) -> Option<Self> {
        Some(Self {
            run: run.lineage.as_ref()?,
            thread: thread.lineage.as_ref()?,
        })
    }

    pub fn parent_run_id(&self) -> RunId {
        self.run.parent_run_id
    }

    pub fn parent_thread_id(&self) -> &'a ThreadId {
        &self.thread.parent_thread_id
    }

    pub fn subagent_slug(&self) -> &'a str {
        &self.thread.subagent_slug
    }

    pub fn delivery(&self) -> Option<Delivery> {
        self.run.delivery
    }
}

/// [`Run::lineage`] as the three nullable fields runs have always been served with.
pub(crate) mod run_fields {
    use super::*;

    #[derive(Default, Serialize, Deserialize)]
    struct Fields {
        #[serde(default)]
        parent_run_id: Option<RunId>,
        #[serde(default)]
        parent_tool_call_id: Option<String>,
        #[serde(default)]
        delivery: Option<Delivery>,
    }

    pub fn serialize<S: Serializer>(lineage: &Option<RunLineage>, s: S) -> Result<S::Ok, S::Error> {
        let fields = match lineage {
            Some(l) => Fields {
                parent_run_id: Some(l.parent_run_id),
                parent_tool_call_id: l.parent_tool_call_id.clone(),
                delivery: l.delivery,
            },
            None => Fields::default(),
        };
        fields.serialize(s)
    }

    /// A run without a parent run has no lineage, whatever else its fields say.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RunLineage>, D::Error> {
        let fields = Fields::deserialize(d)?;
        Ok(fields.parent_run_id.map(|parent_run_id| RunLineage {
            parent_run_id,
            parent_tool_call_id: fields.parent_tool_call_id,
            delivery: fields.delivery,
        }))
    }
}

/// [`Thread::lineage`] as the two nullable fields threads have always been served with.
pub(crate) mod thread_fields {
    use super::*;

    #[derive(Default, Serialize, Deserialize)]
    struct Fields {
        #[serde(default)]
        parent_thread_id: Option<ThreadId>,
        #[serde(default)]
        subagent_slug: Option<String>,
    }

    pub fn serialize<S: Serializer>(
        lineage: &Option<ThreadLineage>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let fields = match lineage {
            Some(l) => Fields {
                parent_thread_id: Some(l.parent_thread_id.clone()),
                subagent_slug: Some(l.subagent_slug.clone()),
            },
            None => Fields::default(),
        };
        fields.serialize(s)
    }

    /// Both or neither, as the database's `CHECK` has it.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ThreadLineage>, D::Error> {
        let fields = Fields::deserialize(d)?;
        match (fields.parent_thread_id, fields.subagent_slug) {
            (Some(parent_thread_id), Some(subagent_slug)) => Ok(Some(ThreadLineage {
                parent_thread_id,
                subagent_slug,
            })),
            (None, None) => Ok(None),
            _ => Err(serde::de::Error::custom(
                "parent_thread_id and subagent_slug are set together or not at all",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;
    use crate::{AgentId, RunStatus, Usage, UserId};

    /// The fields a run has always had on the event bus's wire.
    const RUN_FIELDS: &[&str] = &[
        "id",
        "thread_id",
        "agent_id",
        "user_id",
        "status",
        "input",
        "output",
        "error",
        "error_code",
        "usage",
        "parent_run_id",
        "parent_tool_call_id",
        "delivery",
        "created_at",
        "started_at",
        "finished_at",
    ];
    /// The fields a thread has always had on the event bus's wire.
    const THREAD_FIELDS: &[&str] = &[
        "id",
        "user_id",
        "agent_id",
        "title",
        "parent_thread_id",
        "subagent_slug",
        "runtime_scope_id",
        "workdir_path",
        "created_at",
        "updated_at",
    ];

    fn names(fields: &[&str]) -> BTreeSet<String> {
        fields.iter().map(|f| (*f).to_owned()).collect()
    }

    fn keys(value: &Value) -> BTreeSet<String> {
        value
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn run(lineage: Option<RunLineage>) -> Run {
        Run {
            id: RunId::new(),
            thread_id: ThreadId::new(),
            agent_id: AgentId::new(),
            user_id: UserId::new(),
            status: RunStatus::Pending,
            input: "hi".into(),
            output: None,
            error: None,
            error_code: None,
            usage: Usage::default(),
            lineage,
            created_at: crate::time::now(),
            started_at: None,
            finished_at: None,
            pending: Vec::new(),
        }
    }

    #[test]
    fn a_run_keeps_its_flat_wire_fields_with_or_without_lineage() {
        let top = run(None);
        let child = run(Some(RunLineage {
            parent_run_id: RunId::new(),
            parent_tool_call_id: Some("call_1".into()),
            delivery: Some(Delivery::Background),
        }));
        for run in [top, child] {
            let wire = serde_json::to_value(&run).unwrap();
            assert_eq!(keys(&wire), names(RUN_FIELDS));
            let back: crate::Run = serde_json::from_value(wire).unwrap();
            assert_eq!(back, run);
        }
        let wire = serde_json::to_value(run(None)).unwrap();
        assert_eq!(wire["parent_run_id"], Value::Null);
        assert_eq!(wire["delivery"], Value::Null);
    }

    #[test]
    fn a_thread_keeps_its_flat_wire_fields_with_or_without_lineage() {
        let root = Thread::new_root(UserId::new(), AgentId::new(), "t".into());
        let child = root.new_child(AgentId::new(), "helper", "c".into());
        assert_eq!(
            child.lineage,
            Some(ThreadLineage {
                parent_thread_id: root.id.clone(),
                subagent_slug: "helper".into(),
            })
        );
        for thread in [root, child] {
            let wire = serde_json::to_value(&thread).unwrap();
            assert_eq!(keys(&wire), names(THREAD_FIELDS));
            let back: crate::Thread = serde_json::from_value(wire).unwrap();
            assert_eq!(back, thread);
        }
    }

    #[test]
    fn a_thread_with_half_a_lineage_is_refused() {
        let mut wire =
            serde_json::to_value(Thread::new_root(UserId::new(), AgentId::new(), "t".into()))
                .unwrap();
        wire["subagent_slug"] = "helper".into();
        assert!(serde_json::from_value::<Thread>(wire).is_err());
    }
}
