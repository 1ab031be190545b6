//! [`AccountStore`](super::AccountStore) for the SQL stores, expanded for each database by
//! [`impl_account_store!`] (see the crate docs for what a store type supplies).

/// Implements `AccountStore` for `$store` over database `$db`.
macro_rules! impl_account_store {
    ($store:ident, $db:ty) => {
        #[async_trait::async_trait]
        impl $crate::AccountStore for $store {
            async fn create_user(&self, new: $crate::NewUser) -> $crate::Result<ars_domain::User> {
                self.write("create_user", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    let user = ars_domain::User {
                        id: ars_domain::UserId::new(),
                        username: new.username,
                        role: new.role,
                        disabled: false,
                        created_at: now,
                        updated_at: now,
                    };
                    sqlx::query($crate::accounts::queries::INSERT_USER)
                        .bind(user.id.to_string())
                        .bind(&user.username)
                        .bind(&new.password_hash)
                        .bind(user.role.as_str())
                        .bind(now)
                        .bind(now)
                        .execute(&mut *conn)
                        .await?;
                    Ok(user)
                })
                .await
            }

            async fn user(
                &self,
                id: ars_domain::UserId,
            ) -> $crate::Result<Option<ars_domain::User>> {
                sqlx::query_as::<_, $crate::accounts::rows::UserRow>(
                    $crate::accounts::queries::USER_BY_ID,
                )
                .bind(id.to_string())
                .fetch_optional(&self.pool)
                .await?
                .map($crate::accounts::rows::UserRow::into_user)
                .transpose()
            }

            async fn user_credentials(
                &self,
                username: &str,
            ) -> $crate::Result<Option<(ars_domain::User, String)>> {
                let row = sqlx::query_as::<_, $crate::accounts::rows::CredentialsRow>(
                    $crate::accounts::queries::CREDENTIALS_BY_USERNAME,
                )
                .bind(username)
                .fetch_optional(&self.pool)
                .await?;
                row.map(|row| Ok((row.user.into_user()?, row.password_hash)))
                    .transpose()
            }

            async fn list_users(&self) -> $crate::Result<Vec<ars_domain::User>> {
                sqlx::query_as::<_, $crate::accounts::rows::UserRow>(
                    $crate::accounts::queries::LIST_USERS,
                )
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::accounts::rows::UserRow::into_user)
                .collect()
            }

            async fn count_users(&self) -> $crate::Result<u64> {
                let (count,): (i64,) = sqlx::query_as($crate::accounts::queries::COUNT_USERS)
                    .fetch_one(&self.pool)
                    .await?;
                u64::try_from(count)
                    .map_err(|_| $crate::StoreError::Corrupt(format!("user count {count}")))
            }

            async fn existing_users(
                &self,
                ids: &[ars_domain::UserId],
            ) -> $crate::Result<Vec<ars_domain::UserId>> {
                let mut found = std::collections::HashSet::new();
                // Chunks keep each statement well under both databases' bind-parameter limits.
                for chunk in ids.chunks($crate::sql_store::IN_LIST_CHUNK) {
                    let sql = $crate::accounts::queries::existing_users(chunk.len());
                    let mut query = sqlx::query_as::<_, (String,)>(&sql);
                    for id in chunk {
                        query = query.bind(id.to_string());
                    }
                    for (id,) in query.fetch_all(&self.pool).await? {
                        found.insert($crate::rows::parse_user_id(&id)?);
                    }
                }
                Ok(ids
                    .iter()
                    .filter(|id| found.contains(id))
                    .copied()
                    .collect())
            }

            async fn update_user(
                &self,
                id: ars_domain::UserId,
                change: ars_domain::AccountChange,
            ) -> $crate::Result<$crate::UserUpdate> {
                self.write("update_user", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    Self::lock_users(&mut tx).await?;
                    let user = sqlx::query_as::<_, $crate::accounts::rows::UserRow>(
                        $crate::accounts::queries::USER_BY_ID,
                    )
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_user()?;
                    let changed = change.applied_to(&user);
                    if user.is_active_admin() && !changed.is_active_admin() {
                        let (others,): (i64,) =
                            sqlx::query_as($crate::accounts::queries::OTHER_ACTIVE_ADMINS)
                                .bind(id.to_string())
                                .fetch_one(&mut *tx)
                                .await?;
                        if others == 0 {
                            tx.rollback().await?;
                            return Ok($crate::UserUpdate::LastAdmin(user));
                        }
                    }
                    let updated = sqlx::query_as::<_, $crate::accounts::rows::UserRow>(
                        $crate::accounts::queries::UPDATE_USER,
                    )
                    .bind(id.to_string())
                    .bind(changed.role.as_str())
                    .bind(changed.disabled)
                    .bind(ars_domain::time::now())
                    .fetch_one(&mut *tx)
                    .await?
                    .into_user()?;
                    tx.commit().await?;
                    Ok($crate::UserUpdate::Updated(updated))
                })
                .await
            }

            async fn set_password(
                &self,
                id: ars_domain::UserId,
                password_hash: &str,
                keep: Option<ars_domain::TokenId>,
            ) -> $crate::Result<$crate::Updated> {
                let password_hash = password_hash.to_owned();
                self.write("set_password", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    let done = sqlx::query($crate::accounts::queries::SET_PASSWORD)
                        .bind(id.to_string())
                        .bind(&password_hash)
                        .bind(ars_domain::time::now())
                        .execute(&mut *tx)
                        .await?;
                    if done.rows_affected() == 0 {
                        tx.rollback().await?;
                        return Ok($crate::Updated::NotFound);
                    }
                    sqlx::query($crate::accounts::queries::REVOKE_OTHER_TOKENS)
                        .bind(id.to_string())
                        .bind(keep.map(|t| t.to_string()))
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok($crate::Updated::Updated)
                })
                .await
            }

            async fn create_token(
                &self,
                new: $crate::NewToken,
            ) -> $crate::Result<ars_domain::ApiToken> {
                self.write("create_token", move |mut conn| async move {
                    let token = ars_domain::ApiToken {
                        id: ars_domain::TokenId::new(),
                        user_id: new.user_id,
                        name: new.name,
                        created_at: ars_domain::time::now(),
                        // Microseconds are what PostgreSQL keeps; truncating here makes every
                        // store return exactly the value it was given.
                        expires_at: new
                            .expires_at
                            .map(|at| chrono::SubsecRound::trunc_subsecs(at, 6)),
                        last_used_at: None,
                    };
                    sqlx::query($crate::accounts::queries::INSERT_TOKEN)
                        .bind(token.id.to_string())
                        .bind(token.user_id.to_string())
                        .bind(&token.name)
                        .bind(&new.token_hash)
                        .bind(token.created_at)
                        .bind(token.expires_at)
                        .execute(&mut *conn)
                        .await?;
                    Ok(token)
                })
                .await
            }

            async fn token_user(
                &self,
                token_hash: &str,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Option<(ars_domain::User, ars_domain::ApiToken)>> {
                sqlx::query_as::<_, $crate::accounts::rows::TokenUserRow>(
                    $crate::accounts::queries::TOKEN_USER,
                )
                .bind(token_hash)
                .bind(now)
                .fetch_optional(&self.pool)
                .await?
                .map($crate::accounts::rows::TokenUserRow::into_pair)
                .transpose()
            }

            async fn touch_token(
                &self,
                id: ars_domain::TokenId,
                at: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                self.write("touch_token", move |mut conn| async move {
                    sqlx::query($crate::accounts::queries::TOUCH_TOKEN)
                        .bind(id.to_string())
                        .bind(chrono::SubsecRound::trunc_subsecs(at, 6))
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
                .await
            }

            async fn list_tokens(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<ars_domain::ApiToken>> {
                sqlx::query_as::<_, $crate::accounts::rows::TokenRow>(
                    $crate::accounts::queries::LIST_TOKENS,
                )
                .bind(user.to_string())
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::accounts::rows::TokenRow::into_token)
                .collect()
            }

            async fn revoke_token(
                &self,
                user: ars_domain::UserId,
                id: ars_domain::TokenId,
            ) -> $crate::Result<$crate::Deleted> {
                self.write("revoke_token", move |mut conn| async move {
                    let done = sqlx::query($crate::accounts::queries::REVOKE_TOKEN)
                        .bind(id.to_string())
                        .bind(user.to_string())
                        .execute(&mut *conn)
                        .await?;
                    Ok($crate::Deleted::from_rows(done.rows_affected()))
                })
                .await
            }
        }
    };
}
pub(crate) use impl_account_store;
