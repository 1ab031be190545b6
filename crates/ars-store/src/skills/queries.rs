//! The statements of skills and their files, written once for both databases (`$N`
//! placeholders: see the crate docs).

use crate::shares::{Dialects, ShareTable, share_table, visible_to, with_shares};

/// The skill columns, in [`super::rows::SkillRow`] order; unqualified so they also serve
/// `RETURNING` clauses.
macro_rules! skill_columns {
    () => {
        "id, name, description, license, compatibility, metadata, allowed_tools, visibility, \
         owner_id, version, file_count, size_bytes, created_at, updated_at"
    };
}

/// `$13`: now, both timestamps.
pub(crate) const INSERT_SKILL: &str = "INSERT INTO skills \
     (id, name, description, license, compatibility, metadata, allowed_tools, visibility, \
      owner_id, version, file_count, size_bytes, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)";

/// A new version of skill `$1`, only while its name is `$2` (no row otherwise); `$11`: now.
pub(crate) const REPLACE_SKILL_CONTENT: &str = concat!(
    "UPDATE skills SET description = $3, license = $4, compatibility = $5, metadata = $6, \
     allowed_tools = $7, version = $8, file_count = $9, size_bytes = $10, updated_at = $11 \
     WHERE id = $1 AND name = $2 RETURNING ",
    skill_columns!()
);

/// `$1`: the skill; `$2`: visibility; `$3`: now. The share rows are replaced beside it.
pub(crate) const UPDATE_SKILL_VISIBILITY: &str = concat!(
    "UPDATE skills SET visibility = $2, updated_at = $3 WHERE id = $1 RETURNING ",
    skill_columns!()
);

pub(crate) const SKILL_NAME: &str = "SELECT name FROM skills WHERE id = $1";

pub(crate) const SKILL_BY_ID: Dialects = with_shares!(
    ("skills", "skill_shares", "skill_id"),
    concat!("SELECT ", skill_columns!()),
    " FROM skills WHERE id = $1"
);

pub(crate) const SKILL_BY_NAME: Dialects = with_shares!(
    ("skills", "skill_shares", "skill_id"),
    concat!("SELECT ", skill_columns!()),
    " FROM skills WHERE name = $1"
);

/// `$1`: the viewing user's id, or NULL for every skill. By name, in byte order in both
/// databases (the PostgreSQL column uses the "C" collation); names are unique. Each with its
/// shares.
pub(crate) const LIST_SKILLS: Dialects = with_shares!(
    ("skills", "skill_shares", "skill_id"),
    concat!("SELECT ", skill_columns!()),
    concat!(
        " FROM skills WHERE ",
        visible_to!("skills", "skill_shares", "skill_id", "$1"),
        " ORDER BY name"
    )
);

/// Files and shares go with the row (ON DELETE CASCADE), in the same statement.
pub(crate) const DELETE_SKILL: &str = "DELETE FROM skills WHERE id = $1";

/// The share rows of skills.
pub(crate) const SKILL_SHARES: ShareTable = share_table!("skill_shares", "skill_id");

pub(crate) const INSERT_SKILL_FILE: &str =
    "INSERT INTO skill_files (skill_id, path, content, size_bytes) VALUES ($1, $2, $3, $4)";

pub(crate) const DELETE_SKILL_FILES: &str = "DELETE FROM skill_files WHERE skill_id = $1";

/// Paths sort by byte order in both databases (the PostgreSQL column uses the "C" collation).
pub(crate) const SKILL_FILE_INFOS: &str =
    "SELECT path, size_bytes FROM skill_files WHERE skill_id = $1 ORDER BY path";

pub(crate) const SKILL_FILE: &str =
    "SELECT content FROM skill_files WHERE skill_id = $1 AND path = $2";

pub(crate) const SKILL_CONTENTS: &str =
    "SELECT path, content FROM skill_files WHERE skill_id = $1 ORDER BY path";
