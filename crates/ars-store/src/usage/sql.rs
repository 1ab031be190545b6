//! [`UsageStore`](super::UsageStore) for the SQL stores, expanded for each database by
//! [`impl_usage_store!`] (see the crate docs for what a store type supplies).

/// One row of `USAGE_ROWS`: day, agent, user, model, runs, prompt and completion tokens.
pub(crate) type UsageTuple = (String, String, String, Option<String>, i64, i64, i64);

/// A row as the domain reads it.
pub(crate) fn usage_row(row: UsageTuple) -> crate::Result<super::UsageRow> {
    let (day, agent, user, model, runs, prompt, completion) = row;
    let count = |what: &str, n: i64| {
        u64::try_from(n).map_err(|_| crate::rows::corrupt(what, &n.to_string()))
    };
    Ok(super::UsageRow {
        day,
        agent_id: crate::rows::parse_agent_id(&agent)?,
        user_id: crate::rows::parse_user_id(&user)?,
        model,
        runs: count("usage.runs", runs)?,
        prompt_tokens: count("usage.prompt_tokens", prompt)?,
        completion_tokens: count("usage.completion_tokens", completion)?,
    })
}

/// Implements `UsageStore` for `$store` over database `$db`.
macro_rules! impl_usage_store {
    ($store:ident, $db:ty) => {
        #[async_trait::async_trait]
        impl $crate::UsageStore for $store {
            async fn usage_rows(
                &self,
                filter: &$crate::UsageFilter,
            ) -> $crate::Result<Vec<$crate::UsageRow>> {
                let rows: Vec<$crate::usage::sql::UsageTuple> = sqlx::query_as(Self::USAGE_ROWS)
                    .bind(filter.from)
                    .bind(filter.to)
                    .bind(filter.user.map(|u| u.to_string()))
                    .fetch_all(&self.pool)
                    .await?;
                rows.into_iter()
                    .map($crate::usage::sql::usage_row)
                    .collect()
            }
        }
    };
}

pub(crate) use impl_usage_store;
