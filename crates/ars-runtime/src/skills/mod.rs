//! Skills (SPEC §2, §6): the Skills plug-in and the library it reads.
//!
//! For each run, [`SkillsPlugin`] refreshes the user's projection of shared and built-in
//! skills at `/home/gem/skills` (the same folder for a parent and its subagents), scans the
//! personal folder, selects the skills the agent's `context.skills` names, and adds one
//! compact block to the system prompt: name, description and SKILL.md path of each — never a
//! body (progressive disclosure). The model reads a skill with `read_file` and runs its scripts
//! with `execute`, so it needs no tool of its own.
//!
//! A plug-in: the server assembly registers it; the runtime core does not import this module.

mod library;

use std::sync::Arc;

use async_trait::async_trait;

use ars_events::EventKind;
use ars_skills::{ListedSkill, prompt_block};

use crate::middleware::Middleware;
use crate::plugin::{MiddlewareFactory, RunSetup};

pub use library::{Catalog, CatalogEntry, SkillLibrary, SkillOrigin, SkillsError};

/// The selection that means "every skill the user can see".
pub const ALL_SKILLS: &str = "*";
/// Default character budget of the prompt's skills block.
pub const DEFAULT_PROMPT_BUDGET: usize = 6_000;

impl Catalog {
    /// The skills a run with `configured` (its resolved `context.skills`) offers: `["*"]`
    /// every winner, a list exactly the winners it names (unknown or invisible names are
    /// dropped — returned second — never widened), `[]` none.
    pub fn select(&self, configured: &[String]) -> (Vec<ListedSkill>, Vec<String>) {
        let listed = |e: &CatalogEntry| ListedSkill {
            name: e.name.clone(),
            description: e.description.clone(),
            path: e.path.clone(),
            source: e.source,
        };
        if configured.iter().any(|n| n == ALL_SKILLS) {
            return (self.winners().map(listed).collect(), Vec::new());
        }
        let mut offered = Vec::new();
        let mut dropped = Vec::new();
        for name in configured {
            match self.winners().find(|e| &e.name == name) {
                Some(entry) => offered.push(listed(entry)),
                None => dropped.push(name.clone()),
            }
        }
        offered.sort_by(|a, b| a.name.cmp(&b.name));
        (offered, dropped)
    }
}

/// Mounts the skills block on every run whose context selects any skill.
pub struct SkillsPlugin {
    library: SkillLibrary,
    budget_chars: usize,
}

impl SkillsPlugin {
    pub fn new(library: SkillLibrary) -> Self {
        Self {
            library,
            budget_chars: DEFAULT_PROMPT_BUDGET,
        }
    }

    /// Overrides the prompt block's character budget.
    pub fn with_budget(mut self, budget_chars: usize) -> Self {
        self.budget_chars = budget_chars;
        self
    }
}

#[async_trait]
impl MiddlewareFactory for SkillsPlugin {
    async fn build(&self, setup: &RunSetup<'_>) -> Option<Arc<dyn Middleware>> {
        let warn = |message: String| async move {
            tracing::warn!(run_id = %setup.run.id, "{message}");
            setup.events.emit(EventKind::Error { message }).await;
        };
        // Every run refreshes the projection, whatever it selects, so a parent and its
        // subagents always read the same files at the same paths.
        let configured = &setup.context.skills;
        if configured.is_empty() {
            if let Err(e) = self.library.project(setup.caller).await {
                warn(format!("cannot project the shared skills: {e}")).await;
            }
            return None;
        }
        let catalog = match self.library.refresh(setup.caller, setup.scope).await {
            Ok(catalog) => catalog,
            Err(e) => {
                warn(format!("cannot prepare the skills: {e}")).await;
                return None;
            }
        };
        let (offered, dropped) = catalog.select(configured);
        if !dropped.is_empty() {
            // One line per run, however long the list.
            let shown: Vec<&str> = dropped.iter().take(5).map(String::as_str).collect();
            tracing::warn!(
                agent = %setup.agent.slug,
                count = dropped.len(),
                skills = ?shown,
                "configured skills that are not skills this user can see were dropped"
            );
        }
        for (folder, reason) in &catalog.skipped {
            warn(format!("skipped the personal skill {folder}: {reason}")).await;
        }
        let block = prompt_block(&offered, &catalog.skipped, self.budget_chars);
        if block.is_empty() {
            return None;
        }
        Some(Arc::new(SkillsMiddleware { block }))
    }
}

struct SkillsMiddleware {
    block: String,
}

impl Middleware for SkillsMiddleware {
    fn system_prompt(&self, prompt: &mut String) {
        prompt.push_str(&self.block);
    }
}
