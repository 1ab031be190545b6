//! The HTTP client under rmcp's Streamable HTTP transport: reqwest (0.13, rmcp's) with one
//! correction for servers that forgot a session.
//!
//! A server that restarted, or dropped a session, should answer a request in that session
//! with 404, which rmcp takes as "session expired": it initialises again and retries. Some
//! answer 400 with a JSON-RPC error that has no `id` instead (the reference servers do); rmcp
//! cannot tie such an error to the request and drops it, so the call would wait until its
//! time limit. Here an id-less error in answer to a request sent within a session counts as
//! the session having expired.

use std::collections::HashMap;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

/// rmcp's own reqwest client settings, with redirects not followed at all (rmcp follows
/// same-origin 307/308; an MCP endpoint that redirects is not worth the risk of replaying
/// headers that may carry secrets).
#[derive(Clone)]
pub(crate) struct HttpClient(reqwest013::Client);

impl HttpClient {
    pub(crate) fn new() -> Result<Self, reqwest013::Error> {
        reqwest013::Client::builder()
            // As rmcp does: no idle pooling (stalls on half-read bodies otherwise).
            .pool_max_idle_per_host(0)
            .redirect(reqwest013::redirect::Policy::none())
            .build()
            .map(Self)
    }
}

type Posted = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest013::Error>>;

/// Whether `posted` is an id-less JSON-RPC error answering a request sent in a session.
fn session_forgotten(message: &ClientJsonRpcMessage, in_session: bool, posted: &Posted) -> bool {
    in_session
        && matches!(message, JsonRpcMessage::Request(_))
        && matches!(
            posted,
            Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _)) if error.id.is_none()
        )
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest013::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Posted {
        let in_session = session_id.is_some();
        let probe = message.clone();
        let posted = self
            .0
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await;
        if session_forgotten(&probe, in_session, &posted) {
            return Err(StreamableHttpError::SessionExpired);
        }
        posted
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Posted {
        let in_session = session_id.is_some();
        let probe = message.clone();
        let posted = self
            .0
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        if session_forgotten(&probe, in_session, &posted) {
            tracing::debug!(
                "an id-less error answered a request in a session: the session expired"
            );
            return Err(StreamableHttpError::SessionExpired);
        }
        posted
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
