//! Route table: each resource module owns its handlers and request/response types (its views
//! among them). What resources share is stated once: `patch` (the one PATCH style) and
//! `sharing` (agents, skills, MCP servers and knowledge bases under the sharing model).

use std::convert::Infallible;
use std::sync::OnceLock;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::MethodRouter;
use utoipa::OpenApi as _;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::HttpMethod;
use utoipa_axum::PathItemExt;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

use crate::AppState;
use crate::extract::BodyLimit;

mod agent_runtime_rules;
pub(crate) mod agents;
mod auth;
mod catalog;
mod decisions;
mod events;
mod files;
mod health;
mod knowledge;
mod mcp_servers;
mod model_providers;
mod model_settings;
mod patch;
mod runs;
mod sharing;
mod skills;
mod subagents;
mod thread_events;
pub(crate) mod threads;
mod usage;
mod users;

pub(crate) use thread_events::{ThreadNotice, ThreadSnapshot};

/// The type `#[utoipa::path]` writes beside handler `a::b::c`, which knows its path, methods
/// and part of the document: `a::b::__path_c`.
macro_rules! path_of {
    ([$($prefix:ident)*] $last:ident) => {
        ::utoipa_axum::paste! { $($prefix::)* [<__path_ $last>] }
    };
    ([$($prefix:ident)*] $head:ident :: $($rest:tt)+) => {
        path_of!([$($prefix)* $head] $($rest)+)
    };
}

/// `utoipa_axum::routes!` in two halves: the handlers' axum routes now, from their paths and
/// methods alone, and their part of the OpenAPI document as a function called only when the
/// document is built ([`ApiDocs`]). Writing the document touches every schema's code and
/// allocates megabytes; a server that is never asked for it does neither.
macro_rules! routes {
    ($($($segment:ident)::+),+ $(,)?) => {
        Entry::documented_by(|| ::utoipa_axum::routes!($($($segment)::+),+))
            $(.on(
                <path_of!([] $($segment)::+) as ::utoipa::Path>::path(),
                <path_of!([] $($segment)::+) as ::utoipa::Path>::methods(),
                $($segment)::+,
            ))+
    };
}

/// One entry of the route table: the handlers of one path, and how to write their part of the
/// OpenAPI document.
struct Entry {
    paths: Vec<String>,
    method_router: MethodRouter<AppState>,
    docs: fn() -> UtoipaMethodRouter<AppState>,
}

impl Entry {
    fn documented_by(docs: fn() -> UtoipaMethodRouter<AppState>) -> Self {
        Self {
            paths: Vec::new(),
            method_router: MethodRouter::new(),
            docs,
        }
    }

    /// Routes `handler` at `path` for each of `methods`.
    fn on<H, T>(mut self, path: String, methods: Vec<HttpMethod>, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        for method in methods {
            self.method_router = self
                .method_router
                .on(method.to_method_filter(), handler.clone());
        }
        if !self.paths.contains(&path) {
            self.paths.push(path);
        }
        self
    }

    /// Wraps the entry's routes in `layer` (its document is the same).
    fn layer_routes(
        mut self,
        layer: impl FnOnce(MethodRouter<AppState>) -> MethodRouter<AppState>,
    ) -> Self {
        self.method_router = layer(self.method_router);
        self
    }
}

/// The API's route table: its axum routes, and the entries' documentation functions.
pub(crate) struct RouteTable {
    router: Router<AppState>,
    docs: Vec<fn() -> UtoipaMethodRouter<AppState>>,
}

impl RouteTable {
    fn new() -> Self {
        Self {
            router: Router::new(),
            docs: Vec::new(),
        }
    }

    fn routes(mut self, entry: Entry) -> Self {
        for path in &entry.paths {
            self.router = self.router.route(path, entry.method_router.clone());
        }
        self.docs.push(entry.docs);
        self
    }

    /// The routes, and what writes their document.
    pub(crate) fn split(self) -> (Router<AppState>, ApiDocs) {
        let docs = ApiDocs {
            entries: self.docs,
            written: OnceLock::new(),
        };
        (self.router, docs)
    }
}

/// What writes the route table's OpenAPI document, on demand, and the document once written.
pub(crate) struct ApiDocs {
    entries: Vec<fn() -> UtoipaMethodRouter<AppState>>,
    written: OnceLock<OpenApi>,
}

impl ApiDocs {
    /// The OpenAPI 3.1 document of the table's routes under `/api`, with the rules their
    /// schemas cannot state themselves.
    pub(crate) fn document(&self) -> OpenApi {
        let routes = self
            .entries
            .iter()
            .fold(OpenApiRouter::new(), |router, docs| router.routes(docs()));
        let mut doc = OpenApiRouter::<AppState>::with_openapi(crate::openapi::ApiDoc::openapi())
            .nest("/api", routes)
            .into_openapi();
        crate::openapi::state_rules(&mut doc);
        doc
    }

    /// The document as served: written the first time it is asked for, and `finish`ed then.
    pub(crate) fn served(&self, finish: impl FnOnce(&mut OpenApi)) -> &OpenApi {
        self.written.get_or_init(|| {
            let mut doc = self.document();
            finish(&mut doc);
            doc
        })
    }
}

/// The route table, under `/`; the server nests it under `/api`.
pub(crate) fn router() -> RouteTable {
    RouteTable::new()
        .routes(routes!(health::health))
        .routes(routes!(auth::login))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::me))
        .routes(routes!(auth::change_own_password))
        .routes(routes!(auth::list_tokens, auth::create_token))
        .routes(routes!(auth::revoke_token))
        .routes(routes!(users::list_users, users::create_user))
        .routes(routes!(users::get_user, users::update_user))
        .routes(routes!(users::reset_password))
        .routes(routes!(agents::list_agents, agents::create_agent))
        .routes(routes!(
            agents::get_agent,
            agents::put_agent,
            agents::patch_agent,
            agents::delete_agent
        ))
        .routes(routes!(agents::set_default))
        .routes(routes!(agents::resolved_context))
        .routes(skills_upload_limit(routes!(
            skills::list_skills,
            skills::upload_skill
        )))
        .routes(routes!(
            skills::get_skill,
            skills::put_skill,
            skills::patch_skill,
            skills::delete_skill
        ))
        .routes(routes!(skills::download_skill))
        .routes(routes!(skills::list_skill_files))
        .routes(routes!(skills::get_skill_file))
        .routes(routes!(threads::list_threads, threads::create_thread))
        .routes(routes!(threads::search_messages))
        .routes(routes!(
            threads::get_thread,
            threads::rename_thread,
            threads::delete_thread
        ))
        .routes(routes!(threads::list_messages))
        .routes(routes!(subagents::list_subagents))
        .routes(routes!(files::list_files, files::delete_file))
        .routes(routes!(files::download_file, files::upload_file))
        .routes(routes!(thread_events::thread_events))
        .routes(routes!(runs::list_runs, runs::start_run))
        .routes(routes!(runs::get_run))
        .routes(routes!(runs::wait_run))
        .routes(routes!(runs::cancel_run))
        .routes(routes!(decisions::decide))
        .routes(routes!(decisions::pending))
        .routes(routes!(decisions::steer))
        .routes(routes!(events::run_events))
        .routes(routes!(
            model_providers::list_model_providers,
            model_providers::create_model_provider
        ))
        .routes(routes!(model_providers::probe::test_unsaved_model_provider))
        .routes(routes!(model_providers::probe::list_unsaved_models))
        .routes(routes!(
            model_providers::get_model_provider,
            model_providers::put_model_provider,
            model_providers::patch_model_provider,
            model_providers::delete_model_provider
        ))
        .routes(routes!(model_providers::probe::test_model_provider))
        .routes(routes!(
            model_providers::probe::refresh_model_provider_models
        ))
        .routes(routes!(
            model_settings::get_model_settings,
            model_settings::set_model_settings
        ))
        .routes(routes!(usage::usage))
        .routes(routes!(
            mcp_servers::list_mcp_servers,
            mcp_servers::create_mcp_server
        ))
        .routes(routes!(
            mcp_servers::get_mcp_server,
            mcp_servers::put_mcp_server,
            mcp_servers::patch_mcp_server,
            mcp_servers::delete_mcp_server
        ))
        .routes(routes!(mcp_servers::check_mcp_server))
        .routes(routes!(
            knowledge::list_knowledge_bases,
            knowledge::create_knowledge_base
        ))
        .routes(routes!(
            knowledge::get_knowledge_base,
            knowledge::put_knowledge_base,
            knowledge::patch_knowledge_base,
            knowledge::delete_knowledge_base
        ))
        .routes(unlimited_body(routes!(
            knowledge::documents::list_documents,
            knowledge::documents::upload_documents
        )))
        .routes(routes!(
            knowledge::documents::get_document,
            knowledge::documents::delete_document
        ))
        .routes(routes!(knowledge::documents::download_document))
        .routes(routes!(knowledge::documents::retry_document))
        .routes(routes!(knowledge::documents::document_chunks))
        .routes(routes!(knowledge::events::knowledge_events))
        .routes(routes!(knowledge::reindex_knowledge_base))
        .routes(routes!(knowledge::search::search_knowledge_base))
        .routes(routes!(knowledge::search::open_citation))
        .routes(routes!(catalog::list_models))
        .routes(routes!(catalog::list_tools))
}

/// Skill uploads are archives, larger than any JSON body: their route has its own limit
/// (which the 413 message states, through [`BodyLimit`]).
fn skills_upload_limit(entry: Entry) -> Entry {
    let limit = skills::UPLOAD_BODY_LIMIT;
    entry.layer_routes(|method_router| {
        method_router
            .layer::<_, Infallible>(DefaultBodyLimit::max(limit))
            .layer::<_, Infallible>(axum::Extension(BodyLimit(limit)))
    })
}

/// Document uploads measure themselves (each file against the per-document limit, the whole
/// against the knowledge base's), so the 413 names the file or the knowledge base and its
/// limit: the general body limit does not apply to them.
fn unlimited_body(entry: Entry) -> Entry {
    entry.layer_routes(|method_router| {
        method_router.layer::<_, Infallible>(DefaultBodyLimit::disable())
    })
}
