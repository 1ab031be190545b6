//! People in the loop of a running tree: what runs wait on, and the decisions that resume
//! them.
//!
//! A run whose turn calls a tool whose approval rule is `ask`, or asks the user a question, is
//! `waiting` with its `pending` items. `GET /api/threads/{id}/pending` lists every pending item
//! of a thread and of the subagents' threads below it (each item names its run and thread);
//! `POST /api/runs/{id}/decisions` decides all of one run's items at once and resumes it on
//! this instance. `POST /api/runs/{id}/messages` sends a message into an active run
//! (steering): the model reads it before its next model call. Only the run's owner sees,
//! decides or steers; anyone else gets a 404.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::ToSchema;

use ars_domain::{DecisionInput, PendingItem, RunInput, RunInputError};

use super::runs::{RunView, owned_run};
use super::threads::{MessageView, owned_thread};
use crate::error::input_reason;
use crate::extract::ApiJson;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The most decisions one request may carry (a turn's calls are fewer).
const MAX_DECISIONS: usize = 256;

/// The body of `POST /api/runs/{id}/decisions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionsBody {
    /// One decision per pending call of the run, all at once: `approve`, `reject` (with an
    /// optional `message` the model reads) or `edit` (with the new `arguments`) for an
    /// approval; an `answer` for a question.
    #[schema(min_items = 1, max_items = 256)]
    decisions: Vec<DecisionInput>,
}

/// Decides every call the run waits on and resumes it: approved and edited calls run (edited
/// ones with the new arguments, checked against the tool's schema), rejected ones give the
/// model a result saying they were refused and why, answers become the question's result.
#[utoipa::path(post, path = "/runs/{id}/decisions", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Run id")),
    request_body = DecisionsBody,
    responses(
        (status = 200, body = RunView, description = "The run, resumed (`pending`)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The run is not waiting for a decision"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A call missing, unknown or decided twice; a decision that does not fit its call; edited arguments that do not fit the tool's schema"),
    ))]
pub async fn decide(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<DecisionsBody>,
) -> Result<Json<RunView>, ApiError> {
    let run = owned_run(&state, &auth, &id).await?;
    if body.decisions.len() > MAX_DECISIONS {
        return Err(ApiError::unprocessable(
            "decisions",
            format!("at most {MAX_DECISIONS} decisions"),
        ));
    }
    let resumed = state.runtime.decide(run.id, &body.decisions).await?;
    Ok(Json(resumed.into()))
}

/// Every item the thread's runs and its subagents' runs wait on, oldest run first: approvals
/// (`kind: approval`, with the tool and its arguments) and questions (`kind: question`). Each
/// names the run to send the decision to.
#[utoipa::path(get, path = "/threads/{id}/pending", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses((status = 200, body = [PendingItem]), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub async fn pending(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<PendingItem>>, ApiError> {
    let thread = owned_thread(&state, &auth, &id).await?;
    let runs = state.store.waiting_runs_under(&thread.id).await?;
    Ok(Json(runs.into_iter().flat_map(|r| r.pending).collect()))
}

/// The body of `POST /api/runs/{id}/messages`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SteerBody {
    /// What to tell the running agent: not blank, at most 100,000 characters.
    #[schema(min_length = 1, max_length = 100000)]
    content: String,
}

/// Sends a message into a run while it is active (pending, running or waiting for a decision).
/// It is stored on the run's thread as a user message marked `steer`, and the model reads it
/// before its next model call — after the results of the calls it has open — wherever the run
/// executes or resumes. A run that has ended answers 409: start a new run on its thread.
#[utoipa::path(post, path = "/runs/{id}/messages", tag = "runs", security(("bearer" = [])),
    params(("id" = String, Path, description = "Run id")),
    request_body = SteerBody,
    responses(
        (status = 202, body = MessageView, description = "The message as stored (`steer: true`)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "The run has ended: start a new run on its thread"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Blank or over-long `content`"),
    ))]
pub async fn steer(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SteerBody>,
) -> Result<(StatusCode, Json<MessageView>), ApiError> {
    let run = owned_run(&state, &auth, &id).await?;
    let input = RunInput::new(body.content).map_err(|e| {
        let why = match e {
            RunInputError::Blank => "the message must not be blank".to_string(),
            RunInputError::TooLong => format!(
                "the message is longer than {} characters",
                RunInput::MAX_CHARS
            ),
        };
        ApiError::unprocessable("content", why).because(input_reason(&e))
    })?;
    let message = state.runtime.steer(run.id, input).await?;
    Ok((StatusCode::ACCEPTED, Json(message.into())))
}
