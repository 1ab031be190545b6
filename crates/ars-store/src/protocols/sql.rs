//! [`ProtocolStore`](super::ProtocolStore) for the SQL stores, expanded for each database by
//! [`impl_protocol_store!`] (see the crate docs for what a store type supplies).

/// Implements `ProtocolStore` for `$store` over database `$db`.
macro_rules! impl_protocol_store {
    ($store:ident, $db:ty) => {
        #[async_trait::async_trait]
        impl $crate::ProtocolStore for $store {
            async fn thread_metadata(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<serde_json::Value>> {
                let row: Option<(String,)> =
                    sqlx::query_as($crate::protocols::queries::THREAD_METADATA)
                        .bind(thread.to_string())
                        .fetch_optional(&self.pool)
                        .await?;
                row.map(|(text,)| $crate::protocols::sql::metadata_of(&text))
                    .transpose()
            }

            async fn set_thread_metadata(
                &self,
                thread: &ars_domain::ThreadId,
                user: ars_domain::UserId,
                metadata: &serde_json::Value,
            ) -> $crate::Result<$crate::Updated> {
                let (thread, user) = (thread.to_string(), user.to_string());
                let text = metadata.to_string();
                self.write("set_thread_metadata", move |mut conn| async move {
                    let done = sqlx::query($crate::protocols::queries::UPSERT_THREAD_METADATA)
                        .bind(&thread)
                        .bind(&user)
                        .bind(&text)
                        .execute(&mut *conn)
                        .await?;
                    Ok(if done.rows_affected() == 0 {
                        $crate::Updated::NotFound
                    } else {
                        $crate::Updated::Updated
                    })
                })
                .await
            }

            async fn user_thread_metadata(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<(ars_domain::ThreadId, serde_json::Value)>> {
                let rows: Vec<(String, String)> =
                    sqlx::query_as($crate::protocols::queries::USER_THREAD_METADATA)
                        .bind(user.to_string())
                        .fetch_all(&self.pool)
                        .await?;
                rows.into_iter()
                    .map(|(id, text)| {
                        let id = ars_domain::ThreadId::parse(&id).ok_or_else(|| {
                            $crate::StoreError::Corrupt(format!("thread id `{id}`"))
                        })?;
                        Ok((id, $crate::protocols::sql::metadata_of(&text)?))
                    })
                    .collect()
            }

            async fn bind_empty_thread(
                &self,
                thread: &ars_domain::ThreadId,
                agent: ars_domain::AgentId,
            ) -> $crate::Result<$crate::Updated> {
                let (thread, agent) = (thread.to_string(), agent.to_string());
                self.write("bind_empty_thread", move |mut conn| async move {
                    let done = sqlx::query($crate::protocols::queries::BIND_EMPTY_THREAD)
                        .bind(&thread)
                        .bind(&agent)
                        .execute(&mut *conn)
                        .await?;
                    Ok(if done.rows_affected() == 0 {
                        $crate::Updated::NotFound
                    } else {
                        $crate::Updated::Updated
                    })
                })
                .await
            }
        }
    };
}
pub(crate) use impl_protocol_store;

/// Stored metadata read back.
pub(crate) fn metadata_of(text: &str) -> crate::Result<serde_json::Value> {
    serde_json::from_str(text)
        .map_err(|e| crate::StoreError::Corrupt(format!("thread metadata: {e}")))
}
