//! The HTTP client under rmcp's Streamable HTTP transport: reqwest (0.13, rmcp's) with the
//! outbound policy applied where the connection is made, and one correction for servers that
//! forgot a session.
//!
//! A connection under the policy ([`Reach::Checked`]) resolves names through its [`Guard`],
//! which hands reqwest only addresses the policy allows, and each request is admitted by the
//! guard first (its own origin only, an address in the URL judged), so nothing is sent
//! anywhere the policy refuses.
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

use crate::outbound::{Blocked, Guard, Reach};

/// rmcp's own reqwest client settings, with redirects not followed at all (rmcp follows
/// same-origin 307/308; an MCP endpoint that redirects is not worth the risk of replaying
/// headers that may carry secrets, and a redirect is a way around the outbound policy): a
/// 3xx is answered as the HTTP status it is.
#[derive(Clone)]
pub(crate) struct HttpClient {
    client: reqwest013::Client,
    /// `None`: the connection may go anywhere.
    guard: Option<Guard>,
}

/// Why a client could not be made for a URL.
pub(crate) enum ClientError {
    Blocked(Blocked),
    Build(reqwest013::Error),
}

impl HttpClient {
    pub(crate) fn new(url: &str, reach: &Reach) -> Result<Self, ClientError> {
        let builder = reqwest013::Client::builder()
            // As rmcp does: no idle pooling (stalls on half-read bodies otherwise). It also
            // means each request connects, and so resolves and is judged, afresh.
            .pool_max_idle_per_host(0)
            .redirect(reqwest013::redirect::Policy::none());
        let (builder, guard) = match reach {
            Reach::Anywhere => (builder, None),
            Reach::Checked(outbound) => {
                let guard = outbound.guard(url).map_err(ClientError::Blocked)?;
                // A proxy would resolve the name itself, out of the guard's sight.
                let builder = builder.no_proxy().dns_resolver(Arc::new(guard.clone()));
                (builder, Some(guard))
            }
        };
        let client = builder.build().map_err(ClientError::Build)?;
        Ok(Self { client, guard })
    }

    /// Whether a request to `uri` may be sent (always, for a connection that may go
    /// anywhere).
    fn admit(&self, uri: &str) -> Result<(), StreamableHttpError<reqwest013::Error>> {
        match &self.guard {
            None => Ok(()),
            Some(guard) => guard.admit(uri).map_err(|blocked| {
                StreamableHttpError::Io(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    blocked,
                ))
            }),
        }
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
        self.admit(&uri)?;
        let in_session = session_id.is_some();
        let probe = message.clone();
        let posted = self
            .client
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
        self.admit(&uri)?;
        let in_session = session_id.is_some();
        let probe = message.clone();
        let posted = self
            .client
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
        self.admit(&uri)?;
        self.client
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
        self.admit(&uri)?;
        self.client
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
        self.admit(&uri)?;
        self.client
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
