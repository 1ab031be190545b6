//! Skills: a shared resource (see [`crate::shares`]) whose row, shares and files change
//! together.

use async_trait::async_trait;

use ars_domain::{
    NewSkill, ShareConfig, Skill, SkillContent, SkillFile, SkillFileInfo, SkillId, UserId,
};

use crate::{Deleted, Result};

pub(crate) mod queries;
pub(crate) mod rows;
pub(crate) mod sql;

/// Which skills a list returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct SkillFilter {
    /// Only skills this user can see (`ars_domain::Caller::can_view` for a non-admin);
    /// `None` lists every skill (admins).
    pub visible_to: Option<UserId>,
}

/// Skills: the row, its shares and its files change together.
#[async_trait]
pub trait SkillStore: Send + Sync {
    /// Creates a skill with all its files in one transaction. A taken name is
    /// `StoreError::Conflict { field: "name" }`; a path given twice, an unknown owner or share
    /// user, or a name outside 1-64 characters is `Invalid`. Nothing is written on any error.
    async fn create_skill(&self, new: &NewSkill) -> Result<Skill>;
    /// The skill with this id, shares included; no visibility check (callers apply
    /// `ars_domain::Caller`).
    async fn skill(&self, id: SkillId) -> Result<Option<Skill>>;
    /// The skill with this name, shares included.
    async fn skill_by_name(&self, name: &str) -> Result<Option<Skill>>;
    /// Skills matching `filter`, by name (byte order).
    async fn list_skills(&self, filter: SkillFilter) -> Result<Vec<Skill>>;
    /// Replaces a skill's content with a new version: manifest fields, version and every file
    /// (the old files are gone), `updated_at` set, in one transaction. The name never changes:
    /// a different `content.name` is `Invalid`. `NotFound` when the skill is gone; a path given
    /// twice is `Invalid`. On any error nothing changes.
    async fn replace_skill_content(&self, id: SkillId, content: &SkillContent) -> Result<Skill>;
    /// Replaces the skill's shares and sets `updated_at`; `NotFound` when the skill is gone, an
    /// unknown user `Invalid`.
    async fn update_skill_share(&self, id: SkillId, share: &ShareConfig) -> Result<Skill>;
    /// Deletes a skill with its shares and files; [`Deleted::NotFound`] when there was no such
    /// skill. Callers check `ars_domain::Caller::can_delete` first.
    async fn delete_skill(&self, id: SkillId) -> Result<Deleted>;
    /// The skill's files without their bytes, by path (byte order); empty for an unknown skill.
    async fn skill_files(&self, id: SkillId) -> Result<Vec<SkillFileInfo>>;
    /// One file's bytes; `None` when the skill or the path is not there.
    async fn skill_file(&self, id: SkillId, path: &str) -> Result<Option<Vec<u8>>>;
    /// Every file of the skill with its bytes, by path (byte order); empty for an unknown skill.
    async fn skill_contents(&self, id: SkillId) -> Result<Vec<SkillFile>>;
}
