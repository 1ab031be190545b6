//! The OpenAPI document's frame: title, security scheme, shared schemas. Paths come from the
//! `#[utoipa::path]` attributes on the handlers, collected by the router.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::ErrorBody;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "ARS",
        description = "Agent runtime server: agents, subagents, threads and runs.",
    ),
    modifiers(&BearerAuth),
    components(schemas(ErrorBody)),
    tags(
        (name = "auth", description = "Login and API tokens"),
        (name = "users", description = "User accounts"),
        (name = "agents", description = "Agents and subagents (one kind of row)"),
        (name = "threads", description = "Conversations with an agent and their messages"),
        (name = "runs", description = "Runs of an agent on a thread, and their live events (SSE)"),
        (name = "catalog", description = "Configured model providers and built-in tools"),
        (name = "system", description = "Health and metadata"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The served document states the configured password minimum (the generated one, and the
/// snapshot of it, the default).
pub fn state_password_minimum(openapi: &mut utoipa::openapi::OpenApi, min_chars: usize) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let Some(RefOr::T(Schema::Object(request))) = components.schemas.get_mut("CreateUserRequest")
    else {
        return;
    };
    if let Some(RefOr::T(Schema::Object(password))) = request.properties.get_mut("password") {
        password.min_length = Some(min_chars);
    }
}
