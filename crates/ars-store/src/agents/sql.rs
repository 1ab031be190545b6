//! [`AgentStore`](super::AgentStore) for the SQL stores, expanded for each database by
//! [`impl_agent_store!`] (see the crate docs for what a store type supplies).

/// Binds an agent's written fields after its id, in the order the insert and the update both
/// take them.
macro_rules! bind_agent_fields {
    ($query:expr, $fields:expr) => {
        $query
            .bind(&$fields.slug)
            .bind(&$fields.name)
            .bind(&$fields.description)
            .bind($fields.backend.as_str())
            .bind($fields.is_subagent())
            .bind(sqlx::types::Json(&$fields.config))
            .bind($fields.share_config.visibility.as_str())
    };
}
pub(crate) use bind_agent_fields;

/// Implements `AgentStore` for `$store` over database `$db`.
macro_rules! impl_agent_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Clears the default flag of every agent except `keep`, which the caller's
            /// transaction then makes (or keeps) the default. Takes the store's default-agent
            /// lock first, so concurrent default changes queue instead of colliding.
            async fn clear_other_defaults(
                conn: &mut <$db as sqlx::Database>::Connection,
                keep: ars_domain::AgentId,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                Self::lock_default_agent(&mut *conn).await?;
                sqlx::query($crate::agents::queries::CLEAR_OTHER_DEFAULTS)
                    .bind(keep.to_string())
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl $crate::AgentStore for $store {
            async fn create_agent(
                &self,
                draft: &ars_domain::AgentDraft,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::Agent> {
                let draft = draft.clone();
                self.write("create_agent", move |mut conn| async move {
                    let id = ars_domain::AgentId::new();
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    if draft.is_default {
                        Self::clear_other_defaults(&mut tx, id, now).await?;
                    }
                    let query =
                        sqlx::query($crate::agents::queries::INSERT_AGENT).bind(id.to_string());
                    $crate::agents::sql::bind_agent_fields!(query, draft)
                        .bind(owner.map(|owner| owner.to_string()))
                        .bind(draft.is_default)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    let table = &$crate::agents::queries::AGENT_SHARES;
                    Self::replace_shares(&mut tx, table, &id.to_string(), &draft.share_config)
                        .await?;
                    Self::commit_read_back::<$crate::agents::rows::AgentRow>(
                        tx,
                        &$crate::agents::queries::AGENT_BY_ID,
                        &id.to_string(),
                    )
                    .await
                })
                .await
            }

            async fn agent(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<Option<ars_domain::Agent>> {
                self.shared_where::<$crate::agents::rows::AgentRow>(
                    &$crate::agents::queries::AGENT_BY_ID,
                    &id.to_string(),
                )
                .await
            }

            async fn agent_for_run(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<Option<(ars_domain::Agent, i64)>> {
                use sqlx::{FromRow, Row};
                let Some(row) = sqlx::query(Self::dialect(&$crate::agents::queries::AGENT_FOR_RUN))
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                else {
                    return Ok(None);
                };
                let version: Option<i64> = row.try_get("settings_version")?;
                let version = version.ok_or_else(|| {
                    $crate::StoreError::Corrupt("model_settings has no row".into())
                })?;
                let agent =
                    $crate::shares::WithShares::<$crate::agents::rows::AgentRow>::from_row(&row)?
                        .into_resource()?;
                Ok(Some((agent, version)))
            }

            async fn agent_by_slug(&self, slug: &str) -> $crate::Result<Option<ars_domain::Agent>> {
                self.shared_where::<$crate::agents::rows::AgentRow>(
                    &$crate::agents::queries::AGENT_BY_SLUG,
                    slug,
                )
                .await
            }

            async fn list_agents(
                &self,
                filter: $crate::AgentFilter,
            ) -> $crate::Result<Vec<ars_domain::Agent>> {
                use $crate::agents::queries as q;
                let (rows, include_subagents) = match filter.kinds {
                    $crate::AgentKinds::Chat => (&q::LIST_AGENTS, Some(false)),
                    $crate::AgentKinds::All => (&q::LIST_AGENTS, Some(true)),
                    $crate::AgentKinds::Subagents => (&q::LIST_SUBAGENTS, None),
                };
                self.list_shared::<$crate::agents::rows::AgentRow>(
                    rows,
                    filter.visible_to,
                    include_subagents,
                )
                .await
            }

            async fn update_agent(
                &self,
                id: ars_domain::AgentId,
                draft: &ars_domain::AgentDraft,
            ) -> $crate::Result<ars_domain::Agent> {
                let draft = draft.clone();
                self.write("update_agent", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    if draft.is_default {
                        Self::clear_other_defaults(&mut tx, id, now).await?;
                    }
                    let query = sqlx::query_as::<_, $crate::agents::rows::AgentRow>(
                        $crate::agents::queries::UPDATE_AGENT,
                    )
                    .bind(id.to_string());
                    let row = $crate::agents::sql::bind_agent_fields!(query, draft)
                        .bind(draft.is_default)
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await?;
                    // Dropping `tx` on any early return rolls the whole write back.
                    let row = row.ok_or($crate::StoreError::NotFound)?;
                    let table = &$crate::agents::queries::AGENT_SHARES;
                    let shares =
                        Self::replace_shares(&mut tx, table, &id.to_string(), &draft.share_config)
                            .await?;
                    Self::commit_written(tx, row, shares).await
                })
                .await
            }

            async fn delete_agent(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<$crate::Deleted> {
                // Shares and threads (with everything under them) go with the row (ON DELETE
                // CASCADE), in the same statement.
                self.delete_by_id(
                    "delete_agent",
                    $crate::agents::queries::DELETE_AGENT,
                    id.to_string(),
                )
                .await
            }

            async fn set_default_agent(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<ars_domain::Agent> {
                self.write("set_default_agent", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    Self::clear_other_defaults(&mut tx, id, now).await?;
                    let row = sqlx::query_as::<_, $crate::agents::rows::AgentRow>(
                        $crate::agents::queries::SET_DEFAULT,
                    )
                    .bind(id.to_string())
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                    Self::commit_shared(tx, &$crate::agents::queries::AGENT_SHARES, row).await
                })
                .await
            }

            async fn default_agent(&self) -> $crate::Result<Option<ars_domain::Agent>> {
                sqlx::query_as::<_, $crate::shares::WithShares<$crate::agents::rows::AgentRow>>(
                    Self::dialect(&$crate::agents::queries::DEFAULT_AGENT),
                )
                .fetch_optional(&self.pool)
                .await?
                .map($crate::shares::WithShares::into_resource)
                .transpose()
            }
        }
    };
}
pub(crate) use impl_agent_store;
