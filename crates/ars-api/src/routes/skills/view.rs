//! A skill on the wire ([`SkillView`]), and finding one by its API id in the caller's catalog.
//!
//! Every lookup goes through [`ars_runtime::skills::SkillLibrary::catalog`], the same listing a
//! run of the caller reads, so the API never shows a skill a run would not see (nor hides one
//! it would): a shared skill the caller cannot view is simply not in it, hence a 404.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use ars_domain::{Caller, ShareConfig, SkillFileInfo, SkillId, UserId};
use ars_runtime::skills::{Catalog, CatalogEntry, SkillOrigin, SkillsError};
use ars_sandbox::{PERSONAL_SKILLS_DIR, SandboxError, Scope};
use ars_skills::{SkillBundle, SkillSource, UploadLimits};

use crate::{ApiError, AppState};

/// Where a skill comes from. On a name clash personal wins over shared, shared over built-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SkillSourceView {
    Builtin,
    Shared,
    Personal,
}

impl From<SkillSource> for SkillSourceView {
    fn from(source: SkillSource) -> Self {
        match source {
            SkillSource::Builtin => Self::Builtin,
            SkillSource::Shared => Self::Shared,
            SkillSource::Personal => Self::Personal,
        }
    }
}

/// A skill the caller can see, from any of the three roots.
#[derive(Debug, Serialize, ToSchema)]
pub struct SkillView {
    /// A shared skill's UUID, `builtin:<name>` or `personal:<name>`.
    pub id: String,
    pub name: String,
    pub description: String,
    pub source: SkillSourceView,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub allowed_tools: Vec<String>,
    /// Shared skills only (and `null` when the owner's account is gone).
    pub owner_id: Option<UserId>,
    /// Shared skills only: built-in skills are everyone's, personal ones their owner's.
    pub share_config: Option<ShareConfig>,
    /// A content hash (SHA-256 over the files). Personal skills in a list: `""` (computed
    /// only by `GET /api/skills/{id}`, which reads the folder).
    pub version: String,
    /// Personal skills in a list: 0 (see `version`).
    pub file_count: u32,
    /// Personal skills in a list: 0 (see `version`).
    pub size_bytes: u64,
    /// The virtual path of its SKILL.md, as an agent's file tools see it.
    pub path: String,
    /// Another skill of the same name wins (personal > shared > built-in), so runs list that
    /// one instead.
    pub shadowed: bool,
    /// Whether the caller may change or delete it: never for built-in skills, always for their
    /// own personal ones, for shared ones by the sharing model.
    pub can_manage: bool,
    /// Shared skills only.
    pub created_at: Option<DateTime<Utc>>,
    /// Shared skills only.
    pub updated_at: Option<DateTime<Utc>>,
}

/// A file of a skill without its bytes, for listings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = SkillFileInfo)]
pub struct SkillFileView {
    pub path: String,
    pub size_bytes: u64,
}

impl From<SkillFileInfo> for SkillFileView {
    fn from(file: SkillFileInfo) -> Self {
        Self {
            path: file.path,
            size_bytes: file.size_bytes,
        }
    }
}

/// What only reading a personal skill's folder tells.
#[derive(Clone, Debug, Default)]
pub(super) struct FolderSummary {
    pub version: String,
    pub file_count: u32,
    pub size_bytes: u64,
}

impl FolderSummary {
    fn of(bundle: &SkillBundle) -> Self {
        Self {
            version: bundle.version(),
            file_count: count(bundle.files.len()),
            size_bytes: bundle.size_bytes(),
        }
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl SkillView {
    /// The view of a catalog entry; `personal` is the folder's summary when it was read.
    pub(super) fn of(
        entry: &CatalogEntry,
        caller: &Caller,
        personal: Option<FolderSummary>,
    ) -> Self {
        let mut view = SkillView {
            id: entry.id(),
            name: entry.name.clone(),
            description: entry.description.clone(),
            source: entry.source.into(),
            license: None,
            compatibility: None,
            metadata: BTreeMap::new(),
            allowed_tools: Vec::new(),
            owner_id: None,
            share_config: None,
            version: String::new(),
            file_count: 0,
            size_bytes: 0,
            path: entry.path.clone(),
            shadowed: entry.shadowed,
            can_manage: false,
            created_at: None,
            updated_at: None,
        };
        match &entry.origin {
            SkillOrigin::Builtin(bundle) => {
                let manifest = &bundle.manifest;
                let summary = FolderSummary::of(bundle);
                view.license = manifest.license.clone();
                view.compatibility = manifest.compatibility.clone();
                view.metadata = manifest.metadata.clone();
                view.allowed_tools = manifest.allowed_tools.clone();
                view.version = summary.version;
                view.file_count = summary.file_count;
                view.size_bytes = summary.size_bytes;
            }
            SkillOrigin::Shared(skill) => {
                view.license = skill.license.clone();
                view.compatibility = skill.compatibility.clone();
                view.metadata = skill.metadata.clone();
                view.allowed_tools = skill.allowed_tools.clone();
                view.owner_id = skill.owner_id;
                view.share_config = Some(skill.share_config.clone());
                view.version = skill.version.clone();
                view.file_count = skill.file_count;
                view.size_bytes = skill.size_bytes;
                view.can_manage = caller.can_manage(skill);
                view.created_at = Some(skill.created_at);
                view.updated_at = Some(skill.updated_at);
            }
            SkillOrigin::Personal(manifest) => {
                let summary = personal.unwrap_or_default();
                view.license = manifest.license.clone();
                view.compatibility = manifest.compatibility.clone();
                view.metadata = manifest.metadata.clone();
                view.allowed_tools = manifest.allowed_tools.clone();
                view.version = summary.version;
                view.file_count = summary.file_count;
                view.size_bytes = summary.size_bytes;
                view.can_manage = true;
            }
        }
        view
    }
}

/// The scope the API reads a user's personal skills through (prepared: the workspace and
/// `agents/skills` exist afterwards). It runs nothing; it only names the workspace.
pub(super) async fn user_scope(state: &AppState, user: UserId) -> Result<Scope, ApiError> {
    let scope = Scope::new(user, "skills-api", "agents/skills").map_err(sandbox_error)?;
    state
        .skills
        .sandbox()
        .prepare(&scope)
        .await
        .map_err(sandbox_error)?;
    Ok(scope)
}

/// Everything `caller` can see, as a run of theirs would.
pub(super) async fn catalog(
    state: &AppState,
    caller: &Caller,
) -> Result<(Catalog, Scope), ApiError> {
    let scope = user_scope(state, caller.id).await?;
    let catalog = state
        .skills
        .catalog(caller, &scope)
        .await
        .map_err(|e| match e {
            SkillsError::Store(e) => ApiError::from(e),
            SkillsError::Sandbox(e) => sandbox_error(e),
        })?;
    Ok((catalog, scope))
}

/// The longest API id: `personal:` and a 64-character name.
const MAX_ID_CHARS: usize = 80;

/// The catalog entry named by an API id (a UUID in any spelling, `builtin:<name>`,
/// `personal:<name>`); 404 when the caller cannot see it.
pub(super) async fn find(
    state: &AppState,
    caller: &Caller,
    id: &str,
) -> Result<(CatalogEntry, Scope), ApiError> {
    if id.chars().count() > MAX_ID_CHARS {
        return Err(ApiError::not_found(ars_domain::Subject::Skill));
    }
    let key = SkillId::parse(id).map_or_else(|| id.to_owned(), |id| id.to_string());
    let (catalog, scope) = catalog(state, caller).await?;
    let entry = catalog
        .entries
        .into_iter()
        .find(|e| e.id() == key)
        .ok_or_else(|| ApiError::not_found(ars_domain::Subject::Skill))?;
    Ok((entry, scope))
}

/// The virtual folder of a personal skill.
pub(super) fn personal_folder(name: &str) -> String {
    format!("{PERSONAL_SKILLS_DIR}/{name}")
}

/// Every file of a personal skill's folder, within the upload limits (a folder that outgrew
/// them is a 409).
pub(super) async fn personal_files(
    state: &AppState,
    scope: &Scope,
    name: &str,
) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let limits = UploadLimits::default();
    state
        .skills
        .sandbox()
        .read_tree(
            scope,
            &personal_folder(name),
            limits.max_files,
            limits.max_total_bytes,
        )
        .await
        .map_err(sandbox_error)
}

/// Reads a personal skill's whole folder as a bundle (a folder whose SKILL.md an agent broke
/// since it was listed is a 409).
pub(super) async fn personal_bundle(
    state: &AppState,
    scope: &Scope,
    name: &str,
) -> Result<SkillBundle, ApiError> {
    let files = personal_files(state, scope, name).await?;
    ars_skills::bundle_from_files(files.into_iter().collect(), Some(name)).map_err(|e| {
        ApiError::Conflict {
            message: format!("the personal skill `{name}` is not a valid skill now: {e}"),
            field: None,
        }
    })
}

/// The summary of a personal skill's folder, or zeros when it cannot be read whole (the view
/// still answers; the files endpoints say why).
pub(super) async fn personal_summary(state: &AppState, scope: &Scope, name: &str) -> FolderSummary {
    match personal_bundle(state, scope, name).await {
        Ok(bundle) => FolderSummary::of(&bundle),
        Err(e) => {
            tracing::warn!(skill = %name, error = %e, "cannot summarise a personal skill");
            FolderSummary::default()
        }
    }
}

/// A sandbox error as an API answer. Missing things are 404s (a path that resolves outside
/// the workspace included: its existence is not the caller's business); what the stored state
/// refuses (a skill already there, the workspace quota, a folder over the limits) is a 409;
/// malformed names and paths are 422s.
pub(super) fn sandbox_error(err: SandboxError) -> ApiError {
    match err {
        SandboxError::NotFound { .. }
        | SandboxError::IsDirectory { .. }
        | SandboxError::NotDirectory { .. }
        | SandboxError::OutsideScope { .. } => ApiError::not_found(ars_domain::Subject::SkillFile),
        e @ (SandboxError::SkillExists { .. }
        | SandboxError::QuotaExceeded { .. }
        | SandboxError::TooLarge { .. }) => ApiError::Conflict {
            message: e.to_string(),
            field: None,
        },
        e @ (SandboxError::InvalidPath { .. } | SandboxError::InvalidSkill { .. }) => {
            ApiError::Unprocessable {
                message: e.to_string(),
                field: None,
            }
        }
        other => ApiError::Internal(other.to_string()),
    }
}
