//! [`RunStore`](super::RunStore) for the SQL stores, expanded for each database by
//! [`impl_run_store!`] (see the crate docs for what a store type supplies).

/// Implements `RunStore` for `$store` over database `$db`.
macro_rules! impl_run_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Run `id` as `conn` (a write's connection) sees it; `NotFound` when there is none.
            async fn existing_run_on(
                conn: &mut <$db as sqlx::Database>::Connection,
                id: ars_domain::RunId,
            ) -> $crate::Result<ars_domain::Run> {
                sqlx::query_as::<_, $crate::runs::rows::RunRow>($crate::runs::queries::RUN_BY_ID)
                    .bind(id.to_string())
                    .fetch_optional(&mut *conn)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?
                    .into_run()
            }

            /// Inserts `new` as run `id`, `pending` (or `running`, started `now`, when
            /// `new.running`); `None` when the thread already has an active run (the
            /// one-active-run index refused it).
            async fn insert_run(
                conn: &mut <$db as sqlx::Database>::Connection,
                id: ars_domain::RunId,
                new: &ars_domain::NewRun,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Option<$crate::runs::rows::RunRow>> {
                Ok(Self::run_binds(
                    sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                        $crate::runs::queries::INSERT_RUN,
                    ),
                    id,
                    new,
                    now,
                )
                .fetch_optional(&mut *conn)
                .await?)
            }

            /// `query` with [`INSERT_RUN`](crate::runs::queries::INSERT_RUN)'s binds, `$1`–`$14`.
            fn run_binds<'q, Q: $crate::sql_store::Binds<'q, $db>>(
                query: Q,
                id: ars_domain::RunId,
                new: &'q ars_domain::NewRun,
                now: chrono::DateTime<chrono::Utc>,
            ) -> Q {
                query
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
                    .bind(new.woken_by.as_ref().map(|n| n.run_id.to_string()))
                    .bind(if new.running {
                        ars_domain::RunStatus::Running.as_str()
                    } else {
                        ars_domain::RunStatus::Pending.as_str()
                    })
                    .bind(new.running.then_some(now))
            }

            /// Creates `new`'s run with its input with a text of `at_once`, the store's
            /// [`CREATE_RUN_WITH_INPUT_AT_ONCE`](crate::runs::queries::CREATE_RUN_WITH_INPUT_AT_ONCE_SQLITE):
            /// the run's new thread if it has one, the run, the thread's `updated_at` and the
            /// run's user message in one query that begins and ends its own transaction (in a
            /// batch, its savepoint: [`crate::sql_store::AtOnce`]). `None` when no run was
            /// written, and then nothing was (see [`Self::why_no_run`]).
            async fn create_with_input_at_once(
                conn: &mut <$db as sqlx::Database>::Connection,
                at_once: $crate::runs::RunAtOnce,
                scope: $crate::sql_store::Scope,
                id: ars_domain::RunId,
                new: &ars_domain::NewRun,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Option<(ars_domain::Run, ars_domain::Message)>> {
                use sqlx::FromRow;
                let texts = match new.new_thread {
                    Some(_) => at_once.with_thread,
                    None => at_once.on_thread,
                };
                let mut query = Self::run_binds(sqlx::query(texts.text(scope)), id, new, now)
                    .bind(ars_domain::MessageId::new().to_string());
                if let Some(thread) = &new.new_thread {
                    query = Self::thread_binds(query, thread);
                }
                let rows = Self::rows_at_once(&mut *conn, query, scope).await?;
                match rows.as_slice() {
                    [] => Ok(None),
                    [run, input] => {
                        let run = $crate::runs::rows::RunRow::from_row(run)?.into_run()?;
                        let input = $crate::conversations::rows::MessageRow::from_row(input)?
                            .into_message()?;
                        Ok(Some((run, input)))
                    }
                    rows => Err($crate::StoreError::Invalid(format!(
                        "creating a run with its input answered {} rows, not 2",
                        rows.len()
                    ))),
                }
            }

            /// Why no run was written on `thread`: it does not exist (`Invalid`), or the run
            /// that holds it (`Busy`); `None` when no run holds it any more.
            async fn why_no_run(
                conn: &mut <$db as sqlx::Database>::Connection,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<$crate::StoreError>> {
                let exists: Option<(String,)> =
                    sqlx::query_as($crate::conversations::queries::THREAD_EXISTS)
                        .bind(thread.as_str())
                        .fetch_optional(&mut *conn)
                        .await?;
                if exists.is_none() {
                    return Ok(Some($crate::StoreError::Invalid(format!(
                        "no thread {thread}"
                    ))));
                }
                let active: Option<(String,)> =
                    sqlx::query_as($crate::runs::queries::ACTIVE_RUN_ID)
                        .bind(thread.as_str())
                        .fetch_optional(&mut *conn)
                        .await?;
                active
                    .map(|(active,)| {
                        let active = $crate::rows::parse_run_id(&active)?;
                        Ok($crate::StoreError::Busy { active })
                    })
                    .transpose()
            }

            /// Marks that background child `child`'s end was told to its parent, inside the
            /// caller's transaction; `false` when it had been told already.
            async fn tell_parent_in(
                conn: &mut <$db as sqlx::Database>::Connection,
                child: ars_domain::RunId,
            ) -> $crate::Result<bool> {
                let told: Option<(String,)> = sqlx::query_as($crate::runs::queries::TELL_PARENT)
                    .bind(child.to_string())
                    .fetch_optional(&mut *conn)
                    .await?;
                Ok(told.is_some())
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
                    sqlx::query_as($crate::conversations::queries::MESSAGE_TO_REPLACE)
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
                let done = sqlx::query($crate::conversations::queries::REPLACE_MESSAGES)
                    .bind(new.thread_id.as_str())
                    .bind(seq)
                    .bind(run.to_string())
                    .execute(&mut *conn)
                    .await?;
                Ok(done.rows_affected())
            }

            /// The runs that `sql` selects by its one bind, `key`.
            async fn runs_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::runs::rows::RunRow>(sql)
                    .bind(key)
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::runs::rows::RunRow::into_run)
                    .collect()
            }

            /// The run that `sql` selects by its one bind, `key`, if any.
            async fn run_where(
                &self,
                sql: &'static str,
                key: &str,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                sqlx::query_as::<_, $crate::runs::rows::RunRow>(sql)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::runs::rows::RunRow::into_run)
                    .transpose()
            }
        }

        #[async_trait::async_trait]
        impl $crate::RunStore for $store {
            async fn create_run(
                &self,
                new: &ars_domain::NewRun,
            ) -> $crate::Result<ars_domain::Run> {
                let new = new.clone();
                self.write("create_run", move |mut conn| async move {
                    let id = ars_domain::RunId::new();
                    let now = ars_domain::time::now();
                    for _ in 0..$crate::runs::CREATE_RUN_ATTEMPTS {
                        let row = Self::insert_run(&mut conn, id, &new, now).await?;
                        if let Some(row) = row {
                            return row.into_run();
                        }
                        // The one-active-run index refused it: name the run that holds the
                        // thread.
                        let active: Option<(String,)> =
                            sqlx::query_as($crate::runs::queries::ACTIVE_RUN_ID)
                                .bind(new.thread_id.as_str())
                                .fetch_optional(&mut *conn)
                                .await?;
                        if let Some((active,)) = active {
                            let active = $crate::rows::parse_run_id(&active)?;
                            return Err($crate::StoreError::Busy { active });
                        }
                        // That run ended between the two statements: the thread is free again.
                    }
                    Err($crate::StoreError::Conflict { field: "thread_id" })
                })
                .await
            }

            async fn create_run_with_input(
                &self,
                new: &ars_domain::NewRun,
                replace_from: Option<ars_domain::MessageId>,
            ) -> $crate::Result<$crate::RunWithInput> {
                let new = new.clone();
                self.write("create_run_with_input", move |mut conn| async move {
                    let id = ars_domain::RunId::new();
                    for _ in 0..$crate::runs::CREATE_RUN_ATTEMPTS {
                        let now = ars_domain::time::now();
                        let at_once = match (&new.woken_by, replace_from) {
                            (None, None) => Self::CREATE_RUN_WITH_INPUT_AT_ONCE,
                            _ => None,
                        };
                        if let Some(at_once) = at_once {
                            let (conn, scope) = conn.at_once();
                            match Self::create_with_input_at_once(
                                conn, at_once, scope, id, &new, now,
                            )
                            .await?
                            {
                                Some((run, input)) => {
                                    return Ok($crate::RunWithInput {
                                        run,
                                        input,
                                        replaced: 0,
                                    });
                                }
                                None => match Self::why_no_run(conn, &new.thread_id).await? {
                                    Some(refused) => return Err(refused),
                                    // That run ended in between: the thread is free again.
                                    None => continue,
                                },
                            }
                        }
                        let mut tx = conn.begin().await?;
                        if let Some(thread) = &new.new_thread {
                            Self::insert_thread(&mut tx, thread).await?;
                        }
                        // The thread's row lock first, as in `append_message`: appends and
                        // replacements on this thread queue behind this transaction.
                        let touched = sqlx::query($crate::conversations::queries::TOUCH_THREAD)
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
                        let row = Self::insert_run(&mut tx, id, &new, now).await?;
                        let Some(row) = row else {
                            // Busy: the one-active-run index refused it. Under READ COMMITTED
                            // the next statement sees the run that holds the thread, once
                            // committed.
                            match Self::why_no_run(&mut tx, &new.thread_id).await? {
                                Some(refused) => return Err(refused),
                                // That run ended in between: the thread is free again.
                                None => continue,
                            }
                        };
                        let run = row.into_run()?;
                        // A wake tells the child's parent: once, or not at all.
                        if let Some(notice) = &new.woken_by
                            && !Self::tell_parent_in(&mut tx, notice.run_id).await?
                        {
                            return Err($crate::StoreError::Conflict { field: "woken_by" });
                        }
                        let replaced = match replace_from {
                            Some(from) => Self::replace_from(&mut tx, &new, from, run.id).await?,
                            None => 0,
                        };
                        let input = sqlx::query_as::<_, $crate::conversations::rows::MessageRow>(
                            $crate::conversations::queries::APPEND_MESSAGE,
                        )
                        .bind(ars_domain::MessageId::new().to_string())
                        .bind(new.thread_id.as_str())
                        .bind(run.id.to_string())
                        // A wake's input is the completion notice that woke it.
                        .bind(match new.woken_by {
                            Some(_) => ars_domain::MessageRole::System.as_str(),
                            None => ars_domain::MessageRole::User.as_str(),
                        })
                        .bind(&new.input)
                        .bind(sqlx::types::Json(Vec::<ars_domain::ToolCallRecord>::new()))
                        .bind(None::<&str>)
                        .bind(None::<&str>)
                        .bind(false)
                        .bind(new.woken_by.as_ref().map(sqlx::types::Json))
                        .bind(false)
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
                })
                .await
            }

            async fn run(&self, id: ars_domain::RunId) -> $crate::Result<Option<ars_domain::Run>> {
                self.run_where($crate::runs::queries::RUN_BY_ID, &id.to_string())
                    .await
            }

            async fn active_run(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                self.run_where($crate::runs::queries::ACTIVE_RUN, thread.as_str())
                    .await
            }

            async fn agent_active_run(
                &self,
                agent: ars_domain::AgentId,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                self.run_where($crate::runs::queries::AGENT_ACTIVE_RUN, &agent.to_string())
                    .await
            }

            async fn thread_runs(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::runs::queries::THREAD_RUNS, thread.as_str())
                    .await
            }

            async fn child_runs(
                &self,
                parent_run: ars_domain::RunId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::runs::queries::CHILD_RUNS, &parent_run.to_string())
                    .await
            }

            async fn subagent_runs(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::runs::queries::SUBAGENT_RUNS, thread.as_str())
                    .await
            }

            async fn mark_run_running(
                &self,
                id: ars_domain::RunId,
            ) -> $crate::Result<ars_domain::Run> {
                self.write("mark_run_running", move |mut conn| async move {
                    let row = sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                        $crate::runs::queries::MARK_RUN_RUNNING,
                    )
                    .bind(id.to_string())
                    .bind(ars_domain::time::now())
                    .fetch_optional(&mut *conn)
                    .await?;
                    match row {
                        Some(row) => row.into_run(),
                        // Not pending (or gone): nothing to start.
                        None => Self::existing_run_on(&mut conn, id).await,
                    }
                })
                .await
            }

            async fn set_run_usage(
                &self,
                id: ars_domain::RunId,
                usage: ars_domain::Usage,
                model: Option<&str>,
            ) -> $crate::Result<()> {
                let model = model.map(str::to_owned);
                self.write("set_run_usage", move |mut conn| async move {
                    let done = sqlx::query($crate::runs::queries::SET_RUN_USAGE)
                        .bind(id.to_string())
                        .bind($crate::runs::rows::stored_tokens(usage.prompt_tokens)?)
                        .bind($crate::runs::rows::stored_tokens(usage.completion_tokens)?)
                        .bind(model)
                        .execute(&mut *conn)
                        .await?;
                    if done.rows_affected() == 0 {
                        // A finished run keeps its final usage; only a missing run is an error.
                        Self::existing_run_on(&mut conn, id).await?;
                    }
                    Ok(())
                })
                .await
            }

            async fn finish_run(
                &self,
                id: ars_domain::RunId,
                outcome: &ars_domain::RunOutcome,
            ) -> $crate::Result<$crate::FinishedRun> {
                let outcome = outcome.clone();
                self.write("finish_run", move |mut conn| async move {
                    let usage = outcome.usage();
                    let row = sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                        $crate::runs::queries::FINISH_RUN,
                    )
                    .bind(id.to_string())
                    .bind(outcome.status().as_str())
                    .bind(outcome.output())
                    .bind(outcome.error())
                    .bind($crate::runs::rows::stored_tokens(usage.prompt_tokens)?)
                    .bind($crate::runs::rows::stored_tokens(usage.completion_tokens)?)
                    .bind(ars_domain::time::now())
                    .bind(outcome.error_code().map(ars_domain::RunErrorCode::as_str))
                    .fetch_optional(&mut *conn)
                    .await?;
                    match row {
                        Some(row) => Ok($crate::FinishedRun::Ended(row.into_run()?)),
                        // Already terminal (or gone): the first outcome stands.
                        None => Ok($crate::FinishedRun::AlreadyEnded(
                            Self::existing_run_on(&mut conn, id).await?,
                        )),
                    }
                })
                .await
            }

            async fn finish_run_with_answer(
                &self,
                id: ars_domain::RunId,
                outcome: &ars_domain::RunOutcome,
                answer: &ars_domain::NewMessage,
                seen: i64,
            ) -> $crate::Result<$crate::AnsweredRun> {
                if answer.run_id != Some(id) || answer.tells.is_some() {
                    return Err($crate::StoreError::Invalid(
                        "a run's answer is a message of that run and tells nothing".into(),
                    ));
                }
                let outcome = outcome.clone();
                let answer = answer.clone();
                self.write("finish_run_with_answer", move |mut conn| async move {
                    use sqlx::FromRow;
                    let now = ars_domain::time::now();
                    let usage = outcome.usage();
                    let prompt = $crate::runs::rows::stored_tokens(usage.prompt_tokens)?;
                    let completion = $crate::runs::rows::stored_tokens(usage.completion_tokens)?;
                    let model = answer.spent.as_ref().and_then(|s| s.model.clone());
                    let code = outcome.error_code().map(ars_domain::RunErrorCode::as_str);
                    let written = match Self::FINISH_RUN_WITH_ANSWER_AT_ONCE {
                        Some(at_once) => {
                            let (conn, scope) = conn.at_once();
                            let query =
                                Self::message_binds(sqlx::query(at_once.text(scope)), &answer, now)
                                    .bind(prompt)
                                    .bind(completion)
                                    .bind(model.as_deref())
                                    .bind(seen)
                                    .bind(outcome.status().as_str())
                                    .bind(outcome.output())
                                    .bind(outcome.error())
                                    .bind(code);
                            match Self::rows_at_once(&mut *conn, query, scope)
                                .await?
                                .as_slice()
                            {
                                [] => None,
                                // Decoded after its commit: rows the store wrote itself.
                                [message, run] => Some((
                                    $crate::runs::rows::RunRow::from_row(run)?.into_run()?,
                                    $crate::conversations::rows::MessageRow::from_row(message)?
                                        .into_message()?,
                                )),
                                rows => {
                                    return Err($crate::StoreError::Invalid(format!(
                                        "ending a run with its answer answered {} rows, not 2",
                                        rows.len()
                                    )));
                                }
                            }
                        }
                        None => {
                            let mut tx = conn.begin().await?;
                            // The thread's row lock first, as every append takes it: a message
                            // sent into the run is committed before this end (and refuses it)
                            // or after (and finds the run ended).
                            let touched = sqlx::query($crate::conversations::queries::TOUCH_THREAD)
                                .bind(answer.thread_id.as_str())
                                .bind(now)
                                .execute(&mut *tx)
                                .await?;
                            if touched.rows_affected() == 0 {
                                return Err($crate::StoreError::NotFound);
                            }
                            let run = sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                                $crate::runs::queries::FINISH_RUN_ANSWERED,
                            )
                            .bind(id.to_string())
                            .bind(outcome.status().as_str())
                            .bind(outcome.output())
                            .bind(outcome.error())
                            .bind(prompt)
                            .bind(completion)
                            .bind(now)
                            .bind(code)
                            .bind(model.as_deref())
                            .bind(answer.thread_id.as_str())
                            .bind(seen)
                            .fetch_optional(&mut *tx)
                            .await?;
                            match run {
                                // Rolled back: the thread's touch goes with it.
                                None => None,
                                Some(run) => {
                                    let message =
                                        Self::message_binds(
                                            sqlx::query_as::<
                                                _,
                                                $crate::conversations::rows::MessageRow,
                                            >(
                                                $crate::conversations::queries::APPEND_MESSAGE
                                            ),
                                            &answer,
                                            now,
                                        )
                                        .fetch_one(&mut *tx)
                                        .await?;
                                    // Decoded before the commit: what cannot be read back is
                                    // not written.
                                    let written = (run.into_run()?, message.into_message()?);
                                    tx.commit().await?;
                                    Some(written)
                                }
                            }
                        }
                    };
                    match written {
                        Some((run, answer)) => Ok($crate::AnsweredRun::Ended {
                            run,
                            answer: Box::new(answer),
                        }),
                        // Nothing written: the answer is not on the run's thread, the run
                        // ended, or — still active — something was sent into it.
                        None => {
                            let run = Self::existing_run_on(&mut conn, id).await?;
                            if run.thread_id != answer.thread_id {
                                Err($crate::StoreError::Invalid(
                                    "a run's answer goes on the run's thread".into(),
                                ))
                            } else if run.status.is_terminal() {
                                Ok($crate::AnsweredRun::AlreadyEnded(run))
                            } else {
                                Ok($crate::AnsweredRun::SentIn)
                            }
                        }
                    }
                })
                .await
            }

            async fn interrupt_active_runs(&self) -> $crate::Result<Vec<ars_domain::RunId>> {
                self.write("interrupt_active_runs", move |mut conn| async move {
                    let ids: Vec<(String,)> =
                        sqlx::query_as($crate::runs::queries::INTERRUPT_ACTIVE_RUNS)
                            .bind(ars_domain::time::now())
                            .bind($crate::INTERRUPTED_ERROR)
                            .fetch_all(&mut *conn)
                            .await?;
                    $crate::runs::rows::parse_run_ids(ids)
                })
                .await
            }

            async fn renew_leases(
                &self,
                owner: &str,
                expires_ms: i64,
            ) -> $crate::Result<Vec<ars_domain::RunId>> {
                let owner = owner.to_owned();
                self.write("renew_leases", move |mut conn| async move {
                    let ids: Vec<(String,)> = sqlx::query_as($crate::runs::queries::RENEW_LEASES)
                        .bind(&owner)
                        .bind(expires_ms)
                        .fetch_all(&mut *conn)
                        .await?;
                    $crate::runs::rows::parse_run_ids(ids)
                })
                .await
            }

            async fn reap_expired_runs(
                &self,
                now_ms: i64,
            ) -> $crate::Result<Vec<ars_domain::RunId>> {
                self.write("reap_expired_runs", move |mut conn| async move {
                    let ids: Vec<(String,)> =
                        sqlx::query_as($crate::runs::queries::REAP_EXPIRED_RUNS)
                            .bind(ars_domain::time::now())
                            .bind($crate::INTERRUPTED_ERROR)
                            .bind(now_ms)
                            .fetch_all(&mut *conn)
                            .await?;
                    $crate::runs::rows::parse_run_ids(ids)
                })
                .await
            }

            async fn wait_run(
                &self,
                id: ars_domain::RunId,
                waiting: &ars_domain::Waiting,
                usage: ars_domain::Usage,
            ) -> $crate::Result<ars_domain::Run> {
                let json = serde_json::to_string(waiting)
                    .map_err(|e| $crate::StoreError::Invalid(e.to_string()))?;
                let until = waiting.until_ms;
                self.write("wait_run", move |mut conn| async move {
                    let row = sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                        $crate::runs::queries::WAIT_RUN,
                    )
                    .bind(id.to_string())
                    .bind(&json)
                    .bind(until)
                    .bind($crate::runs::rows::stored_tokens(usage.prompt_tokens)?)
                    .bind($crate::runs::rows::stored_tokens(usage.completion_tokens)?)
                    .fetch_optional(&mut *conn)
                    .await?;
                    match row {
                        Some(row) => row.into_run(),
                        None => Self::existing_run_on(&mut conn, id).await,
                    }
                })
                .await
            }

            async fn run_waiting(
                &self,
                id: ars_domain::RunId,
            ) -> $crate::Result<Option<$crate::StoredWaiting>> {
                let row: Option<(Option<String>,)> =
                    sqlx::query_as($crate::runs::queries::RUN_WAITING)
                        .bind(id.to_string())
                        .fetch_optional(&self.pool)
                        .await?;
                match row {
                    Some((Some(stored),)) => Ok(Some($crate::StoredWaiting {
                        waiting: $crate::runs::rows::decode_waiting(&stored)?,
                        stored,
                    })),
                    _ => Ok(None),
                }
            }

            async fn resume_run(
                &self,
                id: ars_domain::RunId,
                lease: &ars_domain::Lease,
                expected: &str,
            ) -> $crate::Result<Option<ars_domain::Run>> {
                let (owner, expires_ms) = (lease.owner.clone(), lease.expires_ms);
                let expected = expected.to_owned();
                self.write("resume_run", move |mut conn| async move {
                    sqlx::query_as::<_, $crate::runs::rows::RunRow>(
                        $crate::runs::queries::RESUME_RUN,
                    )
                    .bind(id.to_string())
                    .bind(&owner)
                    .bind(expires_ms)
                    .bind(&expected)
                    .fetch_optional(&mut *conn)
                    .await?
                    .map($crate::runs::rows::RunRow::into_run)
                    .transpose()
                })
                .await
            }

            async fn expired_waits(&self, now_ms: i64) -> $crate::Result<Vec<ars_domain::RunId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::runs::queries::EXPIRED_WAITS)
                    .bind(now_ms)
                    .fetch_all(&self.pool)
                    .await?;
                $crate::runs::rows::parse_run_ids(ids)
            }

            async fn waiting_runs_under(
                &self,
                thread: &ars_domain::ThreadId,
            ) -> $crate::Result<Vec<ars_domain::Run>> {
                self.runs_where($crate::runs::queries::WAITING_RUNS_UNDER, thread.as_str())
                    .await
            }

            async fn waiting_threads(
                &self,
                user: ars_domain::UserId,
            ) -> $crate::Result<Vec<ars_domain::ThreadId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::runs::queries::WAITING_THREADS)
                    .bind(user.to_string())
                    .fetch_all(&self.pool)
                    .await?;
                ids.into_iter()
                    .map(|(id,)| $crate::rows::parse_thread_id(&id))
                    .collect()
            }

            async fn tell_parent(&self, child: ars_domain::RunId) -> $crate::Result<bool> {
                self.write("tell_parent", move |mut conn| async move {
                    let mut tx = conn.begin().await?;
                    let told = Self::tell_parent_in(&mut tx, child).await?;
                    tx.commit().await?;
                    Ok(told)
                })
                .await
            }

            async fn untold_children(
                &self,
                before: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<Vec<ars_domain::RunId>> {
                let ids: Vec<(String,)> = sqlx::query_as($crate::runs::queries::UNTOLD_CHILDREN)
                    .bind(before)
                    .fetch_all(&self.pool)
                    .await?;
                $crate::runs::rows::parse_run_ids(ids)
            }

            async fn wakes_since(
                &self,
                thread: &ars_domain::ThreadId,
                since: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<u64> {
                let (count,): (i64,) = sqlx::query_as($crate::runs::queries::WAKES_SINCE)
                    .bind(thread.as_str())
                    .bind(since)
                    .fetch_one(&self.pool)
                    .await?;
                Ok(u64::try_from(count).unwrap_or(0))
            }
        }
    };
}
pub(crate) use impl_run_store;
