//! Row shapes as both databases return them, and their conversion into domain types.
//!
//! The `FromRow` derives are generic over the database, so one struct decodes a SQLite row and a
//! PostgreSQL row alike. Text columns (ids, roles, enums) are parsed here; anything that does
//! not parse is [`StoreError::Corrupt`], never a panic.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use ars_domain::{
    Agent, AgentConfig, AgentId, ApiToken, Backend, Delivery, Message, MessageId, MessageNotice,
    MessageRole, Role, Run, RunErrorCode, RunId, RunLineage, RunStatus, ShareConfig, Skill,
    SkillContent, SkillFile, SkillFileInfo, SkillId, Thread, ThreadId, ThreadLineage, TokenId,
    ToolCallRecord, Usage, User, UserId, Visibility,
};

use crate::{Result, StoreError};

/// The share row role (`agent_shares.role`, `skill_shares.role`) of a `share_config.user_ids`
/// entry.
pub(crate) const SHARE_USER: &str = "user";
/// The share row role of a `share_config.manager_ids` entry.
pub(crate) const SHARE_MANAGER: &str = "manager";

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    username: String,
    role: String,
    disabled: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl UserRow {
    pub(crate) fn into_user(self) -> Result<User> {
        Ok(User {
            id: parse_user_id(&self.id)?,
            username: self.username,
            role: Role::parse(&self.role).ok_or_else(|| corrupt("users.role", &self.role))?,
            disabled: self.disabled,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// A user with the password hash, for login.
#[derive(sqlx::FromRow)]
pub(crate) struct CredentialsRow {
    #[sqlx(flatten)]
    pub(crate) user: UserRow,
    pub(crate) password_hash: String,
}

/// A token's owner and the token.
#[derive(sqlx::FromRow)]
pub(crate) struct TokenUserRow {
    #[sqlx(flatten)]
    user: UserRow,
    token_id: String,
    token_name: String,
    token_created_at: DateTime<Utc>,
    token_expires_at: Option<DateTime<Utc>>,
    token_last_used_at: Option<DateTime<Utc>>,
}

impl TokenUserRow {
    pub(crate) fn into_pair(self) -> Result<(User, ApiToken)> {
        let user = self.user.into_user()?;
        let token = ApiToken {
            id: parse_token_id(&self.token_id)?,
            user_id: user.id,
            name: self.token_name,
            created_at: self.token_created_at,
            expires_at: self.token_expires_at,
            last_used_at: self.token_last_used_at,
        };
        Ok((user, token))
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct TokenRow {
    id: String,
    user_id: String,
    name: String,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl TokenRow {
    pub(crate) fn into_token(self) -> Result<ApiToken> {
        Ok(ApiToken {
            id: parse_token_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            name: self.name,
            created_at: self.created_at,
            expires_at: self.expires_at,
            last_used_at: self.last_used_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct AgentRow {
    id: String,
    slug: String,
    name: String,
    description: String,
    backend_id: String,
    is_subagent: bool,
    config_json: Json<AgentConfig>,
    visibility: String,
    owner_id: Option<String>,
    is_default: bool,
    is_builtin: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A row of `agent_shares` or `skill_shares`; `resource_id` is the agent's or skill's id.
#[derive(sqlx::FromRow)]
pub(crate) struct ShareRow {
    resource_id: String,
    user_id: String,
    role: String,
}

/// The share config of a resource stored with `visibility` (from column `what`) and exactly
/// its share rows `shares` (in any order).
pub(crate) fn share_config(
    what: &str,
    visibility: &str,
    shares: Vec<ShareRow>,
) -> Result<ShareConfig> {
    let mut share_config = ShareConfig {
        visibility: Visibility::parse(visibility).ok_or_else(|| corrupt(what, visibility))?,
        user_ids: Vec::new(),
        manager_ids: Vec::new(),
    };
    for share in shares {
        let user = parse_user_id(&share.user_id)?;
        match share.role.as_str() {
            SHARE_USER => share_config.user_ids.push(user),
            SHARE_MANAGER => share_config.manager_ids.push(user),
            other => return Err(corrupt("share role", other)),
        }
    }
    Ok(share_config.normalized())
}

/// Share rows grouped by the id of the resource they belong to.
pub(crate) fn shares_by_resource(shares: Vec<ShareRow>) -> HashMap<String, Vec<ShareRow>> {
    let mut by_resource: HashMap<String, Vec<ShareRow>> = HashMap::new();
    for share in shares {
        by_resource
            .entry(share.resource_id.clone())
            .or_default()
            .push(share);
    }
    by_resource
}

impl AgentRow {
    /// The stored id text, to look up this agent's shares.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The agent, with `shares` being exactly this agent's share rows (in any order).
    pub(crate) fn into_agent(self, shares: Vec<ShareRow>) -> Result<Agent> {
        let share_config = share_config("agents.visibility", &self.visibility, shares)?;
        Ok(Agent {
            id: parse_agent_id(&self.id)?,
            slug: self.slug,
            name: self.name,
            description: self.description,
            backend_id: Backend::parse(&self.backend_id)
                .ok_or_else(|| corrupt("agents.backend_id", &self.backend_id))?,
            is_subagent: self.is_subagent,
            config_json: self.config_json.0,
            share_config,
            owner_id: self.owner_id.as_deref().map(parse_user_id).transpose()?,
            is_default: self.is_default,
            is_builtin: self.is_builtin,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// Joins agent rows with the share rows of all of them, keeping the agents' order.
pub(crate) fn assemble_agents(rows: Vec<AgentRow>, shares: Vec<ShareRow>) -> Result<Vec<Agent>> {
    let mut by_agent = shares_by_resource(shares);
    rows.into_iter()
        .map(|row| {
            let shares = by_agent.remove(&row.id).unwrap_or_default();
            row.into_agent(shares)
        })
        .collect()
}

/// The share rows to write for `share`: one per listed user and role, without duplicates.
pub(crate) fn share_rows(share: &ShareConfig) -> Vec<(UserId, &'static str)> {
    let share = share.clone().normalized();
    let users = share.user_ids.into_iter().map(|id| (id, SHARE_USER));
    let managers = share.manager_ids.into_iter().map(|id| (id, SHARE_MANAGER));
    users.chain(managers).collect()
}

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

impl SkillRow {
    /// The stored id text, to look up this skill's shares.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The skill, with `shares` being exactly this skill's share rows (in any order).
    pub(crate) fn into_skill(self, shares: Vec<ShareRow>) -> Result<Skill> {
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

/// Joins skill rows with the share rows of all of them, keeping the skills' order.
pub(crate) fn assemble_skills(rows: Vec<SkillRow>, shares: Vec<ShareRow>) -> Result<Vec<Skill>> {
    let mut by_skill = shares_by_resource(shares);
    rows.into_iter()
        .map(|row| {
            let shares = by_skill.remove(&row.id).unwrap_or_default();
            row.into_skill(shares)
        })
        .collect()
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

#[derive(sqlx::FromRow)]
pub(crate) struct ThreadRow {
    id: String,
    user_id: String,
    agent_id: String,
    title: String,
    parent_thread_id: Option<String>,
    subagent_slug: Option<String>,
    runtime_scope_id: String,
    workdir_path: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ThreadRow {
    pub(crate) fn into_thread(self) -> Result<Thread> {
        Ok(Thread {
            id: parse_thread_id(&self.id)?,
            user_id: parse_user_id(&self.user_id)?,
            agent_id: parse_agent_id(&self.agent_id)?,
            title: self.title,
            lineage: match (self.parent_thread_id, self.subagent_slug) {
                (Some(parent), Some(subagent_slug)) => Some(ThreadLineage {
                    parent_thread_id: parse_thread_id(&parent)?,
                    subagent_slug,
                }),
                (None, None) => None,
                // The table's `CHECK` sets both or neither.
                (Some(parent), None) => return Err(corrupt("threads.subagent_slug", &parent)),
                (None, Some(slug)) => return Err(corrupt("threads.parent_thread_id", &slug)),
            },
            runtime_scope_id: self.runtime_scope_id,
            workdir_path: self.workdir_path,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct MessageRow {
    id: String,
    thread_id: String,
    run_id: Option<String>,
    seq: i64,
    role: String,
    content: String,
    tool_calls: Json<Vec<ToolCallRecord>>,
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    is_error: bool,
    notice: Option<Json<MessageNotice>>,
    created_at: DateTime<Utc>,
    replaced_by_run_id: Option<String>,
}

impl MessageRow {
    pub(crate) fn into_message(self) -> Result<Message> {
        Ok(Message {
            id: MessageId::parse(&self.id).ok_or_else(|| corrupt("message id", &self.id))?,
            thread_id: parse_thread_id(&self.thread_id)?,
            run_id: self.run_id.as_deref().map(parse_run_id).transpose()?,
            seq: self.seq,
            role: MessageRole::parse(&self.role)
                .ok_or_else(|| corrupt("messages.role", &self.role))?,
            content: self.content,
            tool_calls: self.tool_calls.0,
            tool_call_id: self.tool_call_id,
            tool_name: self.tool_name,
            is_error: self.is_error,
            notice: self.notice.map(|n| n.0),
            created_at: self.created_at,
            replaced_by_run_id: self
                .replaced_by_run_id
                .as_deref()
                .map(parse_run_id)
                .transpose()?,
        })
    }
}

#[derive(sqlx::FromRow)]
pub(crate) struct RunRow {
    id: String,
    thread_id: String,
    agent_id: String,
    user_id: String,
    status: String,
    input: String,
    output: Option<String>,
    error: Option<String>,
    prompt_tokens: i64,
    completion_tokens: i64,
    parent_run_id: Option<String>,
    parent_tool_call_id: Option<String>,
    created_at: DateTime<Utc>,
    started_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    delivery: Option<String>,
    error_code: Option<String>,
}

impl RunRow {
    pub(crate) fn into_run(self) -> Result<Run> {
        Ok(Run {
            id: parse_run_id(&self.id)?,
            thread_id: parse_thread_id(&self.thread_id)?,
            agent_id: parse_agent_id(&self.agent_id)?,
            user_id: parse_user_id(&self.user_id)?,
            status: RunStatus::parse(&self.status)
                .ok_or_else(|| corrupt("runs.status", &self.status))?,
            input: self.input,
            output: self.output,
            error: self.error,
            error_code: self
                .error_code
                .as_deref()
                .map(|c| RunErrorCode::parse(c).ok_or_else(|| corrupt("runs.error_code", c)))
                .transpose()?,
            usage: Usage {
                prompt_tokens: token_count("runs.prompt_tokens", self.prompt_tokens)?,
                completion_tokens: token_count("runs.completion_tokens", self.completion_tokens)?,
            },
            // A run without a parent run has no lineage (the rest of it is never written
            // without one).
            lineage: match self.parent_run_id.as_deref() {
                None => None,
                Some(parent) => Some(RunLineage {
                    parent_run_id: parse_run_id(parent)?,
                    parent_tool_call_id: self.parent_tool_call_id,
                    delivery: self
                        .delivery
                        .as_deref()
                        .map(|d| Delivery::parse(d).ok_or_else(|| corrupt("runs.delivery", d)))
                        .transpose()?,
                }),
            },
            created_at: self.created_at,
            started_at: self.started_at,
            finished_at: self.finished_at,
        })
    }
}

/// A token count as the databases store it (`BIGINT`); larger counts are refused, not wrapped.
pub(crate) fn stored_tokens(count: u64) -> Result<i64> {
    i64::try_from(count)
        .map_err(|_| StoreError::Invalid(format!("token count {count} is out of range")))
}

fn token_count(what: &str, stored: i64) -> Result<u64> {
    u64::try_from(stored).map_err(|_| corrupt(what, &stored.to_string()))
}

pub(crate) fn parse_run_id(text: &str) -> Result<RunId> {
    RunId::parse(text).ok_or_else(|| corrupt("run id", text))
}

fn parse_thread_id(text: &str) -> Result<ThreadId> {
    ThreadId::parse(text).ok_or_else(|| corrupt("thread id", text))
}

pub(crate) fn parse_user_id(text: &str) -> Result<UserId> {
    UserId::parse(text).ok_or_else(|| corrupt("user id", text))
}

fn parse_agent_id(text: &str) -> Result<AgentId> {
    AgentId::parse(text).ok_or_else(|| corrupt("agent id", text))
}

pub(crate) fn parse_token_id(text: &str) -> Result<TokenId> {
    TokenId::parse(text).ok_or_else(|| corrupt("token id", text))
}

pub(crate) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("unexpected {what} `{value}`"))
}
