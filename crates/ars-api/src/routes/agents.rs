//! Agents and subagents: one CRUD API over one kind of row (SPEC §1–3).
//!
//! Every write goes through [`AgentInput::validate`] (the domain's rules), the runtime's rules
//! (`agent_runtime_rules`: known tools, a configured provider, a valid script) and a check
//! that the users named in `share_config` exist; reads go through [`Caller::can_view`]. An agent the
//! caller cannot see answers 404, never 403, so its existence does not leak.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::{
    Agent, AgentConfig, AgentDraft, AgentId, AgentInput, Backend, Caller, ResolvedContext,
    ShareConfig,
};
use ars_store::{AgentFilter, AgentKinds};

use super::patch::PatchOver;
use super::sharing::{self, check_share_users};
use crate::extract::{ApiJson, ApiQuery};
use crate::{ApiError, AppState, Auth, ErrorBody};

mod patch;
mod view;

pub use patch::AgentPatch;
pub use view::AgentView;

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Include subagents (the management page's full list). Default: only chat-usable agents.
    #[serde(default)]
    include_subagents: bool,
}

/// The body of `POST /api/agent` and `PUT /api/agent/{id}`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentWrite {
    /// Unique, 1-64 characters of `[a-z0-9-]`, not starting or ending with `-`; the name `task`
    /// tools use (`subagent_slug`).
    #[schema(pattern = r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")]
    slug: String,
    /// At most 200 characters, not blank; stored trimmed.
    #[schema(
        max_length = 200,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    name: String,
    #[serde(default)]
    #[schema(max_length = 4000)]
    description: String,
    /// `DefaultBackend` (default) or `SubAgentBackend`.
    #[serde(default)]
    #[schema(value_type = Option<Backend>)]
    backend_id: Option<String>,
    /// Derived from `backend_id`, so read-only: a client may send it only with the value it
    /// derives to; a contradicting value is a 422.
    #[serde(default)]
    #[schema(read_only)]
    is_subagent: Option<bool>,
    #[serde(default, deserialize_with = "ars_domain::object::object")]
    config_json: AgentConfig,
    #[serde(default, deserialize_with = "ars_domain::object::object")]
    share_config: ShareConfig,
    /// Omitted: keep the stored flag. `true` needs admin rights; never for a subagent.
    #[serde(default)]
    is_default: Option<bool>,
}

impl From<AgentWrite> for AgentInput {
    fn from(w: AgentWrite) -> Self {
        AgentInput {
            slug: w.slug,
            name: w.name,
            description: w.description,
            backend_id: w.backend_id,
            is_subagent: w.is_subagent,
            config_json: w.config_json,
            share_config: w.share_config,
            is_default: w.is_default,
        }
    }
}

/// Loads an agent by id (or slug) that `caller` can see; anything else is a 404.
pub(crate) async fn visible_agent(
    state: &AppState,
    caller: &Caller,
    key: &str,
) -> Result<Agent, ApiError> {
    let found = match AgentId::parse(key) {
        Some(id) => state.store.agent(id).await?,
        None if key.len() <= 64 => state.store.agent_by_slug(key).await?,
        None => None,
    };
    sharing::visible(found, caller, ars_domain::Subject::Agent)
}

/// Loads an agent `caller` may manage: 404 when invisible, 403 when only visible.
async fn managed_agent(state: &AppState, caller: &Caller, key: &str) -> Result<Agent, ApiError> {
    let agent = visible_agent(state, caller, key).await?;
    let refusal = if agent.is_builtin {
        "only admins can edit a built-in agent"
    } else {
        "you can use this agent but not manage it"
    };
    sharing::managed(agent, caller, ars_domain::Subject::Agent, refusal)
}

/// Validates a write, checks it against what the runtime offers (tools, model providers,
/// scripts), and checks that every user `share_config` names exists.
async fn validated(
    state: &AppState,
    caller: &Caller,
    input: AgentInput,
    existing: Option<&Agent>,
) -> Result<AgentDraft, ApiError> {
    let draft = input.validate(caller, existing)?;
    super::agent_runtime_rules::check(&state.runtime, &draft.config.context).await?;
    super::agent_runtime_rules::check_mcp_servers(
        state.store.as_ref(),
        caller,
        &draft.config.context,
        existing.map(|agent| &agent.config_json.context),
    )
    .await?;
    super::agent_runtime_rules::check_knowledge_bases(
        state.store.as_ref(),
        caller,
        &draft.config.context,
        existing.map(|agent| &agent.config_json.context),
    )
    .await?;
    check_share_users(state, &draft.share_config).await?;
    Ok(draft)
}

/// Lists agents the caller can see: chat-usable agents, or all with `include_subagents`.
#[utoipa::path(get, path = "/agent", tag = "agents", security(("bearer" = [])), params(ListQuery),
    responses((status = 200, body = [AgentView]), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list_agents(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<Vec<AgentView>>, ApiError> {
    let caller = auth.caller();
    let filter = AgentFilter {
        visible_to: sharing::visible_to(&caller),
        kinds: AgentKinds::chat_or_all(query.include_subagents),
    };
    let agents = state.store.list_agents(filter).await?;
    Ok(Json(agents.into_iter().map(AgentView::from).collect()))
}

/// Creates an agent or subagent owned by the caller.
#[utoipa::path(post, path = "/agent", tag = "agents", security(("bearer" = [])), request_body = AgentWrite,
    responses(
        (status = 201, body = AgentView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "is_default without admin rights"),
        (status = 409, body = ErrorBody, description = "Duplicate slug, or `share_config` names a user that does not exist"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A rule is broken; `field` names it"),
    ))]
pub async fn create_agent(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<AgentWrite>,
) -> Result<(StatusCode, Json<AgentView>), ApiError> {
    let caller = auth.caller();
    let draft = validated(&state, &caller, body.into(), None).await?;
    let agent = state.store.create_agent(&draft, Some(caller.id)).await?;
    Ok((StatusCode::CREATED, Json(agent.into())))
}

/// One agent the caller can see, by id or slug.
#[utoipa::path(get, path = "/agent/{id}", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")),
    responses((status = 200, body = AgentView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_agent(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<AgentView>, ApiError> {
    Ok(Json(
        visible_agent(&state, &auth.caller(), &id).await?.into(),
    ))
}

/// Replaces an agent's writable fields. `is_default` omitted keeps the stored flag.
#[utoipa::path(put, path = "/agent/{id}", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")), request_body = AgentWrite,
    responses(
        (status = 200, body = AgentView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
    ))]
pub async fn put_agent(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<AgentWrite>,
) -> Result<Json<AgentView>, ApiError> {
    let caller = auth.caller();
    let existing = managed_agent(&state, &caller, &id).await?;
    let draft = validated(&state, &caller, body.into(), Some(&existing)).await?;
    Ok(Json(
        state.store.update_agent(existing.id, &draft).await?.into(),
    ))
}

/// Updates some fields: the body is a JSON merge patch (RFC 7396) over the agent's writable
/// fields, and the result is validated exactly like a `PUT`.
#[utoipa::path(patch, path = "/agent/{id}", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")),
    request_body(content = AgentPatch, content_type = "application/json", description = "JSON merge patch over AgentWrite"),
    responses(
        (status = 200, body = AgentView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
    ))]
pub async fn patch_agent(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<AgentPatch>,
) -> Result<Json<AgentView>, ApiError> {
    let caller = auth.caller();
    let existing = managed_agent(&state, &caller, &id).await?;
    let input = patch.clone().over(&existing)?;
    let draft = match validated(&state, &caller, input, Some(&existing)).await {
        Ok(draft) => draft,
        // A patch that would be sound on its own but breaks a rule together with what is
        // stored (a stored subagent asked to be the default, say) conflicts with the stored
        // state: 409, since no schema of the patch can state it.
        Err(e)
            if matches!(e.kind(), ApiError::Unprocessable { .. })
                && sound_on_its_own(&caller, &existing, patch) =>
        {
            return Err(e.as_conflict());
        }
        Err(other) => return Err(other),
    };
    Ok(Json(
        state.store.update_agent(existing.id, &draft).await?.into(),
    ))
}

/// Whether `patch`, applied to a fresh agent with only the stored slug and name, passes the
/// domain's rules.
fn sound_on_its_own(caller: &Caller, existing: &Agent, patch: AgentPatch) -> bool {
    let fresh = AgentInput {
        slug: existing.slug.clone(),
        name: existing.name.clone(),
        ..AgentInput::default()
    };
    patch
        .merged(fresh)
        .is_ok_and(|input| input.validate(caller, None).is_ok())
}

/// Deletes an agent. Built-in agents are never deleted.
#[utoipa::path(delete, path = "/agent/{id}", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")),
    responses(
        (status = 204), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Built-in, or visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A run is active on one of its threads; `active_run_id` names it"),
    ))]
pub async fn delete_agent(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let caller = auth.caller();
    let agent = visible_agent(&state, &caller, &id).await?;
    if agent.is_builtin {
        return Err(ApiError::builtin_cannot_be_deleted(
            ars_domain::Subject::Agent,
            "built-in agents cannot be deleted",
        ));
    }
    if !caller.can_delete(&agent) {
        return Err(ApiError::cannot_delete(
            ars_domain::Subject::Agent,
            "you can use this agent but not delete it",
        ));
    }
    // Its threads go with it; one with a run still going would lose the run's end.
    if let Some(active) = state.store.agent_active_run(agent.id).await? {
        return Err(ApiError::busy(active.id));
    }
    if state.store.delete_agent(agent.id).await? == ars_store::Deleted::Deleted {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(ars_domain::Subject::Agent))
    }
}

/// Makes an agent the one default agent (admins only; never a subagent).
#[utoipa::path(post, path = "/agent/{id}/default", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")),
    responses(
        (status = 200, body = AgentView), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Not an admin"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A subagent cannot be the default"),
    ))]
pub async fn set_default(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<AgentView>, ApiError> {
    let caller = auth.caller();
    let agent = visible_agent(&state, &caller, &id).await?;
    auth.require_admin()?;
    // The agent's state, not the (empty) request, is at odds with the change: a 409.
    if agent.is_subagent {
        return Err(ApiError::Conflict {
            message: "a subagent can never be the default agent".into(),
            field: Some("is_default".into()),
        });
    }
    Ok(Json(state.store.set_default_agent(agent.id).await?.into()))
}

/// The context an agent runs with, as served: the resolved context and the skills a run of
/// it by the caller would list.
#[derive(Serialize, ToSchema)]
pub struct ResolvedContextView {
    #[serde(flatten)]
    context: ResolvedContext,
    /// What a run of this agent by the caller would list in its prompt: the skills the caller
    /// can see, selected by the resolved `skills` (`["*"]` all, names exactly those, unknown
    /// names dropped), one per name (personal over shared over built-in).
    offered_skills: Vec<super::skills::OfferedSkill>,
}

/// The context the agent actually runs with: its own, over the backend defaults, over
/// `BaseContext`, with the layer each field came from; and the skills it would offer the
/// caller.
#[utoipa::path(get, path = "/agent/{id}/resolved-context", tag = "agents", security(("bearer" = [])),
    params(("id" = String, Path, description = "Agent id or slug")),
    responses((status = 200, body = ResolvedContextView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn resolved_context(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ResolvedContextView>, ApiError> {
    let caller = auth.caller();
    let agent = visible_agent(&state, &caller, &id).await?;
    // The defaults a run would use now: the server default model may be an admin's setting.
    let snapshot = state.runtime.model_snapshot().await?;
    let context = snapshot
        .defaults(state.runtime.defaults())
        .resolve(agent.backend_id, &agent.config_json.context);
    let offered_skills = super::skills::offered_skills(&state, &caller, &context.skills).await?;
    Ok(Json(ResolvedContextView {
        context,
        offered_skills,
    }))
}
