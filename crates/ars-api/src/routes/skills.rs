//! Skills (Agent Skills folders): the built-in ones, shared ones (store rows under the sharing
//! model) and each user's personal ones (folders in their workspace), as one API.
//!
//! A skill is named by an id that says where it lives: a shared skill's UUID,
//! `builtin:<name>` or `personal:<name>`. Reads go through the caller's catalog (see `view`),
//! so a skill the caller cannot see is a 404, never a 403. Uploads are parsed by `ars-skills`
//! (`upload`); a refused upload is a 422 that names the problem and stores nothing, since the
//! store and the sandbox each write a skill in one step.

mod upload;
mod view;

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::{Caller, NewSkill, ShareConfig, Skill, UserId};
use ars_runtime::skills::{CatalogEntry, SkillOrigin};
use ars_sandbox::Scope;
use ars_skills::{SkillBundle, UploadLimits, bundle_from_files};
use ars_store::StoreError;

use super::patch::{self, Patch, PatchOver};
use super::sharing::{self, ShareConfigPatch, check_share_users};
use crate::extract::{ApiBytes, ApiJson, ApiQuery};
use crate::{ApiError, AppState, Auth, ErrorBody};

pub use upload::{SkillArchive, SkillMarkdown, UPLOAD_BODY_LIMIT, UploadTarget};
pub use view::{SkillFileView, SkillSourceView, SkillView};

/// One skill a run would list in its prompt (see `GET /api/agent/{id}/resolved-context`).
#[derive(Debug, Serialize, ToSchema)]
pub struct OfferedSkill {
    pub name: String,
    pub source: SkillSourceView,
    /// The virtual path of its SKILL.md.
    pub path: String,
}

/// The skills a run with `configured` (a resolved `context.skills`) by `caller` would list.
pub(super) async fn offered_skills(
    state: &AppState,
    caller: &Caller,
    configured: &[String],
) -> Result<Vec<OfferedSkill>, ApiError> {
    let (catalog, _) = view::catalog(state, caller).await?;
    Ok(catalog
        .select(configured)
        .0
        .into_iter()
        .map(|s| OfferedSkill {
            name: s.name,
            source: s.source.into(),
            path: s.path,
        })
        .collect())
}

/// Every skill the caller can see: built-in, shared with them (all, for admins) and their
/// personal ones, by name; shadowed ones included and marked.
#[utoipa::path(get, path = "/skills", tag = "skills", security(("bearer" = [])),
    responses((status = 200, body = [SkillView]), (status = 401, body = ErrorBody)))]
pub async fn list_skills(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<SkillView>>, ApiError> {
    let caller = auth.caller();
    let (catalog, _) = view::catalog(&state, &caller).await?;
    Ok(Json(
        catalog
            .entries
            .iter()
            .map(|e| SkillView::of(e, &caller, None))
            .collect(),
    ))
}

#[derive(Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// `shared` (default): a store row, private to you until shared; `personal`: a folder in
    /// your workspace.
    #[serde(default)]
    #[param(inline)]
    target: UploadTarget,
    /// Replace a skill of the same name (a shared one you manage, or your personal one)
    /// instead of answering 409.
    #[serde(default)]
    replace: bool,
}

/// Uploads a skill: a zip (or `.skill`) archive of its folder, or a lone SKILL.md.
#[utoipa::path(post, path = "/skills", tag = "skills", security(("bearer" = [])), params(UploadQuery),
    request_body(description = "A zip archive (SKILL.md at its root or in one folder named after the skill) or a SKILL.md",
        content((SkillArchive = "application/zip"), (SkillArchive = "application/octet-stream"),
            (SkillMarkdown = "text/markdown"), (SkillMarkdown = "text/plain"))),
    responses(
        (status = 201, body = SkillView, description = "Stored (a new skill, or the new version with replace=true)"),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "replace=true over a shared skill you can use but not manage"),
        (status = 409, body = ErrorBody, description = "The name is taken (without replace=true, or by a skill you cannot see), or the workspace quota is exceeded"),
        (status = 413, body = ErrorBody, description = "The body is over 25 MiB"),
        (status = 415, body = ErrorBody, description = "Neither an archive nor a SKILL.md"),
        (status = 422, body = ErrorBody, description = "The skill breaks a rule (frontmatter, names, paths, limits); nothing is stored"),
    ))]
pub async fn upload_skill(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<UploadQuery>,
    headers: HeaderMap,
    ApiBytes(body): ApiBytes,
) -> Result<(StatusCode, Json<SkillView>), ApiError> {
    let caller = auth.caller();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let bundle = upload::parse(content_type, &body)?;
    let id = match query.target {
        UploadTarget::Shared => upload_shared(&state, &caller, &bundle, query.replace)
            .await?
            .to_string(),
        UploadTarget::Personal => {
            install_personal(&state, caller.id, bundle, query.replace).await?
        }
    };
    let (entry, scope) = view::find(&state, &caller, &id).await?;
    Ok((
        StatusCode::CREATED,
        Json(detailed_view(&state, &caller, &entry, &scope).await),
    ))
}

/// Creates a shared skill, or with `replace` stores a new version of the one of that name.
async fn upload_shared(
    state: &AppState,
    caller: &Caller,
    bundle: &SkillBundle,
    replace: bool,
) -> Result<ars_domain::SkillId, ApiError> {
    let content = upload::content(bundle);
    let taken = |hint: &str| {
        ApiError::Conflict {
            message: format!(
                "a shared skill named `{}` already exists{hint}",
                content.name
            ),
            field: Some("frontmatter.name".into()),
        }
        .because(
            ars_domain::Reason::new(ars_domain::ErrorReason::SkillExists)
                .with("name", content.name.as_str()),
        )
    };
    let Some(existing) = state.store.skill_by_name(&content.name).await? else {
        let new = NewSkill {
            owner_id: Some(caller.id),
            share_config: ShareConfig::default(),
            content: content.clone(),
        };
        return match state.store.create_skill(&new).await {
            Ok(skill) => Ok(skill.id),
            // Created by someone else since the lookup.
            Err(StoreError::Conflict { .. }) => Err(taken("")),
            Err(other) => Err(other.into()),
        };
    };
    if !replace {
        return Err(taken(
            "; upload with replace=true to make this its new version",
        ));
    }
    if !caller.can_manage(&existing) {
        return Err(if caller.can_view(&existing) {
            ApiError::forbidden("you can use this skill but not replace it")
        } else {
            taken("")
        });
    }
    Ok(state
        .store
        .replace_skill_content(existing.id, &content)
        .await?
        .id)
}

/// Installs a personal skill; answers its id.
async fn install_personal(
    state: &AppState,
    user: UserId,
    bundle: SkillBundle,
    replace: bool,
) -> Result<String, ApiError> {
    let name = bundle.manifest.name.clone();
    let files = bundle.files.into_iter().collect();
    state
        .skills
        .sandbox()
        .install_personal_skill(user, &name, files, replace)
        .await
        .map_err(|e| match e {
            ars_sandbox::SandboxError::SkillExists { .. } => ApiError::Conflict {
                message: format!("{e}; upload with replace=true to replace it, or delete it first"),
                field: Some("frontmatter.name".into()),
            }
            .because(
                ars_domain::Reason::new(ars_domain::ErrorReason::SkillExists)
                    .with("name", name.as_str()),
            ),
            other => view::sandbox_error(other),
        })?;
    Ok(format!("personal:{name}"))
}

/// The view of one entry, with a personal skill's folder read for its version and size.
async fn detailed_view(
    state: &AppState,
    caller: &Caller,
    entry: &CatalogEntry,
    scope: &Scope,
) -> SkillView {
    let summary = match entry.origin {
        SkillOrigin::Personal(_) => Some(view::personal_summary(state, scope, &entry.name).await),
        _ => None,
    };
    SkillView::of(entry, caller, summary)
}

/// One skill the caller can see.
#[utoipa::path(get, path = "/skills/{id}", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID, `builtin:<name>` or `personal:<name>`")),
    responses((status = 200, body = SkillView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_skill(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<SkillView>, ApiError> {
    let caller = auth.caller();
    let (entry, scope) = view::find(&state, &caller, &id).await?;
    Ok(Json(detailed_view(&state, &caller, &entry, &scope).await))
}

/// The body of `PUT /api/skills/{id}`: who may see and manage a shared skill.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillShareWrite {
    /// Omitted: private to the owner.
    #[serde(default, deserialize_with = "ars_domain::object::object")]
    share_config: ShareConfig,
}

/// The body of `PATCH /api/skills/{id}`: a JSON merge patch (RFC 7396) over `SkillShareWrite`;
/// `null` for `share_config` makes the skill private again.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillSharePatch {
    #[serde(default, deserialize_with = "patch::object")]
    #[schema(value_type = Option<ShareConfig>)]
    share_config: Patch<ShareConfigPatch>,
}

impl PatchOver<Skill> for SkillSharePatch {
    type Write = SkillShareWrite;

    fn over(self, stored: &Skill) -> Result<SkillShareWrite, ApiError> {
        Ok(SkillShareWrite {
            share_config: self
                .share_config
                .merge_or_default(stored.share_config.clone(), "share_config")?,
        })
    }
}

/// Loads a shared skill `caller` may manage: 404 when invisible, 403 when only visible, 409
/// for a built-in or personal one (which have no sharing to change).
async fn managed_shared(state: &AppState, caller: &Caller, id: &str) -> Result<Skill, ApiError> {
    let (entry, _) = view::find(state, caller, id).await?;
    let conflict = |message: &str| ApiError::Conflict {
        message: message.into(),
        field: None,
    };
    match entry.origin {
        SkillOrigin::Builtin(_) => Err(conflict("built-in skills cannot be shared or changed")),
        SkillOrigin::Personal(_) => Err(conflict(
            "personal skills are private to you; upload the skill with target=shared to share it",
        )),
        SkillOrigin::Shared(skill) => sharing::managed(
            skill,
            caller,
            ars_domain::Subject::Skill,
            "you can use this skill but not manage it",
        ),
    }
}

/// Stores a validated share and answers the skill's view.
async fn store_share(
    state: &AppState,
    caller: &Caller,
    skill: &Skill,
    share: ShareConfig,
) -> Result<Json<SkillView>, ApiError> {
    check_share_users(state, &share).await?;
    let updated = state
        .store
        .update_skill_share(skill.id, &share.normalized())
        .await?;
    let (entry, scope) = view::find(state, caller, &updated.id.to_string()).await?;
    Ok(Json(detailed_view(state, caller, &entry, &scope).await))
}

/// Replaces a shared skill's `share_config`.
#[utoipa::path(put, path = "/skills/{id}", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID")), request_body = SkillShareWrite,
    responses(
        (status = 200, body = SkillView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Visible but not manageable"),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A built-in or personal skill, or `share_config` names a user that does not exist"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
    ))]
pub async fn put_skill(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<SkillShareWrite>,
) -> Result<Json<SkillView>, ApiError> {
    let caller = auth.caller();
    let skill = managed_shared(&state, &caller, &id).await?;
    store_share(&state, &caller, &skill, body.share_config).await
}

/// Changes some of a shared skill's `share_config` (a JSON merge patch).
#[utoipa::path(patch, path = "/skills/{id}", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID")),
    request_body(content = SkillSharePatch, content_type = "application/json", description = "JSON merge patch over SkillShareWrite"),
    responses(
        (status = 200, body = SkillView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
    ))]
pub async fn patch_skill(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<SkillSharePatch>,
) -> Result<Json<SkillView>, ApiError> {
    let caller = auth.caller();
    let skill = managed_shared(&state, &caller, &id).await?;
    let write = patch.over(&skill)?;
    store_share(&state, &caller, &skill, write.share_config).await
}

/// Deletes a shared skill (with `can_delete`) or one of your personal skills. Built-in
/// skills are never deleted.
#[utoipa::path(delete, path = "/skills/{id}", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID, `builtin:<name>` or `personal:<name>`")),
    responses(
        (status = 204), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "Built-in, or visible but not deletable"),
        (status = 404, body = ErrorBody),
    ))]
pub async fn delete_skill(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let caller = auth.caller();
    // A personal folder whose SKILL.md is broken is not in the catalog, but is still the
    // user's to remove.
    if let Some(name) = id.strip_prefix("personal:") {
        if ars_skills::validate_name(name).is_err() {
            return Err(ApiError::not_found(ars_domain::Subject::Skill));
        }
        let removed = state
            .skills
            .sandbox()
            .remove_personal_skill(caller.id, name)
            .await
            .map_err(view::sandbox_error)?;
        return if removed {
            Ok(StatusCode::NO_CONTENT)
        } else {
            Err(ApiError::not_found(ars_domain::Subject::Skill))
        };
    }
    let (entry, _) = view::find(&state, &caller, &id).await?;
    let SkillOrigin::Shared(skill) = entry.origin else {
        return Err(ApiError::builtin_cannot_be_deleted(
            ars_domain::Subject::Skill,
            "built-in skills cannot be deleted",
        ));
    };
    if !caller.can_delete(&skill) {
        return Err(ApiError::cannot_delete(
            ars_domain::Subject::Skill,
            "you can use this skill but not delete it",
        ));
    }
    if state.store.delete_skill(skill.id).await? == ars_store::Deleted::Deleted {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(ars_domain::Subject::Skill))
    }
}

/// Every file of an entry, as a bundle.
async fn bundle_of(
    state: &AppState,
    entry: &CatalogEntry,
    scope: &Scope,
) -> Result<SkillBundle, ApiError> {
    match &entry.origin {
        SkillOrigin::Builtin(bundle) => Ok(bundle.clone()),
        SkillOrigin::Shared(skill) => {
            let files: BTreeMap<String, Vec<u8>> = state
                .store
                .skill_contents(skill.id)
                .await?
                .into_iter()
                .map(|f| (f.path, f.content))
                .collect();
            bundle_from_files(files, None).map_err(|e| {
                ApiError::Internal(format!("stored skill {} does not read back: {e}", skill.id))
            })
        }
        SkillOrigin::Personal(_) => view::personal_bundle(state, scope, &entry.name).await,
    }
}

/// The skill's folder as a zip archive (one top folder named after the skill), the format
/// `POST /api/skills` reads.
#[utoipa::path(get, path = "/skills/{id}/download", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID, `builtin:<name>` or `personal:<name>`")),
    responses(
        (status = 200, content_type = "application/zip", body = SkillArchive,
            headers(("Content-Disposition" = String, description = "attachment; filename=\"<name>.zip\""))),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A personal skill's folder is no longer a valid skill"),
    ))]
pub async fn download_skill(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let caller = auth.caller();
    let (entry, scope) = view::find(&state, &caller, &id).await?;
    let bundle = bundle_of(&state, &entry, &scope).await?;
    let zip = bundle
        .to_zip()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let disposition =
        HeaderValue::from_str(&format!("attachment; filename=\"{}.zip\"", entry.name))
            .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/zip"),
            ),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        zip,
    )
        .into_response())
}

/// The skill's files (paths relative to its folder) and their sizes, by path.
#[utoipa::path(get, path = "/skills/{id}/files", tag = "skills", security(("bearer" = [])),
    params(("id" = String, Path, description = "A shared skill's UUID, `builtin:<name>` or `personal:<name>`")),
    responses(
        (status = 200, body = [SkillFileView]),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A personal skill's folder is over the limits"),
    ))]
pub async fn list_skill_files(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<SkillFileView>>, ApiError> {
    let caller = auth.caller();
    let (entry, scope) = view::find(&state, &caller, &id).await?;
    let info = |(path, bytes): (&String, &Vec<u8>)| SkillFileView {
        path: path.clone(),
        size_bytes: bytes.len() as u64,
    };
    Ok(Json(match &entry.origin {
        SkillOrigin::Builtin(bundle) => bundle.files.iter().map(info).collect(),
        SkillOrigin::Shared(skill) => state
            .store
            .skill_files(skill.id)
            .await?
            .into_iter()
            .map(SkillFileView::from)
            .collect(),
        SkillOrigin::Personal(_) => view::personal_files(&state, &scope, &entry.name)
            .await?
            .iter()
            .map(|(path, bytes)| info((path, bytes)))
            .collect(),
    }))
}

/// One file of the skill, raw: `text/plain; charset=utf-8` when it is UTF-8 text, else
/// `application/octet-stream`.
#[utoipa::path(get, path = "/skills/{id}/files/{*path}", tag = "skills", security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "A shared skill's UUID, `builtin:<name>` or `personal:<name>`"),
        ("path" = String, Path, description = "The file's path inside the skill folder, e.g. `scripts/run.py`"),
    ),
    responses(
        (status = 200, content((String = "text/plain"), (SkillArchive = "application/octet-stream"))),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A personal skill's file is over the size limit"),
        (status = 422, body = ErrorBody, description = "An absolute path, or one with `..`, `.` or empty components"),
    ))]
pub async fn get_skill_file(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, path)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let caller = auth.caller();
    // The skill first: an unknown skill is a 404 whatever the path.
    let (entry, scope) = view::find(&state, &caller, &id).await?;
    ars_skills::archive::check_path(&path).map_err(|e| {
        ApiError::unprocessable("path", format!("not a file path inside a skill: {e}"))
    })?;
    let missing = || ApiError::not_found(ars_domain::Subject::SkillFile);
    let bytes = match &entry.origin {
        SkillOrigin::Builtin(bundle) => bundle.files.get(&path).cloned().ok_or_else(missing)?,
        SkillOrigin::Shared(skill) => state
            .store
            .skill_file(skill.id, &path)
            .await?
            .ok_or_else(missing)?,
        SkillOrigin::Personal(_) => state
            .skills
            .sandbox()
            .read_bytes(
                &scope,
                &format!("{}/{path}", view::personal_folder(&entry.name)),
                UploadLimits::default().max_file_bytes,
            )
            .await
            .map_err(view::sandbox_error)?,
    };
    let content_type = if std::str::from_utf8(&bytes).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        bytes,
    )
        .into_response())
}
