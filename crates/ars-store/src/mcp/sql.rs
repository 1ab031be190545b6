//! [`McpStore`](super::McpStore) for the SQL stores, expanded for each database by
//! [`impl_mcp_store!`] (see the crate docs for what a store type supplies).

/// Binds an MCP server's written fields after its id (and, creating it, its slug),
/// in the order the insert and the update both take them.
macro_rules! bind_mcp_server_fields {
    ($query:expr, $fields:expr) => {
        $query
            .bind(&$fields.name)
            .bind(&$fields.description)
            .bind($crate::mcp::rows::transport_type(&$fields.transport))
            .bind(sqlx::types::Json(&$fields.transport))
            .bind($fields.enabled_tools.as_ref().map(sqlx::types::Json))
            .bind($fields.share_config.visibility.as_str())
    };
}
pub(crate) use bind_mcp_server_fields;

/// Implements `McpStore` for `$store` over database `$db`.
macro_rules! impl_mcp_store {
    ($store:ident, $db:ty) => {
        #[async_trait::async_trait]
        impl $crate::McpStore for $store {
            async fn create_mcp_server(
                &self,
                id: ars_domain::McpServerId,
                fields: &ars_domain::McpServerFields,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::McpServer> {
                let fields = fields.clone();
                self.write("create_mcp_server", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    let query = sqlx::query_as::<_, $crate::mcp::rows::McpServerRow>(
                        $crate::mcp::queries::INSERT_MCP_SERVER,
                    )
                    .bind(&id)
                    .bind(&fields.slug);
                    let row = $crate::mcp::sql::bind_mcp_server_fields!(query, fields)
                        .bind(owner.map(|owner| owner.to_string()))
                        .bind(ars_domain::time::now())
                        .fetch_one(&mut *tx)
                        .await?;
                    let table = &$crate::mcp::queries::MCP_SERVER_SHARES;
                    let shares =
                        Self::replace_shares(&mut tx, table, &id, &fields.share_config).await?;
                    Self::commit_written(tx, row, shares).await
                })
                .await
            }

            async fn mcp_server(
                &self,
                id: ars_domain::McpServerId,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                self.shared_where::<$crate::mcp::rows::McpServerRow>(
                    &$crate::mcp::queries::MCP_SERVER_BY_ID,
                    &id.to_string(),
                )
                .await
            }

            async fn mcp_server_by_slug(
                &self,
                slug: &str,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                self.shared_where::<$crate::mcp::rows::McpServerRow>(
                    &$crate::mcp::queries::MCP_SERVER_BY_SLUG,
                    slug,
                )
                .await
            }

            async fn list_mcp_servers(
                &self,
                filter: $crate::McpServerFilter,
            ) -> $crate::Result<Vec<ars_domain::McpServer>> {
                self.list_shared::<$crate::mcp::rows::McpServerRow>(
                    &$crate::mcp::queries::LIST_MCP_SERVERS,
                    filter.visible_to,
                    None,
                )
                .await
            }

            async fn update_mcp_server(
                &self,
                id: ars_domain::McpServerId,
                fields: &ars_domain::McpServerFields,
            ) -> $crate::Result<ars_domain::McpServer> {
                let fields = fields.clone();
                self.write("update_mcp_server", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    let query = sqlx::query_as::<_, $crate::mcp::rows::McpServerRow>(
                        $crate::mcp::queries::UPDATE_MCP_SERVER,
                    )
                    .bind(&id);
                    let row = $crate::mcp::sql::bind_mcp_server_fields!(query, fields)
                        .bind(ars_domain::time::now())
                        .fetch_optional(&mut *tx)
                        .await?;
                    let row = row.ok_or($crate::StoreError::NotFound)?;
                    let table = &$crate::mcp::queries::MCP_SERVER_SHARES;
                    let shares =
                        Self::replace_shares(&mut tx, table, &id, &fields.share_config).await?;
                    Self::commit_written(tx, row, shares).await
                })
                .await
            }

            async fn delete_mcp_server(
                &self,
                id: ars_domain::McpServerId,
            ) -> $crate::Result<$crate::Deleted> {
                self.delete_by_id(
                    "delete_mcp_server",
                    $crate::mcp::queries::DELETE_MCP_SERVER,
                    id.to_string(),
                )
                .await
            }

            async fn save_mcp_session(
                &self,
                id: &str,
                state: &str,
                expire_before: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                let (id, state) = (id.to_owned(), state.to_owned());
                self.write("save_mcp_session", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    sqlx::query($crate::mcp::queries::EXPIRE_MCP_SESSIONS)
                        .bind(expire_before)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query($crate::mcp::queries::UPSERT_MCP_SESSION)
                        .bind(&id)
                        .bind(&state)
                        .bind(ars_domain::time::now())
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(())
                })
                .await
            }

            async fn mcp_session(&self, id: &str) -> $crate::Result<Option<String>> {
                let row: Option<(String,)> = sqlx::query_as($crate::mcp::queries::MCP_SESSION)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(row.map(|(state,)| state))
            }

            async fn delete_mcp_session(&self, id: &str) -> $crate::Result<()> {
                let id = id.to_owned();
                self.write("delete_mcp_session", move |mut conn| async move {
                    sqlx::query($crate::mcp::queries::DELETE_MCP_SESSION)
                        .bind(&id)
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
                .await
            }

            async fn bind_mcp_session(
                &self,
                id: &str,
                user: ars_domain::UserId,
            ) -> $crate::Result<$crate::Bound> {
                let id = id.to_owned();
                self.write("bind_mcp_session", move |mut conn| async move {
                    let done = sqlx::query($crate::mcp::queries::BIND_MCP_SESSION)
                        .bind(&id)
                        .bind(user.to_string())
                        .execute(&mut *conn)
                        .await?;
                    Ok(if done.rows_affected() == 1 {
                        $crate::Bound::Bound
                    } else {
                        $crate::Bound::Refused
                    })
                })
                .await
            }

            async fn mcp_session_owner(
                &self,
                id: &str,
            ) -> $crate::Result<Option<ars_domain::UserId>> {
                let row: Option<(String,)> =
                    sqlx::query_as($crate::mcp::queries::MCP_SESSION_OWNER)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await?;
                Ok(row.and_then(|(user,)| ars_domain::UserId::parse(&user)))
            }

            async fn save_mcp_call(
                &self,
                session_id: &str,
                request_id: &str,
                run: ars_domain::RunId,
            ) -> $crate::Result<()> {
                let (session_id, request_id) = (session_id.to_owned(), request_id.to_owned());
                self.write("save_mcp_call", move |mut conn| async move {
                    sqlx::query($crate::mcp::queries::UPSERT_MCP_CALL)
                        .bind(&session_id)
                        .bind(&request_id)
                        .bind(run.to_string())
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
                .await
            }

            async fn mcp_call_run(
                &self,
                session_id: &str,
                request_id: &str,
            ) -> $crate::Result<Option<ars_domain::RunId>> {
                let row: Option<(String,)> = sqlx::query_as($crate::mcp::queries::MCP_CALL_RUN)
                    .bind(session_id)
                    .bind(request_id)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(row.and_then(|(id,)| ars_domain::RunId::parse(&id)))
            }

            async fn delete_mcp_call(
                &self,
                session_id: &str,
                request_id: &str,
            ) -> $crate::Result<()> {
                let (session_id, request_id) = (session_id.to_owned(), request_id.to_owned());
                self.write("delete_mcp_call", move |mut conn| async move {
                    sqlx::query($crate::mcp::queries::DELETE_MCP_CALL)
                        .bind(&session_id)
                        .bind(&request_id)
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
                .await
            }
        }
    };
}
pub(crate) use impl_mcp_store;
