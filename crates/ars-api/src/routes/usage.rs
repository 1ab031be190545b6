//! Usage (`GET /api/usage`): the tokens the caller's runs spent — every user's, for an admin
//! who asks — rolled up per day, agent, subagent, model and user, with the cost where the
//! model's provider has prices.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::{Days, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::model_provider::TokenPrices;
use ars_domain::{AgentId, UserId};
use ars_store::{UsageFilter, UsageRow};

use crate::extract::ApiQuery;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// The longest span whose every day `by_day` lists (a longer one lists the days with runs).
const MAX_DAYS: u64 = 366;
/// The span of a report that names no start, in days (today included).
const DEFAULT_DAYS: u64 = 30;

/// Which runs a report covers.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// First day (UTC, `YYYY-MM-DD`), included; default: 29 days before `to`.
    #[param(value_type = Option<String>, format = Date)]
    pub from: Option<NaiveDate>,
    /// Last day (UTC, `YYYY-MM-DD`), included; default: today.
    #[param(value_type = Option<String>, format = Date)]
    pub to: Option<NaiveDate>,
    /// Admins: every user's runs (default: only the caller's). Refused for others.
    pub all: Option<bool>,
}

/// The runs of one group, added up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct UsageLine {
    /// What the line groups by: a day (`YYYY-MM-DD`), an agent or user id, a model
    /// (`provider/model`, empty for runs that never reached a model).
    pub key: String,
    /// How people name it: the agent's or user's name, the model, the day.
    pub label: String,
    pub runs: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// What the priced part of the tokens cost (per the providers' prices, per million);
    /// absent when none of its tokens has a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Tokens whose provider has no price (so `cost` leaves them out).
    pub unpriced_tokens: u64,
}

impl UsageLine {
    fn add(&mut self, row: &UsageRow, cost: Option<f64>) {
        self.runs += row.runs;
        self.prompt_tokens += row.prompt_tokens;
        self.completion_tokens += row.completion_tokens;
        let tokens = row.prompt_tokens + row.completion_tokens;
        self.total_tokens += tokens;
        match cost {
            Some(cost) => *self.cost.get_or_insert(0.0) += cost,
            None => self.unpriced_tokens += tokens,
        }
    }
}

/// A usage report.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsageReport {
    #[schema(value_type = String, format = Date)]
    pub from: NaiveDate,
    #[schema(value_type = String, format = Date)]
    pub to: NaiveDate,
    /// Whether it covers every user's runs (an admin's `all=true`).
    pub all_users: bool,
    /// Everything in the span.
    pub total: UsageLine,
    /// The days of the span, oldest first: every day (zero without runs) of a span of at most
    /// 366 days, the days with runs of a longer one.
    pub by_day: Vec<UsageLine>,
    /// Agents (not subagents), most tokens first.
    pub by_agent: Vec<UsageLine>,
    /// Subagents, most tokens first.
    pub by_subagent: Vec<UsageLine>,
    /// Models, most tokens first.
    pub by_model: Vec<UsageLine>,
    /// Users, most tokens first (only with `all_users`).
    pub by_user: Vec<UsageLine>,
}

/// The span a query asks for, within the years 1 to 9999 (what both databases store); `from`
/// after `to` is a span without days (an empty report).
fn span(query: &UsageQuery) -> (NaiveDate, NaiveDate) {
    let (first, last) = (
        NaiveDate::from_ymd_opt(1, 1, 1).unwrap_or(NaiveDate::MIN),
        NaiveDate::from_ymd_opt(9999, 12, 30).unwrap_or(NaiveDate::MAX),
    );
    let to = query
        .to
        .unwrap_or_else(|| Utc::now().date_naive())
        .clamp(first, last);
    let from = match query.from {
        Some(from) => from.clamp(first, last),
        None => to
            .checked_sub_days(Days::new(DEFAULT_DAYS - 1))
            .unwrap_or(to),
    };
    (from, to)
}

/// Sorts lines by tokens, most first (then by label, for a stable order).
fn ranked(lines: BTreeMap<String, UsageLine>) -> Vec<UsageLine> {
    let mut lines: Vec<_> = lines.into_values().collect();
    lines.sort_by(|a, b| {
        b.total_tokens
            .cmp(&a.total_tokens)
            .then_with(|| a.label.cmp(&b.label))
    });
    lines
}

/// Usage of the caller's runs (every user's for an admin with `all=true`).
#[utoipa::path(get, path = "/usage", tag = "usage", security(("bearer" = [])),
    params(UsageQuery),
    responses(
        (status = 200, body = UsageReport),
        (status = 400, body = ErrorBody, description = "a query that cannot be read"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "all=true without admin rights"),
    ))]
pub async fn usage(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<UsageQuery>,
) -> Result<Json<UsageReport>, ApiError> {
    let all_users = query.all.unwrap_or(false);
    if all_users {
        auth.require_admin()?;
    }
    let (from, to) = span(&query);
    let start = |day: NaiveDate| day.and_time(chrono::NaiveTime::MIN).and_utc();
    let filter = UsageFilter {
        user: (!all_users).then_some(auth.user.id),
        from: start(from),
        to: start(to.checked_add_days(Days::new(1)).unwrap_or(to)),
    };
    let rows = state.store.usage_rows(&filter).await?;

    // Prices by provider name: stored providers carry them.
    let prices: BTreeMap<String, TokenPrices> = state
        .store
        .list_model_providers()
        .await?
        .into_iter()
        .filter_map(|p| p.fields.prices.map(|prices| (p.fields.name, prices)))
        .collect();
    let cost_of = |row: &UsageRow| {
        let provider = row.model.as_deref()?.split('/').next()?;
        let prices = prices.get(provider)?;
        Some(prices.cost(row.prompt_tokens, row.completion_tokens))
    };

    // Names of the agents and users the rows name (a deleted agent's runs go with it).
    let mut agents: BTreeMap<AgentId, (String, bool)> = BTreeMap::new();
    for row in &rows {
        if let std::collections::btree_map::Entry::Vacant(slot) = agents.entry(row.agent_id) {
            slot.insert(match state.store.agent(row.agent_id).await? {
                Some(agent) => (agent.name, agent.is_subagent),
                None => (row.agent_id.to_string(), false),
            });
        }
    }
    let users: BTreeMap<UserId, String> = if all_users {
        state
            .store
            .list_users()
            .await?
            .into_iter()
            .map(|u| (u.id, u.username))
            .collect()
    } else {
        BTreeMap::new()
    };

    let mut total = UsageLine {
        key: "total".into(),
        label: "total".into(),
        ..UsageLine::default()
    };
    let mut by_day: BTreeMap<String, UsageLine> = BTreeMap::new();
    let every_day = from <= to && (to - from).num_days().unsigned_abs() < MAX_DAYS;
    let mut day = from;
    while every_day && day <= to {
        let key = day.format("%Y-%m-%d").to_string();
        by_day.insert(
            key.clone(),
            UsageLine {
                key: key.clone(),
                label: key,
                ..UsageLine::default()
            },
        );
        match day.succ_opt() {
            Some(next) => day = next,
            None => break,
        }
    }
    let (mut by_agent, mut by_subagent, mut by_model, mut by_user) = (
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
    );
    let line = |key: String, label: String| UsageLine {
        key,
        label,
        ..UsageLine::default()
    };
    for row in &rows {
        let cost = cost_of(row);
        total.add(row, cost);
        by_day
            .entry(row.day.clone())
            .or_insert_with(|| line(row.day.clone(), row.day.clone()))
            .add(row, cost);
        let (name, is_subagent) = agents
            .get(&row.agent_id)
            .cloned()
            .unwrap_or_else(|| (row.agent_id.to_string(), false));
        let agent_lines = if is_subagent {
            &mut by_subagent
        } else {
            &mut by_agent
        };
        agent_lines
            .entry(row.agent_id.to_string())
            .or_insert_with(|| line(row.agent_id.to_string(), name))
            .add(row, cost);
        let model = row.model.clone().unwrap_or_default();
        by_model
            .entry(model.clone())
            .or_insert_with(|| line(model.clone(), model))
            .add(row, cost);
        if all_users {
            let name = users
                .get(&row.user_id)
                .cloned()
                .unwrap_or_else(|| row.user_id.to_string());
            by_user
                .entry(row.user_id.to_string())
                .or_insert_with(|| line(row.user_id.to_string(), name))
                .add(row, cost);
        }
    }
    Ok(Json(UsageReport {
        from,
        to,
        all_users,
        total,
        by_day: by_day.into_values().collect(),
        by_agent: ranked(by_agent),
        by_subagent: ranked(by_subagent),
        by_model: ranked(by_model),
        by_user: ranked(by_user),
    }))
}
