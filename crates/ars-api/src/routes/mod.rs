//! Route table: each resource module owns its handlers and request/response types (its views
//! among them). What resources share is stated once: `patch` (the one PATCH style) and
//! `sharing` (agents, skills, MCP servers and knowledge bases under the sharing model).

use std::convert::Infallible;

use axum::extract::DefaultBodyLimit;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

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

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
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
fn skills_upload_limit(
    (schemas, paths, method_router): UtoipaMethodRouter<AppState>,
) -> UtoipaMethodRouter<AppState> {
    let limit = skills::UPLOAD_BODY_LIMIT;
    let method_router = method_router
        .layer::<_, Infallible>(DefaultBodyLimit::max(limit))
        .layer::<_, Infallible>(axum::Extension(BodyLimit(limit)));
    (schemas, paths, method_router)
}

/// Document uploads measure themselves (each file against the per-document limit, the whole
/// against the knowledge base's), so the 413 names the file or the knowledge base and its
/// limit: the general body limit does not apply to them.
fn unlimited_body(
    (schemas, paths, method_router): UtoipaMethodRouter<AppState>,
) -> UtoipaMethodRouter<AppState> {
    let method_router = method_router.layer::<_, Infallible>(DefaultBodyLimit::disable());
    (schemas, paths, method_router)
}
