//! Skills on disk: the per-user projection at `/home/gem/skills` and the personal skill
//! folders under `/home/gem/user-data/agents/skills`.
//!
//! - `validate`: the rules for skill names, versions and file paths (server-controlled
//!   inputs, checked anyway).
//! - `tree`: writing, swapping in and removing a skill folder, all by directory handle, never
//!   following a symlink.
//! - `projection`: what the user sees at `/home/gem/skills` and its manifest.
//! - `personal`: installing and removing a skill folder in the user's workspace.
//!
//! **Invariant:** a reader sees a skill folder either as it was or as it is now, never half
//! written: each is built in a fresh temp dir and moved into place with one `renameat2`
//! (`RENAME_EXCHANGE` to replace, `RENAME_NOREPLACE` to add).

mod personal;
mod projection;
mod tree;
mod validate;

pub(crate) use personal::{install, remove};
pub(crate) use projection::{project, projected};
