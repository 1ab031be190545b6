//! The save-time half of the outbound policy: a non-admin's endpoint is judged when it is
//! set or changed, as its connections will be (an address in any form, or every address its
//! host resolves to now), so a refused one is a 422 naming `transport.url` and the rule,
//! before anything is stored. Connections judge it again (names resolve differently over
//! time); this check is for a clear answer at once.

use ars_domain::{Caller, McpServer, McpServerFields, McpTransport};

use crate::{ApiError, AppState};

/// Refuses `fields`' endpoint when `caller` is no admin, the endpoint is new or changed, and
/// the outbound policy refuses where it leads.
pub(super) async fn check(
    state: &AppState,
    caller: &Caller,
    fields: &McpServerFields,
    before: Option<&McpServer>,
) -> Result<(), ApiError> {
    if caller.is_admin() {
        return Ok(());
    }
    let McpTransport::StreamableHttp(http) = &fields.transport else {
        return Ok(());
    };
    let unchanged = before.is_some_and(|server| {
        matches!(&server.fields.transport, McpTransport::StreamableHttp(old) if old.url == http.url)
    });
    if unchanged {
        return Ok(());
    }
    state
        .mcp
        .outbound()
        .check_url(&http.url)
        .await
        .map_err(|blocked| ApiError::unprocessable("transport.url", blocked.to_string()))
}
