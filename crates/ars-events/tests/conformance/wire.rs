//! The JSON wire shape of every event kind (the SSE layer serializes `RunEvent` as-is), and
//! that each kind survives a trip through the bus unchanged.

use ars_domain::{
    Message, MessageId, MessageRole, RunId, RunStatus, ThreadId, ToolCallRecord, Usage,
};
use ars_events::{EventKind, PREVIEW_CHARS, ParentRef, RunEvent, RunRef, preview};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde_json::{Value, json};

use crate::fixture::{Fixture, collect};

const RUN: &str = "0190a0b0-0000-7000-8000-000000000001";
const PARENT_RUN: &str = "0190a0b0-0000-7000-8000-000000000002";
const THREAD: &str = "0190a0b0-0000-7000-8000-0000000000aa";
const MESSAGE: &str = "0190a0b0-0000-7000-8000-0000000000bb";
const AT: &str = "2025-01-02T03:04:05.678Z";

fn at() -> DateTime<Utc> {
    AT.parse().unwrap()
}

fn thread() -> ThreadId {
    ThreadId::parse(THREAD).unwrap()
}

fn message() -> Message {
    Message {
        id: MessageId::parse(MESSAGE).unwrap(),
        thread_id: thread(),
        run_id: RunId::parse(RUN),
        seq: 3,
        role: MessageRole::Assistant,
        content: "Let me look.".into(),
        tool_calls: vec![ToolCallRecord {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
            interrupted: false,
        }],
        tool_call_id: None,
        tool_name: None,
        is_error: false,
        notice: None,
        created_at: at(),
        replaced_by_run_id: None,
        steer: false,
    }
}

/// One event of each kind, with the JSON fields each must have besides the envelope.
fn every_kind() -> Vec<(EventKind, Value)> {
    vec![
        (
            EventKind::status(RunStatus::Running),
            json!({"type": "run_status", "status": "running"}),
        ),
        (
            EventKind::RunStatus {
                status: RunStatus::Error,
                error: Some("boom".into()),
                error_code: None,
                output: Some("partial".into()),
            },
            json!({"type": "run_status", "status": "error", "error": "boom", "output": "partial"}),
        ),
        (
            EventKind::RunStatus {
                status: RunStatus::Error,
                error: Some("no model configured".into()),
                error_code: Some(ars_domain::RunErrorCode::NoModelConfigured),
                output: None,
            },
            json!({"type": "run_status", "status": "error", "error": "no model configured",
                   "error_code": "no_model_configured"}),
        ),
        (
            EventKind::MessageStarted {
                role: MessageRole::Assistant,
            },
            json!({"type": "message_started", "role": "assistant"}),
        ),
        (
            EventKind::MessageDelta { text: "Hel".into() },
            json!({"type": "message_delta", "text": "Hel"}),
        ),
        (
            EventKind::MessageCompleted {
                message: Box::new(message()),
            },
            json!({"type": "message_completed", "message": {
                "id": MESSAGE, "thread_id": THREAD, "run_id": RUN, "seq": 3,
                "role": "assistant", "content": "Let me look.",
                "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}],
                "created_at": AT,
            }}),
        ),
        (
            EventKind::ToolCallStarted {
                call_id: "call_1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a.txt"}"#.into(),
            },
            json!({"type": "tool_call_started", "call_id": "call_1", "name": "read_file",
                   "arguments": "{\"path\":\"a.txt\"}"}),
        ),
        (
            EventKind::tool_call_finished("call_1", "read_file", true, "no such file"),
            json!({"type": "tool_call_finished", "call_id": "call_1", "name": "read_file",
                   "is_error": true, "preview": "no such file"}),
        ),
        (
            EventKind::Usage {
                usage: Usage {
                    prompt_tokens: 120,
                    completion_tokens: 30,
                },
            },
            json!({"type": "usage", "usage": {"prompt_tokens": 120, "completion_tokens": 30}}),
        ),
        (
            EventKind::Error {
                message: "rate limited, retrying".into(),
            },
            json!({"type": "error", "message": "rate limited, retrying"}),
        ),
    ]
}

fn child_run() -> RunRef {
    RunRef::child(
        RunId::parse(RUN).unwrap(),
        ThreadId::parse(&format!("{THREAD}_sub_researcher_0a1b2c3d")).unwrap(),
        ParentRef {
            parent_run_id: RunId::parse(PARENT_RUN).unwrap(),
            parent_tool_call_id: Some("call_9".into()),
            parent_thread_id: thread(),
        },
    )
}

#[test]
fn every_kind_has_its_snapshot_wire_shape() {
    let run = RunRef::top_level(RunId::parse(RUN).unwrap(), thread());
    for (id, (kind, fields)) in (1..).zip(every_kind()) {
        let name = kind.name();
        let event = RunEvent {
            id,
            run: run.clone(),
            at: at(),
            kind,
        };
        let mut expected = json!({"id": id, "run_id": RUN, "thread_id": THREAD, "at": AT});
        expected
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());

        let wire = serde_json::to_value(&event).unwrap();
        assert_eq!(wire, expected, "wire shape of {name}");
        assert_eq!(wire["type"], name, "SSE name of {name}");
        let back: RunEvent = serde_json::from_value(wire).unwrap();
        assert_eq!(back, event, "round trip of {name}");
    }
}

#[test]
fn child_runs_carry_their_parent() {
    let event = RunEvent {
        id: 1,
        run: child_run(),
        at: at(),
        kind: EventKind::MessageDelta { text: "hi".into() },
    };
    let wire = serde_json::to_value(&event).unwrap();
    assert_eq!(
        wire,
        json!({
            "id": 1, "run_id": RUN, "thread_id": format!("{THREAD}_sub_researcher_0a1b2c3d"),
            "parent": {"parent_run_id": PARENT_RUN, "parent_tool_call_id": "call_9",
                       "parent_thread_id": THREAD},
            "at": AT, "type": "message_delta", "text": "hi",
        })
    );
    assert_eq!(serde_json::from_value::<RunEvent>(wire).unwrap(), event);
}

#[test]
fn tool_result_previews_are_cut_on_char_boundaries() {
    let result = "données 🚀 ".repeat(200);
    let cut = preview(&result, PREVIEW_CHARS);
    assert_eq!(cut.chars().count(), PREVIEW_CHARS);
    assert!(cut.ends_with('…'));
    assert!(result.starts_with(cut.trim_end_matches('…')));
    assert_eq!(preview("🚀🚀🚀", 2), "🚀…");
    assert_eq!(preview("🚀🚀", 2), "🚀🚀");

    let EventKind::ToolCallFinished { preview: p, .. } =
        EventKind::tool_call_finished("c", "t", false, &result)
    else {
        unreachable!()
    };
    assert_eq!(p, cut);
}

pub async fn check_every_kind_round_trips_through_the_bus(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = RunRef {
        run_id: RunId::new(),
        ..child_run()
    };
    let mut published = Vec::new();
    for (kind, _) in every_kind() {
        // The sample's `error` status is terminal; it goes last.
        if !kind.is_terminal() {
            published.push(bus.publish(&run, kind).await.unwrap());
        }
    }
    published.push(
        bus.publish(&run, EventKind::status(RunStatus::Cancelled))
            .await
            .unwrap(),
    );
    let replayed = collect(bus.subscribe(run.run_id, 0).await.unwrap()).await;
    assert_eq!(replayed, published);
}

pub async fn check_a_streamed_event_reads_as_the_json_it_serializes_to(fx: &Fixture) {
    let bus = fx.bus().await;
    let run = RunRef {
        run_id: RunId::new(),
        ..child_run()
    };
    for (kind, _) in every_kind() {
        if !kind.is_terminal() {
            bus.publish(&run, kind).await.unwrap();
        }
    }
    bus.publish(&run, EventKind::status(RunStatus::Cancelled))
        .await
        .unwrap();
    let mut events = bus.subscribe(run.run_id, 0).await.unwrap();
    let mut streamed = 0;
    while let Some(event) = events.next().await {
        let event = event.unwrap();
        // Twice: the second read is the text the first one kept.
        for _ in 0..2 {
            assert_eq!(
                event.json().unwrap(),
                serde_json::to_string(&*event).unwrap()
            );
        }
        streamed += 1;
    }
    let published = every_kind()
        .iter()
        .filter(|(kind, _)| !kind.is_terminal())
        .count()
        + 1;
    assert_eq!(streamed, published);
}
