//! The HTTP side of `ars chat`: the few API calls a chat needs, and a run's SSE stream.
//!
//! Responses are read into the domain's own types (`Thread`, `Run`) and the events crate's
//! `RunEvent`, so a change of wire shape on the server breaks this client's build or tests, not
//! its users.

use std::fmt;

use anyhow::Context;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use ars_domain::{Run, Thread};
use ars_events::RunEvent;

/// The SSE `event:` name the server uses for a failure after streaming started.
const STREAM_ERROR: &str = "stream_error";

/// An error answer of the API, as the terminal shows it.
#[derive(Debug, Deserialize)]
pub struct ApiFailure {
    #[serde(skip)]
    pub status: u16,
    pub code: String,
    pub message: String,
    #[serde(default)]
    pub field: Option<String>,
    /// Set on `busy`: the run keeping the thread busy.
    #[serde(default)]
    pub active_run_id: Option<String>,
}

impl fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        write!(f, " [{} {}]", self.status, self.code)
    }
}

impl std::error::Error for ApiFailure {}

#[derive(Deserialize)]
struct ErrorBody {
    error: ApiFailure,
}

#[derive(Deserialize)]
struct RunAccepted {
    run: Run,
}

#[derive(Deserialize)]
struct WaitReply {
    run: Run,
    wait_timed_out: bool,
}

/// One item of a run's event stream.
#[derive(Debug)]
pub enum StreamItem {
    Event(Box<RunEvent>),
    /// The server could not go on streaming (the events it needed expired); read the run.
    Failed(String),
}

/// A client of one server, authenticated as one user.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Client {
    pub fn new(base: &str, token: String) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: base.trim_end_matches('/').to_string(),
            token,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    /// Sends a request and reads a JSON answer, turning error bodies into [`ApiFailure`].
    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<T> {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach the server at {}", self.base))?;
        read(response).await
    }

    /// Starts a thread with `agent` (slug or id).
    pub async fn create_thread(&self, agent: &str) -> anyhow::Result<Thread> {
        self.call(
            Method::POST,
            "/api/threads",
            Some(json!({"agent_id": agent, "title": format!("ars chat with {agent}")})),
        )
        .await
    }

    /// Sends the user's message; answers the new run.
    pub async fn start_run(&self, thread: &Thread, input: &str) -> anyhow::Result<Run> {
        let path = format!("/api/threads/{}/runs", thread.id);
        let accepted: RunAccepted = self
            .call(Method::POST, &path, Some(json!({"input": input})))
            .await?;
        Ok(accepted.run)
    }

    pub async fn cancel(&self, run: &str) -> anyhow::Result<Run> {
        self.call(Method::POST, &format!("/api/runs/{run}/cancel"), None)
            .await
    }

    /// Waits for the run to end; answers it and whether the wait timed out.
    pub async fn wait(&self, run: &str, timeout_s: u64) -> anyhow::Result<(Run, bool)> {
        let path = format!("/api/runs/{run}/wait?timeout_s={timeout_s}");
        let reply: WaitReply = self.call(Method::GET, &path, None).await?;
        Ok((reply.run, reply.wait_timed_out))
    }

    /// The run's events after `after`; `None` when the server no longer has them (410).
    pub async fn events(
        &self,
        run: &str,
        after: u64,
    ) -> anyhow::Result<Option<impl Stream<Item = anyhow::Result<StreamItem>> + use<>>> {
        let response = self
            .request(Method::GET, &format!("/api/runs/{run}/events"))
            .header("last-event-id", after.to_string())
            .send()
            .await
            .with_context(|| format!("cannot reach the server at {}", self.base))?;
        if response.status() == StatusCode::GONE {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(read::<Value>(response)
                .await
                .err()
                .unwrap_or_else(|| anyhow::anyhow!("the event stream could not be opened")));
        }
        let stream = response.bytes_stream().eventsource().map(|item| {
            let event = item.context("the event stream broke off")?;
            if event.event == STREAM_ERROR {
                let failure = serde_json::from_str::<ErrorBody>(&event.data)
                    .map(|b| b.error.message)
                    .unwrap_or(event.data);
                return Ok(StreamItem::Failed(failure));
            }
            let parsed: RunEvent = serde_json::from_str(&event.data)
                .with_context(|| format!("unreadable `{}` event from the server", event.event))?;
            Ok(StreamItem::Event(Box::new(parsed)))
        });
        Ok(Some(stream))
    }
}

/// Reads a JSON answer; an error status becomes an [`ApiFailure`].
async fn read<T: DeserializeOwned>(response: reqwest::Response) -> anyhow::Result<T> {
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .context("the server's answer broke off")?;
    if status.is_success() {
        return serde_json::from_slice(&bytes).context("unreadable answer from the server");
    }
    let failure = match serde_json::from_slice::<ErrorBody>(&bytes) {
        Ok(body) => ApiFailure {
            status: status.as_u16(),
            ..body.error
        },
        Err(_) => ApiFailure {
            status: status.as_u16(),
            code: "http".into(),
            message: format!("the server answered {status}"),
            field: None,
            active_run_id: None,
        },
    };
    Err(failure.into())
}
