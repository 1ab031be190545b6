//! The skills a user can see, from their three roots, and the projection that puts the shared
//! and built-in ones at `/home/gem/skills` for that user alone.
//!
//! - **Built-in** skills ship inside the binary ([`ars_skills::builtin_skills`]).
//! - **Shared** skills are store rows (files included) visible to the user under the sharing
//!   model ([`Caller::can_view`]).
//! - **Personal** skills are folders in the user's own workspace,
//!   `/home/gem/user-data/agents/skills/<name>/`, found by scanning it.
//!
//! On a name clash personal wins over shared, and shared over built-in. The projection holds
//! one folder per name: the shared skill where one shadows a built-in.

use std::collections::BTreeMap;
use std::sync::Arc;

use ars_domain::{Caller, Skill};
use ars_sandbox::{
    EntryKind, PERSONAL_SKILLS_DIR, ProjectedSkill, SKILLS_ROOT, Sandbox, SandboxError, Scope,
};
use ars_skills::{SkillBundle, SkillManifest, SkillSource, builtin_skills, parse_skill_md};
use ars_store::{SkillFilter, SkillStore, StoreError};

/// Largest SKILL.md read from a personal folder.
const MAX_SKILL_MD_BYTES: u64 = 256 * 1024;

/// Why the catalog or the projection could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SkillsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// Where a catalog entry's files are.
#[derive(Clone, Debug)]
pub enum SkillOrigin {
    /// Inside the binary.
    Builtin(SkillBundle),
    /// A store row.
    Shared(Skill),
    /// A folder in the user's workspace, with its parsed SKILL.md.
    Personal(SkillManifest),
}

/// One skill a user can see.
#[derive(Clone, Debug)]
pub struct CatalogEntry {
    pub name: String,
    pub description: String,
    pub source: SkillSource,
    /// The virtual path of its SKILL.md, as the agent's file tools see it.
    pub path: String,
    /// Another entry with the same name wins (personal > shared > built-in).
    pub shadowed: bool,
    pub origin: SkillOrigin,
}

impl CatalogEntry {
    /// The id the API names it by: the row's UUID, `builtin:<name>` or `personal:<name>`.
    pub fn id(&self) -> String {
        match &self.origin {
            SkillOrigin::Builtin(_) => format!("builtin:{}", self.name),
            SkillOrigin::Shared(skill) => skill.id.to_string(),
            SkillOrigin::Personal(_) => format!("personal:{}", self.name),
        }
    }
}

/// Everything one user can see, and the personal folders that could not be read.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Sorted by name, then source (personal, shared, built-in).
    pub entries: Vec<CatalogEntry>,
    /// Personal folders skipped: (virtual path, why).
    pub skipped: Vec<(String, String)>,
}

impl Catalog {
    /// The entries that win their name, sorted by name.
    pub fn winners(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.entries.iter().filter(|e| !e.shadowed)
    }
}

/// The three roots of skills, for the runtime's plug-in and the API alike.
#[derive(Clone)]
pub struct SkillLibrary {
    store: Arc<dyn SkillStore>,
    sandbox: Arc<dyn Sandbox>,
    builtin: Arc<Vec<SkillBundle>>,
}

impl SkillLibrary {
    pub fn new(store: Arc<dyn SkillStore>, sandbox: Arc<dyn Sandbox>) -> Self {
        Self {
            store,
            sandbox,
            builtin: Arc::new(builtin_skills()),
        }
    }

    pub fn builtin(&self) -> &[SkillBundle] {
        &self.builtin
    }

    pub fn sandbox(&self) -> &Arc<dyn Sandbox> {
        &self.sandbox
    }

    /// The shared skills `caller` may see.
    pub async fn shared(&self, caller: &Caller) -> Result<Vec<Skill>, StoreError> {
        let filter = SkillFilter {
            visible_to: (!caller.is_admin()).then_some(caller.id),
        };
        Ok(self
            .store
            .list_skills(filter)
            .await?
            .into_iter()
            .filter(|s| caller.can_view(s))
            .collect())
    }

    /// Every skill `caller` can see. `scope` is one of the caller's scopes (prepared), through
    /// which the personal folder is scanned.
    pub async fn catalog(&self, caller: &Caller, scope: &Scope) -> Result<Catalog, SkillsError> {
        let shared = self.shared(caller).await?;
        self.catalog_of(shared, scope).await
    }

    /// At a run's start: refreshes `caller`'s projection and answers their catalog, listing
    /// the shared skills once for both.
    pub async fn refresh(&self, caller: &Caller, scope: &Scope) -> Result<Catalog, SkillsError> {
        let shared = self.shared(caller).await?;
        self.project_of(caller, &shared).await?;
        self.catalog_of(shared, scope).await
    }

    async fn catalog_of(&self, shared: Vec<Skill>, scope: &Scope) -> Result<Catalog, SkillsError> {
        let mut entries = Vec::new();
        let (personal, skipped) = self.personal(scope).await?;
        for (name, manifest) in personal {
            entries.push(CatalogEntry {
                description: manifest.description.clone(),
                source: SkillSource::Personal,
                path: format!("{PERSONAL_SKILLS_DIR}/{name}/SKILL.md"),
                shadowed: false,
                origin: SkillOrigin::Personal(manifest),
                name,
            });
        }
        for skill in shared {
            entries.push(CatalogEntry {
                name: skill.name.clone(),
                description: skill.description.clone(),
                source: SkillSource::Shared,
                path: format!("{SKILLS_ROOT}/{}/SKILL.md", skill.name),
                shadowed: false,
                origin: SkillOrigin::Shared(skill),
            });
        }
        for bundle in self.builtin.iter() {
            entries.push(CatalogEntry {
                name: bundle.name().to_string(),
                description: bundle.manifest.description.clone(),
                source: SkillSource::Builtin,
                path: format!("{SKILLS_ROOT}/{}/SKILL.md", bundle.name()),
                shadowed: false,
                origin: SkillOrigin::Builtin(bundle.clone()),
            });
        }
        entries.sort_by(|a, b| (&a.name, rank(a.source)).cmp(&(&b.name, rank(b.source))));
        let mut seen = std::collections::HashSet::new();
        for entry in &mut entries {
            entry.shadowed = !seen.insert(entry.name.clone());
        }
        // A built-in shadowed only by a personal skill keeps its projected folder, but the
        // path a reader should use is the winner's: that is what `shadowed` tells.
        Ok(Catalog { entries, skipped })
    }

    /// The user's personal skill folders: the readable ones by name, and the skipped ones.
    async fn personal(
        &self,
        scope: &Scope,
    ) -> Result<(Vec<(String, SkillManifest)>, Vec<(String, String)>), SkillsError> {
        let listing = match self.sandbox.list(scope, PERSONAL_SKILLS_DIR).await {
            Ok(listing) => listing,
            Err(SandboxError::NotFound { .. }) => return Ok((Vec::new(), Vec::new())),
            Err(e) => return Err(e.into()),
        };
        let mut found = Vec::new();
        let mut skipped = Vec::new();
        for entry in listing.entries {
            if !matches!(entry.kind, EntryKind::Directory | EntryKind::Symlink) {
                continue;
            }
            let folder = format!("{PERSONAL_SKILLS_DIR}/{}", entry.name);
            match self.personal_manifest(scope, &entry.name, &folder).await {
                Ok(manifest) => found.push((entry.name, manifest)),
                Err(reason) => skipped.push((folder, reason)),
            }
        }
        Ok((found, skipped))
    }

    async fn personal_manifest(
        &self,
        scope: &Scope,
        folder_name: &str,
        folder: &str,
    ) -> Result<SkillManifest, String> {
        let bytes = self
            .sandbox
            .read_bytes(scope, &format!("{folder}/SKILL.md"), MAX_SKILL_MD_BYTES)
            .await
            .map_err(|e| match e {
                SandboxError::NotFound { .. } => "no SKILL.md".to_string(),
                other => other.to_string(),
            })?;
        let text = String::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8".to_string())?;
        let manifest = parse_skill_md(&text).map_err(|e| e.to_string())?;
        if manifest.name != folder_name {
            return Err(format!(
                "name `{}` in SKILL.md differs from its folder `{folder_name}`",
                manifest.name
            ));
        }
        Ok(manifest)
    }

    /// Makes `caller`'s projection at `/home/gem/skills` hold exactly the built-in and shared
    /// skills they can see (one per name, shared over built-in), loading files only for what
    /// changed.
    pub async fn project(&self, caller: &Caller) -> Result<(), SkillsError> {
        let shared = self.shared(caller).await?;
        self.project_of(caller, &shared).await
    }

    async fn project_of(&self, caller: &Caller, shared: &[Skill]) -> Result<(), SkillsError> {
        let mut wanted: BTreeMap<String, Wanted> = BTreeMap::new();
        for bundle in self.builtin.iter() {
            wanted.insert(bundle.name().to_string(), Wanted::Builtin(bundle));
        }
        for skill in shared {
            wanted.insert(skill.name.clone(), Wanted::Shared(skill));
        }
        let current = self.sandbox.projected_skills(caller.id).await?;
        // Every run projects; most find the projection as it should be (only the server writes
        // it, and a projection cut off half way leaves a manifest that names less than it).
        if current.len() == wanted.len()
            && wanted
                .iter()
                .all(|(name, want)| current.get(name) == Some(&want.version()))
        {
            return Ok(());
        }
        let mut projection = Vec::with_capacity(wanted.len());
        for (name, want) in wanted {
            let version = want.version();
            let files = if current.get(&name) == Some(&version) {
                None
            } else {
                Some(match &want {
                    Wanted::Builtin(bundle) => bundle
                        .files
                        .iter()
                        .map(|(path, bytes)| (path.clone(), bytes.clone()))
                        .collect(),
                    Wanted::Shared(skill) => self
                        .store
                        .skill_contents(skill.id)
                        .await?
                        .into_iter()
                        .map(|f| (f.path, f.content))
                        .collect(),
                })
            };
            projection.push(ProjectedSkill {
                name,
                version,
                files,
            });
        }
        self.sandbox.project_skills(caller.id, projection).await?;
        Ok(())
    }
}

/// What the projection should hold under one name.
enum Wanted<'a> {
    Builtin(&'a SkillBundle),
    Shared(&'a Skill),
}

impl Wanted<'_> {
    /// Distinct per source, so a shared skill replacing a built-in of the same bytes is
    /// still swapped in.
    fn version(&self) -> String {
        match self {
            Self::Builtin(bundle) => format!("builtin-{}", bundle.version()),
            Self::Shared(skill) => format!("shared-{}-{}", skill.id, skill.version),
        }
    }
}

fn rank(source: SkillSource) -> u8 {
    match source {
        SkillSource::Personal => 0,
        SkillSource::Shared => 1,
        SkillSource::Builtin => 2,
    }
}
