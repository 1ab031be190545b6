//! The sandbox's virtual layout: where things are as the agent sees them, and how long a path
//! may be. A leaf module: `paths` (resolution) and `scope` (the caller's scope) both build on
//! it, and neither imports the other for these.

/// The user's workspace as the agent sees it.
pub const USER_DATA_ROOT: &str = "/home/gem/user-data";
/// The user's Skills projection (built-in and shared skills) as the agent sees it (read-only).
pub const SKILLS_ROOT: &str = "/home/gem/skills";
/// Where the user's personal Skills live, inside the workspace.
pub const PERSONAL_SKILLS_DIR: &str = "/home/gem/user-data/agents/skills";
/// The home directory of the isolated shell.
pub const HOME_DIR: &str = "/home/gem";
/// Longest accepted path, matching Linux `PATH_MAX`.
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted path component, matching Linux `NAME_MAX`.
pub const MAX_COMPONENT_BYTES: usize = 255;
