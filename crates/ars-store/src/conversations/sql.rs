//! [`ConversationStore`](super::ConversationStore) for the SQL stores, expanded for each
//! database by [`impl_conversation_store!`] (see the crate docs for what a store type supplies).

/// Implements `ConversationStore` for `$store` over database `$db`.
macro_rules! impl_conversation_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Inserts `thread` on `conn` (a write's own connection or transaction) and answers
            /// it as stored. Microseconds are what PostgreSQL keeps; truncating here makes every
            /// store return exactly the value it was given.
            async fn insert_thread(
                conn: &mut <$db as sqlx::Database>::Connection,
                thread: &ars_domain::Thread,
            ) -> $crate::Result<ars_domain::Thread> {
                Self::thread_binds(
                    sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(
                        $crate::conversations::queries::INSERT_THREAD,
                    ),
                    thread,
                )
                .fetch_one(&mut *conn)
                .await?
                .into_thread()
            }

            /// `query` with `thread`'s columns as [`INSERT_THREAD`](crate::conversations::queries::INSERT_THREAD)
            /// binds them, after whatever it had bound.
            fn thread_binds<'q, Q: $crate::sql_store::Binds<'q, $db>>(
                query: Q,
                thread: &'q ars_domain::Thread,
            ) -> Q {
                let micros =
                    |at: chrono::DateTime<chrono::Utc>| chrono::SubsecRound::trunc_subsecs(at, 6);
                query
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
            }

            /// Appends `message` (which tells no parent anything) with `at_once`, the store's
            /// [`APPEND_MESSAGE_AT_ONCE`](crate::conversations::queries::APPEND_MESSAGE_AT_ONCE_SQLITE):
            /// the run's usage, the thread's `updated_at` and the message in one query that
            /// begins and ends its own transaction (in a batch, its savepoint). No row back
            /// means the thread is gone or the run is not active, and nothing was written;
            /// which, is read after.
            async fn append_at_once(
                conn: &mut <$db as sqlx::Database>::Connection,
                at_once: $crate::sql_store::AtOnce,
                scope: $crate::sql_store::Scope,
                message: &ars_domain::NewMessage,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<ars_domain::Message> {
                use sqlx::FromRow;
                let spent = message.spent.as_ref();
                let tokens = |pick: fn(&ars_domain::Usage) -> u64| {
                    spent
                        .map(|spent| $crate::runs::rows::stored_tokens(pick(&spent.usage)))
                        .transpose()
                };
                let query = Self::message_binds(sqlx::query(at_once.text(scope)), message, now)
                    .bind(tokens(|usage| usage.prompt_tokens)?)
                    .bind(tokens(|usage| usage.completion_tokens)?)
                    .bind(spent.and_then(|spent| spent.model.as_deref()))
                    .bind(spent.is_some());
                let row = Self::rows_at_once(&mut *conn, query, scope).await?.pop();
                match (row, message.run_id) {
                    // Decoded after its commit: a row the store wrote itself.
                    (Some(row), _) => {
                        $crate::conversations::rows::MessageRow::from_row(&row)?.into_message()
                    }
                    (None, run) => {
                        let thread: Option<(String,)> =
                            sqlx::query_as($crate::conversations::queries::THREAD_EXISTS)
                                .bind(message.thread_id.as_str())
                                .fetch_optional(&mut *conn)
                                .await?;
                        match (thread, run) {
                            (Some(_), Some(run)) => Err($crate::StoreError::RunEnded { run }),
                            _ => Err($crate::StoreError::NotFound),
                        }
                    }
                }
            }

            /// `query` with [`APPEND_MESSAGE`](crate::conversations::queries::APPEND_MESSAGE)'s
            /// binds for `message` (a new id), `$1`–`$12`.
            fn message_binds<'q, Q: $crate::sql_store::Binds<'q, $db>>(
                query: Q,
                message: &'q ars_domain::NewMessage,
                now: chrono::DateTime<chrono::Utc>,
            ) -> Q {
                query
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
                    .bind(message.steer)
                    .bind(now)
            }

            /// The threads that `sql` selects by its one bind, `key`.
            async fn threads_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(sql)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::conversations::rows::ThreadRow::into_thread)
                    .collect()
            }

            /// The messages of `thread` that `sql` selects, in `seq` order.
            async fn messages_where(
                &self,
                sql: &'static str,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(sql)
                    .bind(thread.as_str())
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::conversations::rows::MessageRow::into_message)
                    .collect()
            }
        }

        #[async_trait::async_trait]
        impl $crate::ConversationStore for $store {
            async fn create_thread(
                &self,
                thread: &ars_domain::Thread,
            ) -> $crate::Result<ars_domain::Thread> {
                let thread = thread.clone();
                self.write("create_thread", move |mut conn| async move {
                    Self::insert_thread(&mut conn, &thread).await
                })
                .await
            }

            async fn thread(
                &self,
                id: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<ars_domain::Thread>> {
                sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(
                    $crate::conversations::queries::THREAD_BY_ID,
                )
                .bind(id.as_str())
                .fetch_optional(&self.pool)
                .await?
                .map($crate::conversations::rows::ThreadRow::into_thread)
                .transpose()
            }

            async fn threads(
                &self,
                ids: &[ars_domain::ThreadId],
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                let mut found = Vec::new();
                for chunk in ids.chunks($crate::sql_store::IN_LIST_CHUNK) {
                    let sql = $crate::conversations::queries::threads_by_ids(chunk.len());
                    let mut query =
                        sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(&sql);
                    for id in chunk {
                        query = query.bind(id.as_str());
                    }
                    for row in query.fetch_all(&self.pool).await? {
                        found.push(row.into_thread()?);
                    }
                }
                Ok(found)
            }

            async fn list_threads(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                self.threads_where(
                    $crate::conversations::queries::LIST_THREADS,
                    &user.to_string(),
                )
                .await
            }

            async fn thread_page(
                &self,
                user: ars_domain::UserId,
                limit: u32,
                before: Option<&$crate::ThreadCursor>,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                let rows = match before {
                    None => {
                        sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(
                            $crate::conversations::queries::THREAD_PAGE_FIRST,
                        )
                        .bind(user.to_string())
                        .bind(i64::from(limit))
                        .fetch_all(&self.pool)
                        .await?
                    }
                    Some(cursor) => {
                        sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(
                            $crate::conversations::queries::THREAD_PAGE_BEFORE,
                        )
                        .bind(user.to_string())
                        .bind(i64::from(limit))
                        .bind(chrono::SubsecRound::trunc_subsecs(cursor.updated_at, 6))
                        // No id sorts before every id: only threads updated earlier follow.
                        .bind(cursor.id.as_ref().map_or("", ars_domain::ThreadId::as_str))
                        .fetch_all(&self.pool)
                        .await?
                    }
                };
                rows.into_iter()
                    .map($crate::conversations::rows::ThreadRow::into_thread)
                    .collect()
            }

            async fn child_threads(
                &self,
                parent: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Thread>> {
                self.threads_where(
                    $crate::conversations::queries::CHILD_THREADS,
                    parent.as_str(),
                )
                .await
            }

            async fn rename_thread(
                &self,
                id: &ars_domain::ThreadId,
                title: &str,
            ) -> $crate::Result<ars_domain::Thread> {
                let (id, title) = (id.clone(), title.to_owned());
                self.write("rename_thread", move |mut conn| async move {
                    sqlx::query_as::<_, $crate::conversations::rows::ThreadRow>(
                        $crate::conversations::queries::RENAME_THREAD,
                    )
                    .bind(id.as_str())
                    .bind(&title)
                    .bind(ars_domain::time::now())
                    .fetch_optional(&mut *conn)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_thread()
                })
                .await
            }

            async fn delete_thread(
                &self,
                id: &ars_domain::ThreadId,
            ) -> $crate::Result<$crate::Deleted> {
                // Child threads, messages and runs go with the row (ON DELETE CASCADE,
                // recursively), in the same statement and so the same transaction.
                self.delete_by_id(
                    "delete_thread",
                    $crate::conversations::queries::DELETE_THREAD,
                    id.as_str().to_owned(),
                )
                .await
            }

            async fn append_message(
                &self,
                message: &ars_domain::NewMessage,
            ) -> $crate::Result<ars_domain::Message> {
                let message = message.clone();
                self.write("append_message", move |mut conn| async move {
                    let now = ars_domain::time::now();
                    if let (Some(at_once), None) = (Self::APPEND_MESSAGE_AT_ONCE, message.tells) {
                        let (conn, scope) = conn.at_once();
                        return Self::append_at_once(conn, at_once, scope, &message, now).await;
                    }
                    let mut tx = conn.begin().await?;
                    // Bumping `updated_at` first also takes the thread's row lock (PostgreSQL;
                    // SQLite's write lock is already held), so the next seq is read only after
                    // every earlier append to this thread has committed.
                    let touched = sqlx::query($crate::conversations::queries::TOUCH_THREAD)
                        .bind(message.thread_id.as_str())
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                    if touched.rows_affected() == 0 {
                        return Err($crate::StoreError::NotFound);
                    }
                    // The fence: a run's messages are written only while it is active, so an
                    // executor cut off (cancelled or reaped elsewhere) cannot add to the
                    // thread. The check locks the run's row until the commit: the run cannot
                    // end in between. The run's accounting goes with the message, in the same
                    // commit; its update, guarded alike, is the fence when there is one.
                    if let Some(run) = message.run_id {
                        let active = match &message.spent {
                            Some(spent) => {
                                sqlx::query($crate::runs::queries::SET_RUN_USAGE)
                                    .bind(run.to_string())
                                    .bind($crate::runs::rows::stored_tokens(
                                        spent.usage.prompt_tokens,
                                    )?)
                                    .bind($crate::runs::rows::stored_tokens(
                                        spent.usage.completion_tokens,
                                    )?)
                                    .bind(spent.model.as_deref())
                                    .execute(&mut *tx)
                                    .await?
                                    .rows_affected()
                                    > 0
                            }
                            None => sqlx::query($crate::runs::queries::RUN_IS_ACTIVE)
                                .bind(run.to_string())
                                .fetch_optional(&mut *tx)
                                .await?
                                .is_some(),
                        };
                        if !active {
                            return Err($crate::StoreError::RunEnded { run });
                        }
                    }
                    // A message that tells a background child's end to its parent is written
                    // once: with the mark, or not at all.
                    if let Some(child) = message.tells
                        && !Self::tell_parent_in(&mut tx, child).await?
                    {
                        return Err($crate::StoreError::Conflict { field: "tells" });
                    }
                    let row = Self::message_binds(
                        sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(
                            $crate::conversations::queries::APPEND_MESSAGE,
                        ),
                        &message,
                        now,
                    )
                    .fetch_one(&mut *tx)
                    .await?;
                    // Decoded before the commit: a message that cannot be read back is not
                    // written.
                    let stored = row.into_message()?;
                    tx.commit().await?;
                    Ok(stored)
                })
                .await
            }

            async fn messages(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                self.messages_where($crate::conversations::queries::THREAD_MESSAGES, thread)
                    .await
            }

            async fn messages_after(
                &self,
                thread: &ars_domain::ThreadId,
                seq: i64,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(
                    $crate::conversations::queries::THREAD_MESSAGES_AFTER,
                )
                .bind(thread.as_str())
                .bind(seq)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::conversations::rows::MessageRow::into_message)
                .collect()
            }

            async fn all_messages(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                self.messages_where($crate::conversations::queries::ALL_THREAD_MESSAGES, thread)
                    .await
            }

            async fn message_page(
                &self,
                thread: &ars_domain::ThreadId,
                limit: u32,
                before: Option<i64>,
                include_replaced: bool,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(
                    $crate::conversations::queries::MESSAGE_PAGE,
                )
                .bind(thread.as_str())
                .bind(before.unwrap_or(i64::MAX))
                .bind(i64::from(limit))
                .bind(include_replaced)
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::conversations::rows::MessageRow::into_message)
                .collect()
            }

            async fn answered_calls(&self, run: ars_domain::RunId) -> $crate::Result<Vec<String>> {
                let ids: Vec<(String,)> =
                    sqlx::query_as($crate::conversations::queries::ANSWERED_CALLS)
                        .bind(run.to_string())
                        .fetch_all(&self.pool)
                        .await?;
                Ok(ids.into_iter().map(|(id,)| id).collect())
            }

            async fn search_messages(
                &self,
                user: ars_domain::UserId,
                text: &str,
                limit: u32,
            ) -> $crate::Result<Vec<ars_domain::Message>> {
                let pattern = format!("%{}%", $crate::conversations::queries::like_escaped(text));
                sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(
                    $crate::conversations::queries::SEARCH_MESSAGES,
                )
                .bind(user.to_string())
                .bind(pattern)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::conversations::rows::MessageRow::into_message)
                .collect()
            }
        }
    };
}
pub(crate) use impl_conversation_store;
