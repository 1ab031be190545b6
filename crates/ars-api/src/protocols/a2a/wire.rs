//! ARS runs as A2A v1.0 tasks, in ProtoJSON (camelCase fields, enum names such as
//! `TASK_STATE_COMPLETED`, RFC 3339 timestamps): a task is a run (`id` = run id), its context
//! the run's thread (`contextId` = thread id).

use serde_json::{Value, json};

use ars_domain::{Run, RunStatus};

pub(super) fn time(at: &chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub(super) fn state(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Pending => "TASK_STATE_SUBMITTED",
        RunStatus::Running => "TASK_STATE_WORKING",
        RunStatus::Waiting => "TASK_STATE_INPUT_REQUIRED",
        RunStatus::Success => "TASK_STATE_COMPLETED",
        RunStatus::Cancelled => "TASK_STATE_CANCELED",
        RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted => "TASK_STATE_FAILED",
    }
}

/// A message of the task's exchange.
pub(super) fn message(run: &Run, id: &str, role: &str, text: &str) -> Value {
    json!({
        "messageId": id,
        "contextId": run.thread_id.to_string(),
        "taskId": run.id.to_string(),
        "role": role,
        "parts": [{"text": text}],
    })
}

/// The user's message that started the run.
pub(super) fn input(run: &Run) -> Value {
    message(run, &format!("{}-input", run.id), "ROLE_USER", &run.input)
}

/// What the agent says at the end: its answer, why it failed, or what it waits on.
fn closing(run: &Run) -> Option<Value> {
    let text = match run.status {
        RunStatus::Success => run.output.clone().unwrap_or_default(),
        RunStatus::Waiting => {
            let asks: Vec<String> = run
                .pending
                .iter()
                .map(|item| serde_json::to_string(&item.request).unwrap_or_default())
                .collect();
            format!("waiting for your decision on: {}", asks.join("; "))
        }
        RunStatus::Error | RunStatus::Timeout | RunStatus::Interrupted => run
            .error
            .clone()
            .unwrap_or_else(|| format!("the run ended {}", run.status.as_str())),
        _ => return None,
    };
    Some(message(
        run,
        &format!("{}-output", run.id),
        "ROLE_AGENT",
        &text,
    ))
}

pub(super) fn status(run: &Run) -> Value {
    let at = run.finished_at.or(run.started_at).unwrap_or(run.created_at);
    let mut status = json!({"state": state(run.status), "timestamp": time(&at)});
    if let Some(message) = closing(run) {
        status["message"] = message;
    }
    status
}

pub(super) fn artifact_id(run: &Run) -> String {
    format!("{}-answer", run.id)
}

/// The task: status, the answer as an artifact once there is one, and the last
/// `history_length` messages of the exchange (all by default).
pub(super) fn task(run: &Run, history_length: Option<usize>) -> Value {
    let mut history = vec![input(run)];
    if let Some(message) = closing(run) {
        history.push(message);
    }
    let keep = history_length.unwrap_or(history.len()).min(history.len());
    let history = history.split_off(history.len() - keep);
    let artifacts = match (&run.output, run.status) {
        (Some(text), RunStatus::Success) => json!([{
            "artifactId": artifact_id(run),
            "name": "answer",
            "parts": [{"text": text}],
        }]),
        _ => json!([]),
    };
    json!({
        "id": run.id.to_string(),
        "contextId": run.thread_id.to_string(),
        "status": status(run),
        "artifacts": artifacts,
        "history": history,
        "metadata": {},
    })
}
