//! Shared skills (the Agent Skills format): a `SKILL.md` manifest plus optional files
//! (`scripts/`, `references/`, `assets/`), stored whole so every instance sees the same skill.
//!
//! Skills follow the agents' sharing model ([`ShareConfig`], through [`crate::Shared`]). The
//! manifest is parsed elsewhere; these types carry the plain values an upload yields.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ShareConfig, SkillId, UserId};

/// A stored skill as served: its manifest fields, its sharing and a summary of its files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Skill {
    pub id: SkillId,
    /// Unique across the server, 1-64 characters; it never changes once created.
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub allowed_tools: Vec<String>,
    /// `None` when the owner's account was deleted: admins and managers still manage it.
    pub owner_id: Option<UserId>,
    pub share_config: ShareConfig,
    /// A hash of the content, so clients and runtimes can tell versions apart.
    pub version: String,
    pub file_count: u32,
    /// The sum of the files' sizes.
    pub size_bytes: u64,
    pub created_at: DateTime<Utc>,
    /// Bumped by every content or share change.
    pub updated_at: DateTime<Utc>,
}

/// One version of a skill: the manifest's fields and every file, `SKILL.md` included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillContent {
    pub name: String,
    pub description: String,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: BTreeMap<String, String>,
    pub allowed_tools: Vec<String>,
    /// The content hash the uploader computed.
    pub version: String,
    /// Each path at most once.
    pub files: Vec<SkillFile>,
}

impl SkillContent {
    /// The sum of the files' sizes.
    pub fn size_bytes(&self) -> u64 {
        self.files.iter().map(SkillFile::size_bytes).sum()
    }
}

/// A file of a skill: its path inside the skill's folder (`/`-separated) and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillFile {
    pub path: String,
    pub content: Vec<u8>,
}

impl SkillFile {
    pub fn size_bytes(&self) -> u64 {
        // A `usize` always fits a `u64` on the platforms Rust supports.
        self.content.len() as u64
    }

    pub fn info(&self) -> SkillFileInfo {
        SkillFileInfo {
            path: self.path.clone(),
            size_bytes: self.size_bytes(),
        }
    }
}

/// A file of a skill without its bytes, for listings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SkillFileInfo {
    pub path: String,
    pub size_bytes: u64,
}

/// A skill to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSkill {
    pub owner_id: Option<UserId>,
    pub share_config: ShareConfig,
    pub content: SkillContent,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Caller, Role, Visibility};

    fn caller(role: Role) -> Caller {
        Caller {
            id: UserId::new(),
            role,
        }
    }

    fn skill(owner: UserId, share_config: ShareConfig) -> Skill {
        let now = crate::time::now();
        Skill {
            id: SkillId::new(),
            name: "pdf".into(),
            description: "Reads PDFs.".into(),
            license: None,
            compatibility: None,
            metadata: BTreeMap::new(),
            allowed_tools: Vec::new(),
            owner_id: Some(owner),
            share_config,
            version: "v1".into(),
            file_count: 1,
            size_bytes: 10,
            created_at: now,
            updated_at: now,
        }
    }

    /// Who asks, relative to the skill.
    #[derive(Clone, Copy, Debug)]
    enum Who {
        Owner,
        Admin,
        Manager,
        Listed,
        Stranger,
    }

    #[test]
    fn skill_sharing_matrix() {
        use Visibility::{Private, Public, Users};
        use Who::*;
        let (owner, admin) = (caller(Role::User), caller(Role::Admin));
        let (manager, listed, stranger) =
            (caller(Role::User), caller(Role::User), caller(Role::User));
        // (who, visibility, can_view, can_manage, can_delete)
        let cells = [
            (Owner, Private, true, true, true),
            (Owner, Users, true, true, true),
            (Owner, Public, true, true, true),
            (Admin, Private, true, true, true),
            (Admin, Users, true, true, true),
            (Admin, Public, true, true, true),
            (Manager, Private, true, true, true),
            (Manager, Users, true, true, true),
            (Manager, Public, true, true, true),
            (Listed, Private, false, false, false),
            (Listed, Users, true, false, false),
            (Listed, Public, true, false, false),
            (Stranger, Private, false, false, false),
            (Stranger, Users, false, false, false),
            (Stranger, Public, true, false, false),
        ];
        for (who, visibility, view, manage, delete) in cells {
            let share = ShareConfig {
                visibility,
                user_ids: vec![listed.id],
                manager_ids: vec![manager.id],
            };
            let skill = skill(owner.id, share);
            let asking = match who {
                Owner => owner,
                Admin => admin,
                Manager => manager,
                Listed => listed,
                Stranger => stranger,
            };
            let got = (
                asking.can_view(&skill),
                asking.can_manage(&skill),
                asking.can_delete(&skill),
            );
            assert_eq!(got, (view, manage, delete), "{who:?} × {visibility:?}");
        }
    }

    #[test]
    fn an_ownerless_skill_is_managed_by_admins_and_managers_only() {
        let manager = caller(Role::User);
        let mut orphan = skill(UserId::new(), ShareConfig::default());
        orphan.owner_id = None;
        orphan.share_config.manager_ids = vec![manager.id];
        assert!(manager.can_delete(&orphan) && caller(Role::Admin).can_delete(&orphan));
        assert!(!caller(Role::User).can_view(&orphan));
    }

    #[test]
    fn content_size_is_the_sum_of_its_files() {
        let file = |path: &str, content: &[u8]| SkillFile {
            path: path.into(),
            content: content.to_vec(),
        };
        let content = SkillContent {
            name: "pdf".into(),
            description: String::new(),
            license: None,
            compatibility: None,
            metadata: BTreeMap::new(),
            allowed_tools: Vec::new(),
            version: "v1".into(),
            files: vec![file("SKILL.md", b"# PDF"), file("scripts/a.py", &[0, 159])],
        };
        assert_eq!(content.size_bytes(), 7);
        assert_eq!(content.files[1].info().size_bytes, 2);
    }
}
