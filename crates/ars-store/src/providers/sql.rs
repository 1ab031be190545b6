//! [`ProviderStore`](super::ProviderStore) for the SQL stores, expanded for each database by
//! [`impl_provider_store!`] (see the crate docs for what a store type supplies).

/// Binds a provider's written fields after its id,
/// in the order the insert and the update both take them.
macro_rules! bind_provider_fields {
    ($query:expr, $fields:expr) => {
        $query
            .bind(&$fields.name)
            .bind($fields.kind.as_str())
            .bind(&$fields.base_url)
            .bind($fields.api_key.as_ref().map(ars_domain::Sealed::as_str))
            .bind($crate::providers::rows::stored_headers(&$fields))
            .bind(sqlx::types::Json(&$fields.models))
            .bind($fields.prices.as_ref().map(sqlx::types::Json))
    };
}
pub(crate) use bind_provider_fields;

/// Implements `ProviderStore` for `$store` over database `$db`.
macro_rules! impl_provider_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Raises the model settings' version inside the caller's write transaction.
            async fn bump_model_settings(
                conn: &mut <$db as sqlx::Database>::Connection,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                sqlx::query($crate::providers::queries::BUMP_MODEL_SETTINGS)
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl $crate::ProviderStore for $store {
            async fn create_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
                fields: &ars_domain::ModelProviderFields,
                created_by: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let fields = fields.clone();
                self.write("create_model_provider", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    Self::bump_model_settings(&mut tx, now).await?;
                    let query = sqlx::query_as::<_, $crate::providers::rows::ModelProviderRow>(
                        $crate::providers::queries::INSERT_MODEL_PROVIDER,
                    )
                    .bind(id.to_string());
                    let row = $crate::providers::sql::bind_provider_fields!(query, fields)
                        .bind(created_by.map(|user| user.to_string()))
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await?;
                    // Decoded before the commit: a row that cannot be read back is not written.
                    let provider = row.into_provider()?;
                    tx.commit().await?;
                    Ok(provider)
                })
                .await
            }

            async fn model_provider(
                &self,
                id: ars_domain::ModelProviderId,
            ) -> $crate::Result<Option<ars_domain::ModelProvider>> {
                sqlx::query_as::<_, $crate::providers::rows::ModelProviderRow>(
                    $crate::providers::queries::MODEL_PROVIDER_BY_ID,
                )
                .bind(id.to_string())
                .fetch_optional(&self.pool)
                .await?
                .map($crate::providers::rows::ModelProviderRow::into_provider)
                .transpose()
            }

            async fn list_model_providers(&self) -> $crate::Result<Vec<ars_domain::ModelProvider>> {
                sqlx::query_as::<_, $crate::providers::rows::ModelProviderRow>(
                    $crate::providers::queries::LIST_MODEL_PROVIDERS,
                )
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::providers::rows::ModelProviderRow::into_provider)
                .collect()
            }

            async fn update_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
                fields: &ars_domain::ModelProviderFields,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let fields = fields.clone();
                self.write("update_model_provider", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    Self::bump_model_settings(&mut tx, now).await?;
                    let old: Option<(String,)> =
                        sqlx::query_as($crate::providers::queries::MODEL_PROVIDER_NAME)
                            .bind(id.to_string())
                            .fetch_optional(&mut *tx)
                            .await?;
                    let (old,) = old.ok_or($crate::StoreError::NotFound)?;
                    let query = sqlx::query_as::<_, $crate::providers::rows::ModelProviderRow>(
                        $crate::providers::queries::UPDATE_MODEL_PROVIDER,
                    )
                    .bind(id.to_string());
                    let row = $crate::providers::sql::bind_provider_fields!(query, fields)
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await?
                        .ok_or($crate::StoreError::NotFound)?;
                    if old != fields.name {
                        sqlx::query($crate::providers::queries::RENAME_DEFAULT_MODEL_PROVIDER)
                            .bind(&old)
                            .bind(&fields.name)
                            .execute(&mut *tx)
                            .await?;
                    }
                    let provider = row.into_provider()?;
                    tx.commit().await?;
                    Ok(provider)
                })
                .await
            }

            async fn set_model_provider_models(
                &self,
                id: ars_domain::ModelProviderId,
                models: &[String],
                refreshed_at: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let models = models.to_vec();
                self.write("set_model_provider_models", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    Self::bump_model_settings(&mut tx, refreshed_at).await?;
                    let row = sqlx::query_as::<_, $crate::providers::rows::ModelProviderRow>(
                        $crate::providers::queries::SET_MODEL_PROVIDER_MODELS,
                    )
                    .bind(id.to_string())
                    .bind(sqlx::types::Json(&models))
                    .bind(refreshed_at)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                    let provider = row.into_provider()?;
                    tx.commit().await?;
                    Ok(provider)
                })
                .await
            }

            async fn delete_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
            ) -> $crate::Result<Option<$crate::DeletedProvider>> {
                self.write("delete_model_provider", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    Self::bump_model_settings(&mut tx, ars_domain::time::now()).await?;
                    let name: Option<(String,)> =
                        sqlx::query_as($crate::providers::queries::MODEL_PROVIDER_NAME)
                            .bind(id.to_string())
                            .fetch_optional(&mut *tx)
                            .await?;
                    // Dropping `tx` rolls the version back too: nothing changed.
                    let Some((name,)) = name else {
                        return Ok(None);
                    };
                    sqlx::query($crate::providers::queries::DELETE_MODEL_PROVIDER)
                        .bind(id.to_string())
                        .execute(&mut *tx)
                        .await?;
                    let cleared = sqlx::query($crate::providers::queries::CLEAR_DEFAULT_MODEL_OF)
                        .bind(&name)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(Some($crate::DeletedProvider {
                        default_model_cleared: cleared.rows_affected() > 0,
                    }))
                })
                .await
            }

            async fn model_settings(&self) -> $crate::Result<$crate::ModelSettings> {
                let row = sqlx::query_as::<_, $crate::providers::rows::ModelSettingsRow>(
                    $crate::providers::queries::MODEL_SETTINGS,
                )
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| $crate::StoreError::Corrupt("model_settings has no row".into()))?;
                Ok(row.into_settings())
            }

            async fn model_settings_version(&self) -> $crate::Result<i64> {
                let (version,): (i64,) =
                    sqlx::query_as($crate::providers::queries::MODEL_SETTINGS_VERSION)
                        .fetch_optional(&self.pool)
                        .await?
                        .ok_or_else(|| {
                            $crate::StoreError::Corrupt("model_settings has no row".into())
                        })?;
                Ok(version)
            }

            async fn set_default_model(
                &self,
                model: Option<&str>,
            ) -> $crate::Result<$crate::ModelSettings> {
                let model = model.map(str::to_string);
                self.write("set_default_model", move |mut conn| async move {
                    let row = sqlx::query_as::<_, $crate::providers::rows::ModelSettingsRow>(
                        $crate::providers::queries::SET_DEFAULT_MODEL,
                    )
                    .bind(model.as_deref())
                    .bind(ars_domain::time::now())
                    .fetch_optional(&mut *conn)
                    .await?
                    .ok_or_else(|| {
                        $crate::StoreError::Corrupt("model_settings has no row".into())
                    })?;
                    Ok(row.into_settings())
                })
                .await
            }
        }
    };
}
pub(crate) use impl_provider_store;
