//! The statements of agents, written once for both databases (`$N` placeholders:
//! see the crate docs).

use crate::shares::{Dialects, ShareTable, share_table, visible_to, with_shares};

/// The agent columns, in [`super::rows::AgentRow`] order; unqualified so they also serve
/// `RETURNING` clauses.
macro_rules! agent_columns {
    () => {
        "id, slug, name, description, backend_id, is_subagent, config_json, visibility, \
         owner_id, is_default, is_builtin, created_at, updated_at"
    };
}

/// The agents a list returns. `$1`: the viewing user's id, or NULL for every agent; `$2`:
/// include subagents.
macro_rules! listed_agents_filter {
    () => {
        concat!(
            "($2 OR NOT is_subagent) AND ",
            visible_to!("agents", "agent_shares", "agent_id", "$1")
        )
    };
}

/// The subagents a list returns. `$1`: the viewing user's id, or NULL for every subagent.
macro_rules! listed_subagents_filter {
    () => {
        concat!(
            "is_subagent AND ",
            visible_to!("agents", "agent_shares", "agent_id", "$1")
        )
    };
}

pub(crate) const INSERT_AGENT: &str = "INSERT INTO agents \
     (id, slug, name, description, backend_id, is_subagent, config_json, visibility, owner_id, \
      is_default, is_builtin, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, FALSE, $11, $11)";

/// Replaces every writable column; `is_builtin`, `owner_id` and `created_at` stay as stored.
pub(crate) const UPDATE_AGENT: &str = concat!(
    "UPDATE agents SET slug = $2, name = $3, description = $4, backend_id = $5, \
     is_subagent = $6, config_json = $7, visibility = $8, is_default = $9, updated_at = $10 \
     WHERE id = $1 RETURNING ",
    agent_columns!()
);

pub(crate) const AGENT_BY_ID: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!("SELECT ", agent_columns!()),
    " FROM agents WHERE id = $1"
);

/// [`AGENT_BY_ID`] with the model settings' version (column `settings_version`): what a run
/// starts from, in one round trip.
pub(crate) const AGENT_FOR_RUN: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!(
        "SELECT ",
        agent_columns!(),
        ", (SELECT version FROM model_settings WHERE id = 1) AS settings_version"
    ),
    " FROM agents WHERE id = $1"
);

pub(crate) const AGENT_BY_SLUG: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!("SELECT ", agent_columns!()),
    " FROM agents WHERE slug = $1"
);

pub(crate) const DEFAULT_AGENT: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!("SELECT ", agent_columns!()),
    " FROM agents WHERE is_default"
);

/// Built-in rows first, then by name and id. Names sort by byte order in both databases (the
/// PostgreSQL column uses the "C" collation), so both stores list in the same order. Each
/// with its shares, in the same statement.
pub(crate) const LIST_AGENTS: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!("SELECT ", agent_columns!()),
    concat!(
        " FROM agents WHERE ",
        listed_agents_filter!(),
        " ORDER BY is_builtin DESC, name, id"
    )
);

/// [`LIST_AGENTS`] of subagents alone (what a run may delegate to), in the same order.
pub(crate) const LIST_SUBAGENTS: Dialects = with_shares!(
    ("agents", "agent_shares", "agent_id"),
    concat!("SELECT ", agent_columns!()),
    concat!(
        " FROM agents WHERE ",
        listed_subagents_filter!(),
        " ORDER BY is_builtin DESC, name, id"
    )
);

pub(crate) const DELETE_AGENT: &str = "DELETE FROM agents WHERE id = $1";

/// `$1`: the agent that keeps (or gets) the default; `$2`: now.
pub(crate) const CLEAR_OTHER_DEFAULTS: &str =
    "UPDATE agents SET is_default = FALSE, updated_at = $2 WHERE is_default AND id <> $1";

pub(crate) const SET_DEFAULT: &str = concat!(
    "UPDATE agents SET is_default = TRUE, updated_at = $2 WHERE id = $1 RETURNING ",
    agent_columns!()
);

/// The share rows of agents.
pub(crate) const AGENT_SHARES: ShareTable = share_table!("agent_shares", "agent_id");
