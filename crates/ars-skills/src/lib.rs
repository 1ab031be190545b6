//! Agent Skills for ARS: folders of instructions (`SKILL.md`) and scripts that an agent reads
//! when a task calls for them.
//!
//! This crate is pure logic: no database, no runtime, no HTTP. It parses and validates
//! SKILL.md ([`format`]), reads uploaded archives safely ([`archive`]), ships the built-in
//! skills ([`builtin`]) and renders the short listing that goes into an agent's system prompt
//! ([`listing`]).

pub mod archive;
pub mod builtin;
pub mod error;
pub mod format;
pub mod listing;

pub use archive::{SkillBundle, UploadLimits, bundle_from_files, read_skill_md, read_zip};
pub use builtin::builtin_skills;
pub use error::SkillError;
pub use format::{SkillManifest, parse_skill_md, validate_name};
pub use listing::{ListedSkill, SkillSource, prompt_block, resolve_precedence};
