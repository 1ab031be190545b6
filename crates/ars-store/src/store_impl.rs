//! The one [`Store`](crate::Store) implementation, expanded for each database.
//!
//! sqlx's executor traits make a generic `impl<DB> Store for SqlStore<DB>` a wall of bounds, so
//! the body is a `macro_rules!` instead: [`impl_store!`] expands the same code, running the same
//! [`crate::sql`] strings, for [`crate::SqliteStore`] and [`crate::PgStore`]. A store type only
//! supplies a `pool` field (for reads), a `writer` method (the pool every write uses), a
//! `begin_write` method (how that database starts a write transaction on the writer), the
//! `lock_default_agent`, `lock_users` and `lock_kb_changes` functions (how it serializes
//! default-agent changes, account changes and appends to the knowledge base change log) and
//! `CLAIM_KB_DOCUMENT` (its variant of the claim query).
//!
//! **Invariant:** every write runs on `writer()` (SQLite: its one writer connection, so writers
//! queue in-process; PostgreSQL: the same pool as reads), never on `pool`.
//! **Invariant:** every write is one transaction (or one statement), and agents, threads,
//! messages and runs are returned as read back inside it (a read or `RETURNING`), so callers see
//! exactly what was stored.
//!
//! This file runs longer than the crate's others on purpose: `#[async_trait]` must see every
//! method of the one `impl Store` block at once, so the trait's methods cannot be spread over
//! several macros or files without a layer of forwarding methods that would say nothing.

/// Implements `Store` (and, with `test-utils`, `RawSql`) for `$store` over database `$db`.
macro_rules! impl_store {
    ($store:ident, $db:ty, $kind:literal) => {
        impl $store {
            /// `row` with its shares, read on the same connection (or transaction).
            async fn agent_with_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                row: Option<$crate::rows::AgentRow>,
            ) -> $crate::Result<Option<ars_domain::Agent>> {
                let Some(row) = row else {
                    return Ok(None);
                };
                let shares =
                    sqlx::query_as::<_, $crate::rows::ShareRow>($crate::sql::SHARES_OF_AGENT)
                        .bind(row.id())
                        .fetch_all(&mut *conn)
                        .await?;
                row.into_agent(shares).map(Some)
            }

            /// The agent that `sql` selects by its one bind, `key`.
            async fn agent_where(
                &self,
                sql: &'static str,
                key: String,
            ) -> $crate::Result<Option<ars_domain::Agent>> {
                let mut conn = self.pool.acquire().await?;
                let row = sqlx::query_as::<_, $crate::rows::AgentRow>(sql)
                    .bind(key)
                    .fetch_optional(&mut *conn)
                    .await?;
                Self::agent_with_shares(&mut conn, row).await
            }

            /// Clears the default flag of every agent except `keep`, which the caller's
            /// transaction then makes (or keeps) the default. Takes the store's default-agent
            /// lock first, so concurrent default changes queue instead of colliding.
            async fn clear_other_defaults(
                conn: &mut <$db as sqlx::Database>::Connection,
                keep: ars_domain::AgentId,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                Self::lock_default_agent(&mut *conn).await?;
                sqlx::query($crate::sql::CLEAR_OTHER_DEFAULTS)
                    .bind(keep.to_string())
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }

            /// Inserts the share rows of `share` for the agent or skill `id` (which has none
            /// yet) with `sql` (`INSERT_SHARE`, `INSERT_SKILL_SHARE`).
            async fn insert_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                sql: &'static str,
                id: &str,
                share: &ars_domain::ShareConfig,
            ) -> $crate::Result<()> {
                for (user, role) in $crate::rows::share_rows(share) {
                    sqlx::query(sql)
                        .bind(id)
                        .bind(user.to_string())
                        .bind(role)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            }

            /// `row` with its shares, read on the same connection (or transaction).
            async fn skill_with_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                row: Option<$crate::rows::SkillRow>,
            ) -> $crate::Result<Option<ars_domain::Skill>> {
                let Some(row) = row else {
                    return Ok(None);
                };
                let shares =
                    sqlx::query_as::<_, $crate::rows::ShareRow>($crate::sql::SHARES_OF_SKILL)
                        .bind(row.id())
                        .fetch_all(&mut *conn)
                        .await?;
                row.into_skill(shares).map(Some)
            }

            /// The skill that `sql` selects by its one bind, `key`.
            async fn skill_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Option<ars_domain::Skill>> {
                let mut conn = self.pool.acquire().await?;
                let row = sqlx::query_as::<_, $crate::rows::SkillRow>(sql)
                    .bind(key)
                    .fetch_optional(&mut *conn)
                    .await?;
                Self::skill_with_shares(&mut conn, row).await
            }

            /// `row` with its shares, read on the same connection (or transaction).
            async fn mcp_server_with_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                row: Option<$crate::mcp_rows::McpServerRow>,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                let Some(row) = row else {
                    return Ok(None);
                };
                let shares =
                    sqlx::query_as::<_, $crate::rows::ShareRow>($crate::sql::SHARES_OF_MCP_SERVER)
                        .bind(row.id())
                        .fetch_all(&mut *conn)
                        .await?;
                row.into_server(shares).map(Some)
            }

            /// The MCP server that `sql` selects by its one bind, `key`.
            async fn mcp_server_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                let mut conn = self.pool.acquire().await?;
                let row = sqlx::query_as::<_, $crate::mcp_rows::McpServerRow>(sql)
                    .bind(key)
                    .fetch_optional(&mut *conn)
                    .await?;
                Self::mcp_server_with_shares(&mut conn, row).await
            }

            /// `row` with its shares, read on the same connection (or transaction).
            async fn knowledge_base_with_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                row: Option<$crate::kb_rows::KnowledgeBaseRow>,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                let Some(row) = row else {
                    return Ok(None);
                };
                let shares = sqlx::query_as::<_, $crate::rows::ShareRow>(
                    $crate::kb_sql::SHARES_OF_KNOWLEDGE_BASE,
                )
                .bind(row.id())
                .fetch_all(&mut *conn)
                .await?;
                row.into_knowledge_base(shares).map(Some)
            }

            /// The knowledge base that `sql` selects by its one bind, `key`.
            async fn knowledge_base_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                let mut conn = self.pool.acquire().await?;
                let row = sqlx::query_as::<_, $crate::kb_rows::KnowledgeBaseRow>(sql)
                    .bind(key)
                    .fetch_optional(&mut *conn)
                    .await?;
                Self::knowledge_base_with_shares(&mut conn, row).await
            }

            /// Knowledge base `id` as stored inside the write transaction `tx`, which then
            /// commits.
            async fn commit_knowledge_base(
                mut tx: sqlx::Transaction<'static, $db>,
                id: &str,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                let row = sqlx::query_as::<_, $crate::kb_rows::KnowledgeBaseRow>(
                    $crate::kb_sql::KNOWLEDGE_BASE_BY_ID,
                )
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
                let kb = Self::knowledge_base_with_shares(&mut tx, row)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(kb)
            }

            /// Inserts the chunks of document `document_id` (which has none now) of knowledge
            /// base `kb_id`, several per statement.
            async fn insert_kb_chunks(
                conn: &mut <$db as sqlx::Database>::Connection,
                document_id: &str,
                kb_id: &str,
                chunks: &[$crate::kb_rows::StoredChunk<'_>],
            ) -> $crate::Result<()> {
                for batch in chunks.chunks($crate::kb_sql::KB_CHUNKS_PER_INSERT) {
                    let mut insert =
                        sqlx::QueryBuilder::<$db>::new($crate::kb_sql::INSERT_KB_CHUNKS);
                    insert.push_values(batch, |mut row, chunk| {
                        row.push_bind(document_id)
                            .push_bind(kb_id)
                            .push_bind(chunk.ordinal)
                            .push_bind(sqlx::types::Json(chunk.heading_path))
                            .push_bind(chunk.start)
                            .push_bind(chunk.end)
                            .push_bind(chunk.text)
                            .push_bind(chunk.embedding.as_deref());
                    });
                    insert.build().execute(&mut *conn).await?;
                }
                Ok(())
            }

            /// Appends document `document_id` of knowledge base `kb_id` to the change log
            /// inside the caller's write transaction, as its last statement: the log's lock
            /// (PostgreSQL) is held from here to the commit, so entries commit in `seq` order.
            async fn append_kb_change(
                conn: &mut <$db as sqlx::Database>::Connection,
                kb_id: &str,
                document_id: &str,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                Self::lock_kb_changes(&mut *conn).await?;
                sqlx::query($crate::kb_sql::APPEND_KB_CHANGE)
                    .bind(kb_id)
                    .bind(document_id)
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }

            /// Inserts `files` for skill `id` (which has none now).
            async fn insert_skill_files(
                conn: &mut <$db as sqlx::Database>::Connection,
                id: &str,
                files: &[ars_domain::SkillFile],
            ) -> $crate::Result<()> {
                for file in files {
                    sqlx::query($crate::sql::INSERT_SKILL_FILE)
                        .bind(id)
                        .bind(&file.path)
                        .bind(&file.content)
                        .bind($crate::rows::stored_file_size(file)?)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            }

            /// The skill `id` as stored inside the write transaction `tx`, which then commits.
            async fn commit_skill(
                mut tx: sqlx::Transaction<'static, $db>,
                row: $crate::rows::SkillRow,
            ) -> $crate::Result<ars_domain::Skill> {
                let skill = Self::skill_with_shares(&mut tx, Some(row))
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(skill)
            }

            /// Raises the model settings' version inside the caller's write transaction.
            async fn bump_model_settings(
                conn: &mut <$db as sqlx::Database>::Connection,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                sqlx::query($crate::sql::BUMP_MODEL_SETTINGS)
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }

            /// The run with this id; `NotFound` when there is none.
            async fn existing_run(&self, id: ars_domain::RunId) -> $crate::Result<ars_domain::Run> {
                sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::RUN_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_run()
            }

            /// Inserts `new` as run `id`, `pending`; `None` when the thread already has an
            /// active run (the one-active-run index refused it).
            async fn insert_run(
                conn: &mut <$db as sqlx::Database>::Connection,
                id: ars_domain::RunId,
                new: &ars_domain::NewRun,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Option<$crate::rows::RunRow>> {
                Ok(
                    sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::INSERT_RUN)
                        .bind(id.to_string())
                        .bind(new.thread_id.as_str())
                        .bind(new.agent_id.to_string())
                        .bind(new.user_id.to_string())
                        .bind(&new.input)
                        .bind(new.lineage.as_ref().map(|l| l.parent_run_id.to_string()))
                        .bind(
                            new.lineage
                                .as_ref()
                                .and_then(|l| l.parent_tool_call_id.as_deref()),
                        )
                        .bind(now)
                        .bind(
                            new.lineage
                                .as_ref()
                                .and_then(|l| l.delivery)
                                .map(ars_domain::Delivery::as_str),
                        )
                        .bind(new.lease.as_ref().map(|l| l.owner.as_str()))
                        .bind(new.lease.as_ref().map(|l| l.expires_ms))
                        .fetch_optional(&mut *conn)
                        .await?,
                )
            }

            /// Takes message `from` and every later message of `new`'s thread out of its
            /// history, as replaced by `run`, inside the caller's transaction (which holds the
            /// thread's lock); answers how many left. `NotReplaceable` unless `from` is a user
            /// message of that thread's history.
            async fn replace_from(
                conn: &mut <$db as sqlx::Database>::Connection,
                new: &ars_domain::NewRun,
                from: ars_domain::MessageId,
                run: ars_domain::RunId,
            ) -> $crate::Result<u64> {
                let target: Option<(String, i64, String, Option<String>)> =
                    sqlx::query_as($crate::sql::MESSAGE_TO_REPLACE)
                        .bind(from.to_string())
                        .fetch_optional(&mut *conn)
                        .await?;
                let refused = |reason| $crate::StoreError::NotReplaceable {
                    message: from,
                    reason,
                };
                let seq = match target {
                    Some((thread, _, _, _)) if thread != new.thread_id.as_str() => {
                        return Err(refused($crate::Unreplaceable::NotInThread));
                    }
                    None => return Err(refused($crate::Unreplaceable::NotInThread)),
                    Some((_, _, role, _)) if role != ars_domain::MessageRole::User.as_str() => {
                        return Err(refused($crate::Unreplaceable::NotUserMessage));
                    }
                    Some((_, _, _, Some(_))) => {
                        return Err(refused($crate::Unreplaceable::AlreadyReplaced));
                    }
                    Some((_, seq, _, None)) => seq,
                };
                let done = sqlx::query($crate::sql::REPLACE_MESSAGES)
                    .bind(new.thread_id.as_str())
                    .bind(seq)
                    .bind(run.to_string())
                    .execute(&mut *conn)
                    .await?;
                Ok(done.rows_affected())
            }

            /// The threads that `sql` selects by its one bind, `key`.
            async fn threads_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                sqlx::query_as::<_, $crate::rows::ThreadRow>(sql)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::ThreadRow::into_thread)
                    .collect()
            }

            /// The runs that `sql` selects by its one bind, `key`.
            async fn runs_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::rows::RunRow>(sql)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::RunRow::into_run)
                    .collect()
            }
        }

        #[async_trait::async_trait]
        impl $crate::Store for $store {
            fn kind(&self) -> &'static str {
                $kind
            }

            async fn create_user(&self, new: $crate::NewUser) -> $crate::Result<ars_domain::User> {
                let now = ars_domain::time::now();
                let user = ars_domain::User {
                    id: ars_domain::UserId::new(),
                    username: new.username,
                    role: new.role,
                    disabled: false,
                    created_at: now,
                    updated_at: now,
                };
                sqlx::query($crate::sql::INSERT_USER)
                    .bind(user.id.to_string())
                    .bind(&user.username)
                    .bind(&new.password_hash)
                    .bind(user.role.as_str())
                    .bind(now)
                    .bind(now)
                    .execute(self.writer())
                    .await?;
                Ok(user)
            }

            async fn user(
                &self,
                id: ars_domain::UserId,
            ) -> $crate::Result<Option<ars_domain::User>> {
                sqlx::query_as::<_, $crate::rows::UserRow>($crate::sql::USER_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::UserRow::into_user)
                    .transpose()
            }

            async fn user_credentials(
                &self,
                username: &str,
            ) -> $crate::Result<Option<(ars_domain::User, String)>> {
                let row = sqlx::query_as::<_, $crate::rows::CredentialsRow>(
                    $crate::sql::CREDENTIALS_BY_USERNAME,
                )
                .bind(username)
                .fetch_optional(&self.pool)
                .await?;
                row.map(|row| Ok((row.user.into_user()?, row.password_hash)))
                    .transpose()
            }

            async fn list_users(&self) -> $crate::Result<Vec<ars_domain::User>> {
                sqlx::query_as::<_, $crate::rows::UserRow>($crate::sql::LIST_USERS)
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::UserRow::into_user)
                    .collect()
            }

            async fn count_users(&self) -> $crate::Result<u64> {
                let (count,): (i64,) = sqlx::query_as($crate::sql::COUNT_USERS)
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
                for chunk in ids.chunks($crate::EXISTING_USERS_CHUNK) {
                    let sql = $crate::sql::existing_users(chunk.len());
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
                let mut tx = self.begin_write().await?;
                Self::lock_users(&mut tx).await?;
                let user = sqlx::query_as::<_, $crate::rows::UserRow>($crate::sql::USER_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_user()?;
                let changed = change.applied_to(&user);
                if user.is_active_admin() && !changed.is_active_admin() {
                    let (others,): (i64,) = sqlx::query_as($crate::sql::OTHER_ACTIVE_ADMINS)
                        .bind(id.to_string())
                        .fetch_one(&mut *tx)
                        .await?;
                    if others == 0 {
                        tx.rollback().await?;
                        return Ok($crate::UserUpdate::LastAdmin(user));
                    }
                }
                let updated = sqlx::query_as::<_, $crate::rows::UserRow>($crate::sql::UPDATE_USER)
                    .bind(id.to_string())
                    .bind(changed.role.as_str())
                    .bind(changed.disabled)
                    .bind(ars_domain::time::now())
                    .fetch_one(&mut *tx)
                    .await?
                    .into_user()?;
                tx.commit().await?;
                Ok($crate::UserUpdate::Updated(updated))
            }

            async fn set_password(
                &self,
                id: ars_domain::UserId,
                password_hash: &str,
                keep: Option<ars_domain::TokenId>,
            ) -> $crate::Result<bool> {
                let mut tx = self.begin_write().await?;
                let done = sqlx::query($crate::sql::SET_PASSWORD)
                    .bind(id.to_string())
                    .bind(password_hash)
                    .bind(ars_domain::time::now())
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() == 0 {
                    tx.rollback().await?;
                    return Ok(false);
                }
                sqlx::query($crate::sql::REVOKE_OTHER_TOKENS)
                    .bind(id.to_string())
                    .bind(keep.map(|t| t.to_string()))
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn create_token(
                &self,
                new: $crate::NewToken,
            ) -> $crate::Result<ars_domain::ApiToken> {
                let token = ars_domain::ApiToken {
                    id: ars_domain::TokenId::new(),
                    user_id: new.user_id,
                    name: new.name,
                    created_at: ars_domain::time::now(),
                    // Microseconds are what PostgreSQL keeps; truncating here makes every store
                    // return exactly the value it was given.
                    expires_at: new
                        .expires_at
                        .map(|at| chrono::SubsecRound::trunc_subsecs(at, 6)),
                    last_used_at: None,
                };
                sqlx::query($crate::sql::INSERT_TOKEN)
                    .bind(token.id.to_string())
                    .bind(token.user_id.to_string())
                    .bind(&token.name)
                    .bind(&new.token_hash)
                    .bind(token.created_at)
                    .bind(token.expires_at)
                    .execute(self.writer())
                    .await?;
                Ok(token)
            }

            async fn token_user(
                &self,
                token_hash: &str,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Option<(ars_domain::User, ars_domain::ApiToken)>> {
                sqlx::query_as::<_, $crate::rows::TokenUserRow>($crate::sql::TOKEN_USER)
                    .bind(token_hash)
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::TokenUserRow::into_pair)
                    .transpose()
            }

            async fn touch_token(
                &self,
                id: ars_domain::TokenId,
                at: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                sqlx::query($crate::sql::TOUCH_TOKEN)
                    .bind(id.to_string())
                    .bind(chrono::SubsecRound::trunc_subsecs(at, 6))
                    .execute(self.writer())
                    .await?;
                Ok(())
            }

            async fn list_tokens(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<ars_domain::ApiToken>> {
                sqlx::query_as::<_, $crate::rows::TokenRow>($crate::sql::LIST_TOKENS)
                    .bind(user.to_string())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::TokenRow::into_token)
                    .collect()
            }

            async fn revoke_token(
                &self,
                user: ars_domain::UserId,
                id: ars_domain::TokenId,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::sql::REVOKE_TOKEN)
                    .bind(id.to_string())
                    .bind(user.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn create_agent(
                &self,
                draft: &ars_domain::AgentDraft,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::Agent> {
                let id = ars_domain::AgentId::new();
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                if draft.is_default {
                    Self::clear_other_defaults(&mut tx, id, now).await?;
                }
                sqlx::query($crate::sql::INSERT_AGENT)
                    .bind(id.to_string())
                    .bind(&draft.slug)
                    .bind(&draft.name)
                    .bind(&draft.description)
                    .bind(draft.backend.as_str())
                    .bind(draft.is_subagent())
                    .bind(sqlx::types::Json(&draft.config))
                    .bind(draft.share_config.visibility.as_str())
                    .bind(owner.map(|owner| owner.to_string()))
                    .bind(draft.is_default)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::sql::INSERT_SHARE,
                    &id.to_string(),
                    &draft.share_config,
                )
                .await?;
                let row = sqlx::query_as::<_, $crate::rows::AgentRow>($crate::sql::AGENT_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?;
                let agent = Self::agent_with_shares(&mut tx, row)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(agent)
            }

            async fn agent(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<Option<ars_domain::Agent>> {
                self.agent_where($crate::sql::AGENT_BY_ID, id.to_string())
                    .await
            }

            async fn agent_by_slug(&self, slug: &str) -> $crate::Result<Option<ars_domain::Agent>> {
                self.agent_where($crate::sql::AGENT_BY_SLUG, slug.to_string())
                    .await
            }

            async fn list_agents(
                &self,
                filter: $crate::AgentFilter,
            ) -> $crate::Result<Vec<ars_domain::Agent>> {
                let viewer = filter.visible_to.map(|user| user.to_string());
                let rows = sqlx::query_as::<_, $crate::rows::AgentRow>($crate::sql::LIST_AGENTS)
                    .bind(filter.include_subagents)
                    .bind(viewer.clone())
                    .fetch_all(&self.pool)
                    .await?;
                let shares =
                    sqlx::query_as::<_, $crate::rows::ShareRow>($crate::sql::LIST_AGENTS_SHARES)
                        .bind(filter.include_subagents)
                        .bind(viewer)
                        .fetch_all(&self.pool)
                        .await?;
                $crate::rows::assemble_agents(rows, shares)
            }

            async fn update_agent(
                &self,
                id: ars_domain::AgentId,
                draft: &ars_domain::AgentDraft,
            ) -> $crate::Result<ars_domain::Agent> {
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                if draft.is_default {
                    Self::clear_other_defaults(&mut tx, id, now).await?;
                }
                let row = sqlx::query_as::<_, $crate::rows::AgentRow>($crate::sql::UPDATE_AGENT)
                    .bind(id.to_string())
                    .bind(&draft.slug)
                    .bind(&draft.name)
                    .bind(&draft.description)
                    .bind(draft.backend.as_str())
                    .bind(draft.is_subagent())
                    .bind(sqlx::types::Json(&draft.config))
                    .bind(draft.share_config.visibility.as_str())
                    .bind(draft.is_default)
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                // Dropping `tx` on any early return rolls the whole write back.
                let row = row.ok_or($crate::StoreError::NotFound)?;
                sqlx::query($crate::sql::DELETE_SHARES)
                    .bind(id.to_string())
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::sql::INSERT_SHARE,
                    &id.to_string(),
                    &draft.share_config,
                )
                .await?;
                let agent = Self::agent_with_shares(&mut tx, Some(row))
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(agent)
            }

            async fn delete_agent(&self, id: ars_domain::AgentId) -> $crate::Result<bool> {
                // Shares and threads (with everything under them) go with the row (ON DELETE
                // CASCADE), in the same statement.
                let done = sqlx::query($crate::sql::DELETE_AGENT)
                    .bind(id.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn set_default_agent(
                &self,
                id: ars_domain::AgentId,
            ) -> $crate::Result<ars_domain::Agent> {
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                Self::clear_other_defaults(&mut tx, id, now).await?;
                let row = sqlx::query_as::<_, $crate::rows::AgentRow>($crate::sql::SET_DEFAULT)
                    .bind(id.to_string())
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                let agent = Self::agent_with_shares(&mut tx, row)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(agent)
            }

            async fn default_agent(&self) -> $crate::Result<Option<ars_domain::Agent>> {
                let mut conn = self.pool.acquire().await?;
                let row = sqlx::query_as::<_, $crate::rows::AgentRow>($crate::sql::DEFAULT_AGENT)
                    .fetch_optional(&mut *conn)
                    .await?;
                Self::agent_with_shares(&mut conn, row).await
            }

            async fn create_skill(
                &self,
                new: &ars_domain::NewSkill,
            ) -> $crate::Result<ars_domain::Skill> {
                let content = &new.content;
                let (file_count, size_bytes) = $crate::rows::stored_skill_totals(content)?;
                let id = ars_domain::SkillId::new().to_string();
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                sqlx::query($crate::sql::INSERT_SKILL)
                    .bind(&id)
                    .bind(&content.name)
                    .bind(&content.description)
                    .bind(content.license.as_deref())
                    .bind(content.compatibility.as_deref())
                    .bind(sqlx::types::Json(&content.metadata))
                    .bind(sqlx::types::Json(&content.allowed_tools))
                    .bind(new.share_config.visibility.as_str())
                    .bind(new.owner_id.map(|owner| owner.to_string()))
                    .bind(&content.version)
                    .bind(file_count)
                    .bind(size_bytes)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::sql::INSERT_SKILL_SHARE,
                    &id,
                    &new.share_config,
                )
                .await?;
                Self::insert_skill_files(&mut tx, &id, &content.files).await?;
                let row = sqlx::query_as::<_, $crate::rows::SkillRow>($crate::sql::SKILL_BY_ID)
                    .bind(&id)
                    .fetch_one(&mut *tx)
                    .await?;
                Self::commit_skill(tx, row).await
            }

            async fn skill(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<Option<ars_domain::Skill>> {
                self.skill_where($crate::sql::SKILL_BY_ID, &id.to_string())
                    .await
            }

            async fn skill_by_name(&self, name: &str) -> $crate::Result<Option<ars_domain::Skill>> {
                self.skill_where($crate::sql::SKILL_BY_NAME, name).await
            }

            async fn list_skills(
                &self,
                filter: $crate::SkillFilter,
            ) -> $crate::Result<Vec<ars_domain::Skill>> {
                let viewer = filter.visible_to.map(|user| user.to_string());
                // One connection, so on PostgreSQL both statements see the same commits as
                // nearly as they can without a transaction.
                let mut conn = self.pool.acquire().await?;
                let rows = sqlx::query_as::<_, $crate::rows::SkillRow>($crate::sql::LIST_SKILLS)
                    .bind(viewer.clone())
                    .fetch_all(&mut *conn)
                    .await?;
                let shares =
                    sqlx::query_as::<_, $crate::rows::ShareRow>($crate::sql::LIST_SKILLS_SHARES)
                        .bind(viewer)
                        .fetch_all(&mut *conn)
                        .await?;
                $crate::rows::assemble_skills(rows, shares)
            }

            async fn replace_skill_content(
                &self,
                id: ars_domain::SkillId,
                content: &ars_domain::SkillContent,
            ) -> $crate::Result<ars_domain::Skill> {
                let (file_count, size_bytes) = $crate::rows::stored_skill_totals(content)?;
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                // The update matches only while the name is unchanged; it also takes the row's
                // lock (PostgreSQL), so concurrent replacements of one skill take turns.
                let row =
                    sqlx::query_as::<_, $crate::rows::SkillRow>($crate::sql::REPLACE_SKILL_CONTENT)
                        .bind(&id)
                        .bind(&content.name)
                        .bind(&content.description)
                        .bind(content.license.as_deref())
                        .bind(content.compatibility.as_deref())
                        .bind(sqlx::types::Json(&content.metadata))
                        .bind(sqlx::types::Json(&content.allowed_tools))
                        .bind(&content.version)
                        .bind(file_count)
                        .bind(size_bytes)
                        .bind(ars_domain::time::now())
                        .fetch_optional(&mut *tx)
                        .await?;
                let Some(row) = row else {
                    // Dropping `tx` rolls back; say why nothing matched.
                    let stored: Option<(String,)> = sqlx::query_as($crate::sql::SKILL_NAME)
                        .bind(&id)
                        .fetch_optional(&mut *tx)
                        .await?;
                    return Err(match stored {
                        None => $crate::StoreError::NotFound,
                        Some((name,)) => $crate::StoreError::Invalid(format!(
                            "a skill keeps its name: this one is `{name}`, not `{}`",
                            content.name
                        )),
                    });
                };
                sqlx::query($crate::sql::DELETE_SKILL_FILES)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_skill_files(&mut tx, &id, &content.files).await?;
                Self::commit_skill(tx, row).await
            }

            async fn update_skill_share(
                &self,
                id: ars_domain::SkillId,
                share: &ars_domain::ShareConfig,
            ) -> $crate::Result<ars_domain::Skill> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                let row = sqlx::query_as::<_, $crate::rows::SkillRow>(
                    $crate::sql::UPDATE_SKILL_VISIBILITY,
                )
                .bind(&id)
                .bind(share.visibility.as_str())
                .bind(ars_domain::time::now())
                .fetch_optional(&mut *tx)
                .await?;
                let row = row.ok_or($crate::StoreError::NotFound)?;
                sqlx::query($crate::sql::DELETE_SKILL_SHARES)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(&mut tx, $crate::sql::INSERT_SKILL_SHARE, &id, share).await?;
                Self::commit_skill(tx, row).await
            }

            async fn delete_skill(&self, id: ars_domain::SkillId) -> $crate::Result<bool> {
                let done = sqlx::query($crate::sql::DELETE_SKILL)
                    .bind(id.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn skill_files(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<Vec<ars_domain::SkillFileInfo>> {
                sqlx::query_as::<_, $crate::rows::SkillFileInfoRow>($crate::sql::SKILL_FILE_INFOS)
                    .bind(id.to_string())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::SkillFileInfoRow::into_info)
                    .collect()
            }

            async fn skill_file(
                &self,
                id: ars_domain::SkillId,
                path: &str,
            ) -> $crate::Result<Option<Vec<u8>>> {
                let row: Option<(Vec<u8>,)> = sqlx::query_as($crate::sql::SKILL_FILE)
                    .bind(id.to_string())
                    .bind(path)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(row.map(|(content,)| content))
            }

            async fn skill_contents(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<Vec<ars_domain::SkillFile>> {
                let rows =
                    sqlx::query_as::<_, $crate::rows::SkillFileRow>($crate::sql::SKILL_CONTENTS)
                        .bind(id.to_string())
                        .fetch_all(&self.pool)
                        .await?;
                Ok(rows
                    .into_iter()
                    .map($crate::rows::SkillFileRow::into_file)
                    .collect())
            }

            async fn create_mcp_server(
                &self,
                id: ars_domain::McpServerId,
                fields: &ars_domain::McpServerFields,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::McpServer> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                let row = sqlx::query_as::<_, $crate::mcp_rows::McpServerRow>(
                    $crate::sql::INSERT_MCP_SERVER,
                )
                .bind(&id)
                .bind(&fields.slug)
                .bind(&fields.name)
                .bind(&fields.description)
                .bind($crate::mcp_rows::transport_type(&fields.transport))
                .bind(sqlx::types::Json(&fields.transport))
                .bind(fields.enabled_tools.as_ref().map(sqlx::types::Json))
                .bind(fields.share_config.visibility.as_str())
                .bind(owner.map(|owner| owner.to_string()))
                .bind(ars_domain::time::now())
                .fetch_one(&mut *tx)
                .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::sql::INSERT_MCP_SERVER_SHARE,
                    &id,
                    &fields.share_config,
                )
                .await?;
                let server = Self::mcp_server_with_shares(&mut tx, Some(row))
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(server)
            }

            async fn mcp_server(
                &self,
                id: ars_domain::McpServerId,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                self.mcp_server_where($crate::sql::MCP_SERVER_BY_ID, &id.to_string())
                    .await
            }

            async fn mcp_server_by_slug(
                &self,
                slug: &str,
            ) -> $crate::Result<Option<ars_domain::McpServer>> {
                self.mcp_server_where($crate::sql::MCP_SERVER_BY_SLUG, slug)
                    .await
            }

            async fn list_mcp_servers(
                &self,
                filter: $crate::McpServerFilter,
            ) -> $crate::Result<Vec<ars_domain::McpServer>> {
                let viewer = filter.visible_to.map(|user| user.to_string());
                let mut conn = self.pool.acquire().await?;
                let rows = sqlx::query_as::<_, $crate::mcp_rows::McpServerRow>(
                    $crate::sql::LIST_MCP_SERVERS,
                )
                .bind(viewer.clone())
                .fetch_all(&mut *conn)
                .await?;
                let shares = sqlx::query_as::<_, $crate::rows::ShareRow>(
                    $crate::sql::LIST_MCP_SERVERS_SHARES,
                )
                .bind(viewer)
                .fetch_all(&mut *conn)
                .await?;
                $crate::mcp_rows::assemble_servers(rows, shares)
            }

            async fn update_mcp_server(
                &self,
                id: ars_domain::McpServerId,
                fields: &ars_domain::McpServerFields,
            ) -> $crate::Result<ars_domain::McpServer> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                let row = sqlx::query_as::<_, $crate::mcp_rows::McpServerRow>(
                    $crate::sql::UPDATE_MCP_SERVER,
                )
                .bind(&id)
                .bind(&fields.name)
                .bind(&fields.description)
                .bind($crate::mcp_rows::transport_type(&fields.transport))
                .bind(sqlx::types::Json(&fields.transport))
                .bind(fields.enabled_tools.as_ref().map(sqlx::types::Json))
                .bind(fields.share_config.visibility.as_str())
                .bind(ars_domain::time::now())
                .fetch_optional(&mut *tx)
                .await?;
                let row = row.ok_or($crate::StoreError::NotFound)?;
                sqlx::query($crate::sql::DELETE_MCP_SERVER_SHARES)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::sql::INSERT_MCP_SERVER_SHARE,
                    &id,
                    &fields.share_config,
                )
                .await?;
                let server = Self::mcp_server_with_shares(&mut tx, Some(row))
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(server)
            }

            async fn delete_mcp_server(&self, id: ars_domain::McpServerId) -> $crate::Result<bool> {
                let done = sqlx::query($crate::sql::DELETE_MCP_SERVER)
                    .bind(id.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn create_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
                fields: &ars_domain::KnowledgeBaseFields,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                sqlx::query($crate::kb_sql::INSERT_KNOWLEDGE_BASE)
                    .bind(&id)
                    .bind(&fields.slug)
                    .bind(&fields.name)
                    .bind(&fields.description)
                    .bind(sqlx::types::Json(&fields.settings))
                    .bind(fields.share_config.visibility.as_str())
                    .bind(owner.map(|owner| owner.to_string()))
                    .bind(ars_domain::time::now())
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::kb_sql::INSERT_KNOWLEDGE_BASE_SHARE,
                    &id,
                    &fields.share_config,
                )
                .await?;
                Self::commit_knowledge_base(tx, &id).await
            }

            async fn knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                self.knowledge_base_where($crate::kb_sql::KNOWLEDGE_BASE_BY_ID, &id.to_string())
                    .await
            }

            async fn knowledge_base_by_slug(
                &self,
                slug: &str,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                self.knowledge_base_where($crate::kb_sql::KNOWLEDGE_BASE_BY_SLUG, slug)
                    .await
            }

            async fn list_knowledge_bases(
                &self,
                filter: $crate::KnowledgeBaseFilter,
            ) -> $crate::Result<Vec<ars_domain::KnowledgeBase>> {
                let viewer = filter.visible_to.map(|user| user.to_string());
                let mut conn = self.pool.acquire().await?;
                let rows = sqlx::query_as::<_, $crate::kb_rows::KnowledgeBaseRow>(
                    $crate::kb_sql::LIST_KNOWLEDGE_BASES,
                )
                .bind(viewer.clone())
                .fetch_all(&mut *conn)
                .await?;
                let shares = sqlx::query_as::<_, $crate::rows::ShareRow>(
                    $crate::kb_sql::LIST_KNOWLEDGE_BASES_SHARES,
                )
                .bind(viewer)
                .fetch_all(&mut *conn)
                .await?;
                $crate::kb_rows::assemble_knowledge_bases(rows, shares)
            }

            async fn update_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
                fields: &ars_domain::KnowledgeBaseFields,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                let done = sqlx::query($crate::kb_sql::UPDATE_KNOWLEDGE_BASE)
                    .bind(&id)
                    .bind(&fields.name)
                    .bind(&fields.description)
                    .bind(sqlx::types::Json(&fields.settings))
                    .bind(fields.share_config.visibility.as_str())
                    .bind(ars_domain::time::now())
                    .execute(&mut *tx)
                    .await?;
                if done.rows_affected() == 0 {
                    return Err($crate::StoreError::NotFound);
                }
                sqlx::query($crate::kb_sql::DELETE_KNOWLEDGE_BASE_SHARES)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_shares(
                    &mut tx,
                    $crate::kb_sql::INSERT_KNOWLEDGE_BASE_SHARE,
                    &id,
                    &fields.share_config,
                )
                .await?;
                Self::commit_knowledge_base(tx, &id).await
            }

            async fn delete_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::kb_sql::DELETE_KNOWLEDGE_BASE)
                    .bind(id.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn put_kb_document(
                &self,
                kb_id: ars_domain::KnowledgeBaseId,
                new: ars_domain::NewKbDocument,
            ) -> $crate::Result<ars_domain::KbDocument> {
                let kb_id = kb_id.to_string();
                let size = $crate::kb_rows::stored_size(&new.bytes)?;
                let mut tx = self.begin_write().await?;
                let kb: Option<(String,)> = sqlx::query_as($crate::kb_sql::KNOWLEDGE_BASE_EXISTS)
                    .bind(&kb_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                if kb.is_none() {
                    return Err($crate::StoreError::NotFound);
                }
                let document = sqlx::query_as::<_, $crate::kb_rows::KbDocumentRow>(
                    $crate::kb_sql::PUT_KB_DOCUMENT,
                )
                .bind(new.id.to_string())
                .bind(&kb_id)
                .bind(&new.name)
                .bind(&new.format)
                .bind(size)
                .bind(&new.sha256)
                .bind(new.uploaded_by.map(|user| user.to_string()))
                .bind(ars_domain::time::now())
                .fetch_one(&mut *tx)
                .await?
                .into_document()?;
                // A replaced document keeps its id, so its file row is replaced too.
                sqlx::query($crate::kb_sql::PUT_KB_DOCUMENT_FILE)
                    .bind(document.id.to_string())
                    .bind(&new.bytes)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(document)
            }

            async fn kb_documents(
                &self,
                kb_id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<Vec<ars_domain::KbDocument>> {
                sqlx::query_as::<_, $crate::kb_rows::KbDocumentRow>($crate::kb_sql::KB_DOCUMENTS)
                    .bind(kb_id.to_string())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::kb_rows::KbDocumentRow::into_document)
                    .collect()
            }

            async fn kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Option<ars_domain::KbDocument>> {
                sqlx::query_as::<_, $crate::kb_rows::KbDocumentRow>($crate::kb_sql::KB_DOCUMENT)
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::kb_rows::KbDocumentRow::into_document)
                    .transpose()
            }

            async fn kb_document_file(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Option<Vec<u8>>> {
                let row: Option<(Vec<u8>,)> = sqlx::query_as($crate::kb_sql::KB_DOCUMENT_FILE)
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(row.map(|(bytes,)| bytes))
            }

            async fn delete_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<bool> {
                let id = id.to_string();
                let mut tx = self.begin_write().await?;
                let kb: Option<(String,)> = sqlx::query_as($crate::kb_sql::DELETE_KB_DOCUMENT)
                    .bind(&id)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some((kb_id,)) = kb else {
                    return Ok(false);
                };
                Self::append_kb_change(&mut tx, &kb_id, &id, ars_domain::time::now()).await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn kb_claimable(
                &self,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<bool> {
                let now = chrono::SubsecRound::trunc_subsecs(now, 6);
                let waiting: Option<(String,)> =
                    sqlx::query_as($crate::kb_sql::ANY_CLAIMABLE_KB_DOCUMENT)
                        .bind(now)
                        .fetch_optional(&self.pool)
                        .await?;
                Ok(waiting.is_some())
            }

            async fn claim_kb_document(
                &self,
                now: chrono::DateTime<chrono::Utc>,
                lease: std::time::Duration,
            ) -> $crate::Result<Option<ars_domain::KbDocument>> {
                let now = chrono::SubsecRound::trunc_subsecs(now, 6);
                let until = chrono::Duration::from_std(lease)
                    .ok()
                    .and_then(|lease| now.checked_add_signed(lease))
                    .ok_or_else(|| {
                        $crate::StoreError::Invalid(format!("a lease of {lease:?} is too long"))
                    })?;
                sqlx::query_as::<_, $crate::kb_rows::KbDocumentRow>(Self::CLAIM_KB_DOCUMENT)
                    .bind(now)
                    .bind(until)
                    .fetch_optional(self.writer())
                    .await?
                    .map($crate::kb_rows::KbDocumentRow::into_document)
                    .transpose()
            }

            async fn renew_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                progress: f32,
                lease_until: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::kb_sql::RENEW_KB_DOCUMENT)
                    .bind(id.to_string())
                    .bind(i64::from(version))
                    .bind($crate::kb_rows::stored_progress(progress))
                    .bind(chrono::SubsecRound::trunc_subsecs(lease_until, 6))
                    .bind(ars_domain::time::now())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn finish_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                chunks: &[ars_domain::NewKbChunk],
            ) -> $crate::Result<bool> {
                let stored = $crate::kb_rows::stored_chunks(chunks)?;
                let count = i64::try_from(chunks.len()).map_err(|_| {
                    $crate::StoreError::Invalid(format!("{} chunks are too many", chunks.len()))
                })?;
                let id = id.to_string();
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                // First, so it takes the document's row lock (PostgreSQL): a re-upload or a
                // deletion racing this waits for the commit, or wins and makes this a no-op.
                let kb: Option<(String,)> = sqlx::query_as($crate::kb_sql::FINISH_KB_DOCUMENT)
                    .bind(&id)
                    .bind(i64::from(version))
                    .bind(count)
                    .bind(now)
                    .fetch_optional(&mut *tx)
                    .await?;
                let Some((kb_id,)) = kb else {
                    return Ok(false);
                };
                sqlx::query($crate::kb_sql::DELETE_KB_CHUNKS)
                    .bind(&id)
                    .execute(&mut *tx)
                    .await?;
                Self::insert_kb_chunks(&mut tx, &id, &kb_id, &stored).await?;
                Self::append_kb_change(&mut tx, &kb_id, &id, now).await?;
                tx.commit().await?;
                Ok(true)
            }

            async fn fail_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                error: &str,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::kb_sql::FAIL_KB_DOCUMENT)
                    .bind(id.to_string())
                    .bind(i64::from(version))
                    .bind(error)
                    .bind(ars_domain::time::now())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn release_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::kb_sql::RELEASE_KB_DOCUMENT)
                    .bind(id.to_string())
                    .bind(i64::from(version))
                    .bind(ars_domain::time::now())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn retry_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::kb_sql::RETRY_KB_DOCUMENT)
                    .bind(id.to_string())
                    .bind(ars_domain::time::now())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn kb_chunks(
                &self,
                document_id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Vec<ars_domain::KbChunk>> {
                sqlx::query_as::<_, $crate::kb_rows::KbChunkRow>($crate::kb_sql::KB_CHUNKS)
                    .bind(document_id.to_string())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::kb_rows::KbChunkRow::into_chunk)
                    .collect()
            }

            async fn kb_chunks_by_ids(
                &self,
                ids: &[(ars_domain::KbDocumentId, u32)],
            ) -> $crate::Result<Vec<ars_domain::KbChunk>> {
                let mut wanted = Vec::with_capacity(ids.len());
                let mut seen = std::collections::HashSet::new();
                wanted.extend(ids.iter().copied().filter(|id| seen.insert(*id)));
                let mut found = std::collections::HashMap::new();
                // Batches keep each statement well under both databases' bind-parameter
                // limits.
                for batch in wanted.chunks($crate::kb_sql::KB_CHUNK_IDS_PER_SELECT) {
                    let sql = $crate::kb_sql::kb_chunks_by_ids(batch.len());
                    let mut query = sqlx::query_as::<_, $crate::kb_rows::KbChunkRow>(&sql);
                    for (document, ordinal) in batch {
                        query = query.bind(document.to_string()).bind(i64::from(*ordinal));
                    }
                    for row in query.fetch_all(&self.pool).await? {
                        let chunk = row.into_chunk()?;
                        found.insert((chunk.document_id, chunk.ordinal), chunk);
                    }
                }
                Ok(wanted.iter().filter_map(|id| found.remove(id)).collect())
            }

            async fn kb_chunks_page(
                &self,
                kb_id: ars_domain::KnowledgeBaseId,
                after: Option<(ars_domain::KbDocumentId, u32)>,
                limit: u32,
            ) -> $crate::Result<Vec<ars_domain::KbChunk>> {
                // From the start: every document id sorts after '' and every ordinal after -1.
                let (document, ordinal) = after
                    .map_or((String::new(), -1), |(document, ordinal)| {
                        (document.to_string(), i64::from(ordinal))
                    });
                sqlx::query_as::<_, $crate::kb_rows::KbChunkRow>($crate::kb_sql::KB_CHUNKS_PAGE)
                    .bind(kb_id.to_string())
                    .bind(document)
                    .bind(ordinal)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::kb_rows::KbChunkRow::into_chunk)
                    .collect()
            }

            async fn kb_changes_since(
                &self,
                seq: i64,
                limit: u32,
            ) -> $crate::Result<Vec<$crate::KbChange>> {
                sqlx::query_as::<_, $crate::kb_rows::KbChangeRow>($crate::kb_sql::KB_CHANGES_SINCE)
                    .bind(seq)
                    .bind(i64::from(limit))
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::kb_rows::KbChangeRow::into_change)
                    .collect()
            }

            async fn kb_change_head(&self) -> $crate::Result<i64> {
                let (head,): (i64,) = sqlx::query_as($crate::kb_sql::KB_CHANGE_HEAD)
                    .fetch_one(&self.pool)
                    .await?;
                Ok(head)
            }

            async fn save_mcp_session(
                &self,
                id: &str,
                state: &str,
                expire_before: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<()> {
                let mut tx = self.begin_write().await?;
                sqlx::query($crate::sql::EXPIRE_MCP_SESSIONS)
                    .bind(expire_before)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query($crate::sql::UPSERT_MCP_SESSION)
                    .bind(id)
                    .bind(state)
                    .bind(ars_domain::time::now())
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn mcp_session(&self, id: &str) -> $crate::Result<Option<String>> {
                let row: Option<(String,)> = sqlx::query_as($crate::sql::MCP_SESSION)
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
                Ok(row.map(|(state,)| state))
            }

            async fn delete_mcp_session(&self, id: &str) -> $crate::Result<()> {
                sqlx::query($crate::sql::DELETE_MCP_SESSION)
                    .bind(id)
                    .execute(self.writer())
                    .await?;
                Ok(())
            }

            async fn bind_mcp_session(
                &self,
                id: &str,
                user: ars_domain::UserId,
            ) -> $crate::Result<bool> {
                let done = sqlx::query($crate::sql::BIND_MCP_SESSION)
                    .bind(id)
                    .bind(user.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            async fn mcp_session_owner(
                &self,
                id: &str,
            ) -> $crate::Result<Option<ars_domain::UserId>> {
                let row: Option<(String,)> = sqlx::query_as($crate::sql::MCP_SESSION_OWNER)
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
                sqlx::query($crate::sql::UPSERT_MCP_CALL)
                    .bind(session_id)
                    .bind(request_id)
                    .bind(run.to_string())
                    .execute(self.writer())
                    .await?;
                Ok(())
            }

            async fn mcp_call_run(
                &self,
                session_id: &str,
                request_id: &str,
            ) -> $crate::Result<Option<ars_domain::RunId>> {
                let row: Option<(String,)> = sqlx::query_as($crate::sql::MCP_CALL_RUN)
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
                sqlx::query($crate::sql::DELETE_MCP_CALL)
                    .bind(session_id)
                    .bind(request_id)
                    .execute(self.writer())
                    .await?;
                Ok(())
            }

            async fn create_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
                fields: &ars_domain::ModelProviderFields,
                created_by: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                Self::bump_model_settings(&mut tx, now).await?;
                let row = sqlx::query_as::<_, $crate::provider_rows::ModelProviderRow>(
                    $crate::sql::INSERT_MODEL_PROVIDER,
                )
                .bind(id.to_string())
                .bind(&fields.name)
                .bind(fields.kind.as_str())
                .bind(&fields.base_url)
                .bind(fields.api_key.as_ref().map(ars_domain::Sealed::as_str))
                .bind($crate::provider_rows::stored_headers(fields))
                .bind(sqlx::types::Json(&fields.models))
                .bind(created_by.map(|user| user.to_string()))
                .bind(now)
                .fetch_one(&mut *tx)
                .await?;
                // Decoded before the commit: a row that cannot be read back is not written.
                let provider = row.into_provider()?;
                tx.commit().await?;
                Ok(provider)
            }

            async fn model_provider(
                &self,
                id: ars_domain::ModelProviderId,
            ) -> $crate::Result<Option<ars_domain::ModelProvider>> {
                sqlx::query_as::<_, $crate::provider_rows::ModelProviderRow>(
                    $crate::sql::MODEL_PROVIDER_BY_ID,
                )
                .bind(id.to_string())
                .fetch_optional(&self.pool)
                .await?
                .map($crate::provider_rows::ModelProviderRow::into_provider)
                .transpose()
            }

            async fn list_model_providers(&self) -> $crate::Result<Vec<ars_domain::ModelProvider>> {
                sqlx::query_as::<_, $crate::provider_rows::ModelProviderRow>(
                    $crate::sql::LIST_MODEL_PROVIDERS,
                )
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::provider_rows::ModelProviderRow::into_provider)
                .collect()
            }

            async fn update_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
                fields: &ars_domain::ModelProviderFields,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                Self::bump_model_settings(&mut tx, now).await?;
                let old: Option<(String,)> = sqlx::query_as($crate::sql::MODEL_PROVIDER_NAME)
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?;
                let (old,) = old.ok_or($crate::StoreError::NotFound)?;
                let row = sqlx::query_as::<_, $crate::provider_rows::ModelProviderRow>(
                    $crate::sql::UPDATE_MODEL_PROVIDER,
                )
                .bind(id.to_string())
                .bind(&fields.name)
                .bind(fields.kind.as_str())
                .bind(&fields.base_url)
                .bind(fields.api_key.as_ref().map(ars_domain::Sealed::as_str))
                .bind($crate::provider_rows::stored_headers(fields))
                .bind(sqlx::types::Json(&fields.models))
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or($crate::StoreError::NotFound)?;
                if old != fields.name {
                    sqlx::query($crate::sql::RENAME_DEFAULT_MODEL_PROVIDER)
                        .bind(&old)
                        .bind(&fields.name)
                        .execute(&mut *tx)
                        .await?;
                }
                let provider = row.into_provider()?;
                tx.commit().await?;
                Ok(provider)
            }

            async fn set_model_provider_models(
                &self,
                id: ars_domain::ModelProviderId,
                models: &[String],
                refreshed_at: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<ars_domain::ModelProvider> {
                let mut tx = self.begin_write().await?;
                Self::bump_model_settings(&mut tx, refreshed_at).await?;
                let row = sqlx::query_as::<_, $crate::provider_rows::ModelProviderRow>(
                    $crate::sql::SET_MODEL_PROVIDER_MODELS,
                )
                .bind(id.to_string())
                .bind(sqlx::types::Json(models))
                .bind(refreshed_at)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or($crate::StoreError::NotFound)?;
                let provider = row.into_provider()?;
                tx.commit().await?;
                Ok(provider)
            }

            async fn delete_model_provider(
                &self,
                id: ars_domain::ModelProviderId,
            ) -> $crate::Result<Option<$crate::DeletedProvider>> {
                let mut tx = self.begin_write().await?;
                Self::bump_model_settings(&mut tx, ars_domain::time::now()).await?;
                let name: Option<(String,)> = sqlx::query_as($crate::sql::MODEL_PROVIDER_NAME)
                    .bind(id.to_string())
                    .fetch_optional(&mut *tx)
                    .await?;
                // Dropping `tx` rolls the version back too: nothing changed.
                let Some((name,)) = name else {
                    return Ok(None);
                };
                sqlx::query($crate::sql::DELETE_MODEL_PROVIDER)
                    .bind(id.to_string())
                    .execute(&mut *tx)
                    .await?;
                let cleared = sqlx::query($crate::sql::CLEAR_DEFAULT_MODEL_OF)
                    .bind(&name)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Some($crate::DeletedProvider {
                    default_model_cleared: cleared.rows_affected() > 0,
                }))
            }

            async fn model_settings(&self) -> $crate::Result<$crate::ModelSettings> {
                let row = sqlx::query_as::<_, $crate::provider_rows::ModelSettingsRow>(
                    $crate::sql::MODEL_SETTINGS,
                )
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| $crate::StoreError::Corrupt("model_settings has no row".into()))?;
                Ok(row.into_settings())
            }

            async fn model_settings_version(&self) -> $crate::Result<i64> {
                let (version,): (i64,) = sqlx::query_as($crate::sql::MODEL_SETTINGS_VERSION)
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
                let row = sqlx::query_as::<_, $crate::provider_rows::ModelSettingsRow>(
                    $crate::sql::SET_DEFAULT_MODEL,
                )
                .bind(model)
                .bind(ars_domain::time::now())
                .fetch_optional(self.writer())
                .await?
                .ok_or_else(|| $crate::StoreError::Corrupt("model_settings has no row".into()))?;
                Ok(row.into_settings())
            }

            async fn create_thread(
                &self,
                thread: &ars_domain::Thread,
            ) -> $crate::Result<ars_domain::Thread> {
                // Microseconds are what PostgreSQL keeps; truncating here makes every store
                // return exactly the value it was given.
                let micros =
                    |at: chrono::DateTime<chrono::Utc>| chrono::SubsecRound::trunc_subsecs(at, 6);
                sqlx::query_as::<_, $crate::rows::ThreadRow>($crate::sql::INSERT_THREAD)
                    .bind(thread.id.as_str())
                    .bind(thread.user_id.to_string())
                    .bind(thread.agent_id.to_string())
                    .bind(&thread.title)
                    .bind(thread.parent_thread_id().map(ars_domain::ThreadId::as_str))
                    .bind(thread.subagent_slug())
                    .bind(&thread.runtime_scope_id)
                    .bind(&thread.workdir_path)
                    .bind(micros(thread.created_at))
                    .bind(micros(thread.updated_at))
                    .fetch_one(self.writer())
                    .await?
                    .into_thread()
            }

            async fn thread(
                &self,
                id: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<ars_domain::Thread>> {
                sqlx::query_as::<_, $crate::rows::ThreadRow>($crate::sql::THREAD_BY_ID)
                    .bind(id.as_str())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::ThreadRow::into_thread)
                    .transpose()
            }

            async fn list_threads(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                self.threads_where($crate::sql::LIST_THREADS, &user.to_string())
                    .await
            }

            async fn child_threads(
                &self,
                parent: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                self.threads_where($crate::sql::CHILD_THREADS, parent.as_str())
                    .await
            }

            async fn rename_thread(
                &self,
                id: &ars_domain::ThreadId,
                title: &str,
            ) -> $crate::Result<ars_domain::Thread> {
                sqlx::query_as::<_, $crate::rows::ThreadRow>($crate::sql::RENAME_THREAD)
                    .bind(id.as_str())
                    .bind(title)
                    .bind(ars_domain::time::now())
                    .fetch_optional(self.writer())
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_thread()
            }

            async fn delete_thread(&self, id: &ars_domain::ThreadId) -> $crate::Result<bool> {
                // Child threads, messages and runs go with the row (ON DELETE CASCADE,
                // recursively), in the same statement and so the same transaction.
                let done = sqlx::query($crate::sql::DELETE_THREAD)
                    .bind(id.as_str())
                    .execute(self.writer())
                    .await?;
                Ok(done.rows_affected() > 0)
            }

            async fn append_message(
                &self,
                message: &ars_domain::NewMessage,
            ) -> $crate::Result<ars_domain::Message> {
                let now = ars_domain::time::now();
                let mut tx = self.begin_write().await?;
                // Bumping `updated_at` first also takes the thread's row lock (PostgreSQL;
                // SQLite's write lock is already held), so the next seq is read only after every
                // earlier append to this thread has committed.
                let touched = sqlx::query($crate::sql::TOUCH_THREAD)
                    .bind(message.thread_id.as_str())
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                if touched.rows_affected() == 0 {
                    return Err($crate::StoreError::NotFound);
                }
                // The fence: a run's messages are written only while it is active, so an
                // executor cut off (cancelled or reaped elsewhere) cannot add to the thread. The
                // check locks the run's row until the commit: the run cannot end in between.
                if let Some(run) = message.run_id {
                    let active: Option<(String,)> = sqlx::query_as($crate::sql::RUN_IS_ACTIVE)
                        .bind(run.to_string())
                        .fetch_optional(&mut *tx)
                        .await?;
                    if active.is_none() {
                        return Err($crate::StoreError::RunEnded { run });
                    }
                }
                let row =
                    sqlx::query_as::<_, $crate::rows::MessageRow>($crate::sql::APPEND_MESSAGE)
                        .bind(ars_domain::MessageId::new().to_string())
                        .bind(message.thread_id.as_str())
                        .bind(message.run_id.map(|id| id.to_string()))
                        .bind(message.role.as_str())
                        .bind(&message.content)
                        .bind(sqlx::types::Json(&message.tool_calls))
                        .bind(message.tool_call_id.as_deref())
                        .bind(message.tool_name.as_deref())
                        .bind(message.is_error)
                        .bind(message.notice.as_ref().map(sqlx::types::Json))
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await?;
                // Decoded before the commit: a message that cannot be read back is not written.
                let stored = row.into_message()?;
                tx.commit().await?;
                Ok(stored)
            }

            async fn messages(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                sqlx::query_as::<_, $crate::rows::MessageRow>($crate::sql::THREAD_MESSAGES)
                    .bind(thread.as_str())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::MessageRow::into_message)
                    .collect()
            }

            async fn all_messages(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                sqlx::query_as::<_, $crate::rows::MessageRow>($crate::sql::ALL_THREAD_MESSAGES)
                    .bind(thread.as_str())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::rows::MessageRow::into_message)
                    .collect()
            }

            async fn create_run_with_input(
                &self,
                new: &ars_domain::NewRun,
                replace_from: Option<ars_domain::MessageId>,
            ) -> $crate::Result<$crate::RunWithInput> {
                let id = ars_domain::RunId::new();
                for _ in 0..$crate::CREATE_RUN_ATTEMPTS {
                    let now = ars_domain::time::now();
                    let mut tx = self.begin_write().await?;
                    // The thread's row lock first, as in `append_message`: appends and
                    // replacements on this thread queue behind this transaction.
                    let touched = sqlx::query($crate::sql::TOUCH_THREAD)
                        .bind(new.thread_id.as_str())
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    if touched.rows_affected() == 0 {
                        return Err($crate::StoreError::Invalid(format!(
                            "no thread {}",
                            new.thread_id
                        )));
                    }
                    let row = Self::insert_run(&mut tx, id, new, now).await?;
                    let Some(row) = row else {
                        // Busy: the one-active-run index refused it. Under READ COMMITTED this
                        // statement sees the run that holds the thread, once committed.
                        let active: Option<(String,)> = sqlx::query_as($crate::sql::ACTIVE_RUN_ID)
                            .bind(new.thread_id.as_str())
                            .fetch_optional(&mut *tx)
                            .await?;
                        drop(tx);
                        if let Some((active,)) = active {
                            let active = $crate::rows::parse_run_id(&active)?;
                            return Err($crate::StoreError::Busy { active });
                        }
                        // That run ended in between: the thread is free again.
                        continue;
                    };
                    let run = row.into_run()?;
                    let replaced = match replace_from {
                        Some(from) => Self::replace_from(&mut tx, new, from, run.id).await?,
                        None => 0,
                    };
                    let input =
                        sqlx::query_as::<_, $crate::rows::MessageRow>($crate::sql::APPEND_MESSAGE)
                            .bind(ars_domain::MessageId::new().to_string())
                            .bind(new.thread_id.as_str())
                            .bind(run.id.to_string())
                            .bind(ars_domain::MessageRole::User.as_str())
                            .bind(&new.input)
                            .bind(sqlx::types::Json(Vec::<ars_domain::ToolCallRecord>::new()))
                            .bind(None::<&str>)
                            .bind(None::<&str>)
                            .bind(false)
                            .bind(None::<sqlx::types::Json<ars_domain::MessageNotice>>)
                            .bind(now)
                            .fetch_one(&mut *tx)
                            .await?
                            .into_message()?;
                    tx.commit().await?;
                    return Ok($crate::RunWithInput {
                        run,
                        input,
                        replaced,
                    });
                }
                Err($crate::StoreError::Conflict { field: "thread_id" })
            }

            async fn create_run(
                &self,
                new: &ars_domain::NewRun,
            ) -> $crate::Result<ars_domain::Run> {
                let id = ars_domain::RunId::new();
                let now = ars_domain::time::now();
                for _ in 0..$crate::CREATE_RUN_ATTEMPTS {
                    // The writer connection is given back before the busy check reads the pool.
                    let row = {
                        let mut conn = self.writer().acquire().await?;
                        Self::insert_run(&mut conn, id, new, now).await?
                    };
                    if let Some(row) = row {
                        return row.into_run();
                    }
                    // The one-active-run index refused it: name the run that holds the thread.
                    let active: Option<(String,)> = sqlx::query_as($crate::sql::ACTIVE_RUN_ID)
                        .bind(new.thread_id.as_str())
                        .fetch_optional(&self.pool)
                        .await?;
                    if let Some((active,)) = active {
                        let active = $crate::rows::parse_run_id(&active)?;
                        return Err($crate::StoreError::Busy { active });
                    }
                    // That run ended between the two statements: the thread is free again.
                }
                Err($crate::StoreError::Conflict { field: "thread_id" })
            }

            async fn run(&self, id: ars_domain::RunId) -> $crate::Result<Option<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::RUN_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::RunRow::into_run)
                    .transpose()
            }

            async fn agent_active_run(
                &self,
                agent: ars_domain::AgentId,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::AGENT_ACTIVE_RUN)
                    .bind(agent.to_string())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::RunRow::into_run)
                    .transpose()
            }

            async fn active_run(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::ACTIVE_RUN)
                    .bind(thread.as_str())
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::rows::RunRow::into_run)
                    .transpose()
            }

            async fn thread_runs(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::sql::THREAD_RUNS, thread.as_str())
                    .await
            }

            async fn child_runs(
                &self,
                parent_run: ars_domain::RunId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::sql::CHILD_RUNS, &parent_run.to_string())
                    .await
            }

            async fn subagent_runs(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::sql::SUBAGENT_RUNS, thread.as_str())
                    .await
            }

            async fn mark_run_running(
                &self,
                id: ars_domain::RunId,
            ) -> $crate::Result<ars_domain::Run> {
                let row = sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::MARK_RUN_RUNNING)
                    .bind(id.to_string())
                    .bind(ars_domain::time::now())
                    .fetch_optional(self.writer())
                    .await?;
                match row {
                    Some(row) => row.into_run(),
                    // Not pending (or gone): nothing to start.
                    None => self.existing_run(id).await,
                }
            }

            async fn set_run_usage(
                &self,
                id: ars_domain::RunId,
                usage: ars_domain::Usage,
            ) -> $crate::Result<()> {
                let done = sqlx::query($crate::sql::SET_RUN_USAGE)
                    .bind(id.to_string())
                    .bind($crate::rows::stored_tokens(usage.prompt_tokens)?)
                    .bind($crate::rows::stored_tokens(usage.completion_tokens)?)
                    .execute(self.writer())
                    .await?;
                if done.rows_affected() == 0 {
                    // A finished run keeps its final usage; only a missing run is an error.
                    self.existing_run(id).await?;
                }
                Ok(())
            }

            async fn finish_run(
                &self,
                id: ars_domain::RunId,
                outcome: &ars_domain::RunOutcome,
            ) -> $crate::Result<$crate::FinishedRun> {
                let usage = outcome.usage();
                let row = sqlx::query_as::<_, $crate::rows::RunRow>($crate::sql::FINISH_RUN)
                    .bind(id.to_string())
                    .bind(outcome.status().as_str())
                    .bind(outcome.output())
                    .bind(outcome.error())
                    .bind($crate::rows::stored_tokens(usage.prompt_tokens)?)
                    .bind($crate::rows::stored_tokens(usage.completion_tokens)?)
                    .bind(ars_domain::time::now())
                    .bind(outcome.error_code().map(ars_domain::RunErrorCode::as_str))
                    .fetch_optional(self.writer())
                    .await?;
                match row {
                    Some(row) => Ok($crate::FinishedRun::Ended(row.into_run()?)),
                    // Already terminal (or gone): the first outcome stands.
                    None => Ok($crate::FinishedRun::AlreadyEnded(
                        self.existing_run(id).await?,
                    )),
                }
            }

            async fn renew_leases(
                &self,
                owner: &str,
                expires_ms: i64,
            ) -> $crate::Result<Vec<ars_domain::RunId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::sql::RENEW_LEASES)
                    .bind(owner)
                    .bind(expires_ms)
                    .fetch_all(self.writer())
                    .await?;
                ids.iter()
                    .map(|(id,)| $crate::rows::parse_run_id(id))
                    .collect()
            }

            async fn reap_expired_runs(
                &self,
                now_ms: i64,
            ) -> $crate::Result<Vec<ars_domain::RunId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::sql::REAP_EXPIRED_RUNS)
                    .bind(ars_domain::time::now())
                    .bind($crate::INTERRUPTED_ERROR)
                    .bind(now_ms)
                    .fetch_all(self.writer())
                    .await?;
                ids.iter()
                    .map(|(id,)| $crate::rows::parse_run_id(id))
                    .collect()
            }

            async fn interrupt_active_runs(&self) -> $crate::Result<Vec<ars_domain::RunId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::sql::INTERRUPT_ACTIVE_RUNS)
                    .bind(ars_domain::time::now())
                    .bind($crate::INTERRUPTED_ERROR)
                    .fetch_all(self.writer())
                    .await?;
                ids.iter()
                    .map(|(id,)| $crate::rows::parse_run_id(id))
                    .collect()
            }
        }

        #[cfg(feature = "test-utils")]
        #[async_trait::async_trait]
        impl $crate::test_support::RawSql for $store {
            async fn execute_raw(&self, sql: &str) -> $crate::Result<u64> {
                let done = sqlx::raw_sql(sql).execute(self.writer()).await?;
                Ok(done.rows_affected())
            }
        }
    };
}

pub(crate) use impl_store;
