//! The OpenAPI schemas of [`Run`](crate::Run) and [`Thread`](crate::Thread), written out field
//! by field. Each holds its lineage in one Rust field that serde flattens into the nullable
//! fields clients have always read (see [`crate::lineage`]); utoipa would describe a flattened
//! field as a composed schema instead, so these mirrors say what is actually served. A test
//! keeps each mirror equal to what its type serialises.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use utoipa::openapi::{RefOr, schema::Schema};
use utoipa::{PartialSchema, ToSchema};

use crate::{AgentId, Delivery, RunErrorCode, RunId, RunStatus, ThreadId, Usage, UserId};

/// A run as stored and served.
#[derive(ToSchema)]
#[allow(dead_code)]
struct Run {
    id: RunId,
    thread_id: ThreadId,
    agent_id: AgentId,
    user_id: UserId,
    status: RunStatus,
    /// The user's message that started the run.
    input: String,
    /// The final assistant text, once there is one.
    output: Option<String>,
    error: Option<String>,
    /// Set on some failed runs: what went wrong as a stable code a client can translate
    /// (`error` keeps the words).
    error_code: Option<RunErrorCode>,
    /// This run's own tokens (children's are reported separately and rolled up by the caller).
    usage: Usage,
    /// Set on subagent runs: the run whose tool call started this one.
    parent_run_id: Option<RunId>,
    /// Set on subagent runs: the tool call id in the parent run.
    parent_tool_call_id: Option<String>,
    /// Set on subagent runs: whether the parent waits for it or it runs in the background.
    delivery: Option<Delivery>,
    created_at: DateTime<Utc>,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
}

/// A conversation with one agent.
#[derive(ToSchema)]
#[allow(dead_code)]
struct Thread {
    id: ThreadId,
    user_id: UserId,
    agent_id: AgentId,
    title: String,
    /// Set on child threads: the thread whose agent delegated to this one.
    parent_thread_id: Option<ThreadId>,
    /// Set on child threads: the subagent slug this thread runs.
    subagent_slug: Option<String>,
    /// The sandbox runtime this thread's tools run in: the root conversation's.
    runtime_scope_id: String,
    /// The project workdir, relative to the user's workspace (`/home/gem/user-data/<this>`).
    workdir_path: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl PartialSchema for crate::Run {
    fn schema() -> RefOr<Schema> {
        Run::schema()
    }
}

impl ToSchema for crate::Run {
    fn name() -> Cow<'static, str> {
        Run::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        Run::schemas(schemas);
    }
}

impl PartialSchema for crate::Thread {
    fn schema() -> RefOr<Schema> {
        Thread::schema()
    }
}

impl ToSchema for crate::Thread {
    fn name() -> Cow<'static, str> {
        Thread::name()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        Thread::schemas(schemas);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;
    use crate::lineage::{RunLineage, ThreadLineage};

    /// The property names a schema declares.
    fn properties<T: ToSchema>() -> BTreeSet<String> {
        let schema = serde_json::to_value(T::schema()).unwrap();
        schema["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn keys(value: &Value) -> BTreeSet<String> {
        value
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn run(lineage: Option<RunLineage>) -> crate::Run {
        crate::Run {
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
        }
    }

    #[test]
    fn a_run_serialises_exactly_the_fields_its_schema_declares_with_or_without_lineage() {
        let top = run(None);
        let child = run(Some(RunLineage {
            parent_run_id: RunId::new(),
            parent_tool_call_id: Some("call_1".into()),
            delivery: Some(Delivery::Background),
        }));
        for run in [top, child] {
            let wire = serde_json::to_value(&run).unwrap();
            assert_eq!(keys(&wire), properties::<crate::Run>());
            let back: crate::Run = serde_json::from_value(wire).unwrap();
            assert_eq!(back, run);
        }
        let wire = serde_json::to_value(run(None)).unwrap();
        assert_eq!(wire["parent_run_id"], Value::Null);
        assert_eq!(wire["delivery"], Value::Null);
    }

    #[test]
    fn a_thread_serialises_exactly_the_fields_its_schema_declares_with_or_without_lineage() {
        let root = crate::Thread::new_root(UserId::new(), AgentId::new(), "t".into());
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
            assert_eq!(keys(&wire), properties::<crate::Thread>());
            let back: crate::Thread = serde_json::from_value(wire).unwrap();
            assert_eq!(back, thread);
        }
    }

    #[test]
    fn a_thread_with_half_a_lineage_is_refused() {
        let mut wire = serde_json::to_value(crate::Thread::new_root(
            UserId::new(),
            AgentId::new(),
            "t".into(),
        ))
        .unwrap();
        wire["subagent_slug"] = "helper".into();
        assert!(serde_json::from_value::<crate::Thread>(wire).is_err());
    }
}
