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
