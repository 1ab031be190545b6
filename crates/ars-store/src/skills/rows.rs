//! Rows of `skills` and `skill_files`, and their conversion from and into domain types.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{Skill, SkillContent, SkillFile, SkillFileInfo, SkillId};

use crate::rows::{corrupt, parse_user_id};
use crate::shares::{ShareRow, SharedRow, share_config};
use crate::{Result, StoreError};

#[derive(sqlx::FromRow)]
pub(crate) struct SkillRow {
    id: String,
    name: String,
    description: String,
    license: Option<String>,
    compatibility: Option<String>,
    metadata: Json<BTreeMap<String, String>>,
    allowed_tools: Json<Vec<String>>,
    visibility: String,
    owner_id: Option<String>,
    version: String,
    file_count: i64,
    size_bytes: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl SharedRow for SkillRow {
    type Resource = Skill;

    fn id(&self) -> &str {
        &self.id
    }

    fn into_resource(self, shares: Vec<ShareRow>) -> Result<Skill> {
        Ok(Skill {
            id: SkillId::parse(&self.id).ok_or_else(|| corrupt("skill id", &self.id))?,
            share_config: share_config("skills.visibility", &self.visibility, shares)?,
            name: self.name,
            description: self.description,
            license: self.license,
            compatibility: self.compatibility,
            metadata: self.metadata.0,
            allowed_tools: self.allowed_tools.0,
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            version: self.version,
            file_count: u32::try_from(self.file_count)
                .map_err(|_| corrupt("skills.file_count", &self.file_count.to_string()))?,
            size_bytes: u64::try_from(self.size_bytes)
                .map_err(|_| corrupt("skills.size_bytes", &self.size_bytes.to_string()))?,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// `skills.file_count` and `skills.size_bytes` for `content`, as the databases store them
/// (`BIGINT`); a skill too large for the domain's types is refused, not wrapped. A path given
/// twice is refused here too, naming the path, rather than by the primary key halfway through
/// the inserts.
pub(crate) fn stored_skill_totals(content: &SkillContent) -> Result<(i64, i64)> {
    let mut paths = std::collections::HashSet::new();
    if let Some(twice) = content
        .files
        .iter()
        .find(|f| !paths.insert(f.path.as_str()))
    {
        return Err(StoreError::Invalid(format!(
            "file `{}` is given more than once",
            twice.path
        )));
    }
    let count = u32::try_from(content.files.len())
        .map_err(|_| StoreError::Invalid(format!("{} files are too many", content.files.len())))?;
    let size = i64::try_from(content.size_bytes())
        .map_err(|_| StoreError::Invalid("the skill's files are too large".into()))?;
    Ok((i64::from(count), size))
}

/// A file's size as the databases store it.
pub(crate) fn stored_file_size(file: &SkillFile) -> Result<i64> {
    i64::try_from(file.size_bytes())
        .map_err(|_| StoreError::Invalid(format!("file `{}` is too large", file.path)))
}

#[derive(sqlx::FromRow)]
pub(crate) struct SkillFileInfoRow {
    path: String,
    size_bytes: i64,
}

impl SkillFileInfoRow {
    pub(crate) fn into_info(self) -> Result<SkillFileInfo> {
        Ok(SkillFileInfo {
            size_bytes: u64::try_from(self.size_bytes)
                .map_err(|_| corrupt("skill_files.size_bytes", &self.size_bytes.to_string()))?,
            path: self.path,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct SkillFileRow {
    path: String,
    content: Vec<u8>,
}

impl SkillFileRow {
    pub(crate) fn into_file(self) -> SkillFile {
        SkillFile {
            path: self.path,
            content: self.content,
        }
    }
}
