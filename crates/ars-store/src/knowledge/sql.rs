//! [`KnowledgeStore`](super::KnowledgeStore) for the SQL stores, expanded for each database by
//! [`impl_knowledge_store!`] (see the crate docs for what a store type supplies; here also
//! `lock_kb_changes` and `CLAIM_KB_DOCUMENT`).

/// Implements `KnowledgeStore` for `$store` over database `$db`.
macro_rules! impl_knowledge_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Knowledge base `id` as stored inside the write transaction `tx` (its counts
            /// included), which then commits.
            async fn commit_knowledge_base(
                tx: sqlx::Transaction<'_, $db>,
                id: &str,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                Self::commit_read_back::<$crate::knowledge::rows::KnowledgeBaseRow>(
                    tx,
                    &$crate::knowledge::queries::KNOWLEDGE_BASE_BY_ID,
                    id,
                )
                .await
            }

            /// Inserts the chunks of document `document_id` (which has none now) of knowledge
            /// base `kb_id`, several per statement.
            async fn insert_kb_chunks(
                conn: &mut <$db as sqlx::Database>::Connection,
                document_id: &str,
                kb_id: &str,
                chunks: &[$crate::knowledge::rows::StoredChunk<'_>],
            ) -> $crate::Result<()> {
                for batch in chunks.chunks($crate::knowledge::queries::KB_CHUNKS_PER_INSERT) {
                    let mut insert = sqlx::QueryBuilder::<$db>::new(
                        $crate::knowledge::queries::INSERT_KB_CHUNKS,
                    );
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
                sqlx::query($crate::knowledge::queries::APPEND_KB_CHANGE)
                    .bind(kb_id)
                    .bind(document_id)
                    .bind(now)
                    .execute(&mut *conn)
                    .await?;
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl $crate::KnowledgeStore for $store {
            async fn create_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
                fields: &ars_domain::KnowledgeBaseFields,
                owner: Option<ars_domain::UserId>,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                let fields = fields.clone();
                self.write("create_knowledge_base", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    sqlx::query($crate::knowledge::queries::INSERT_KNOWLEDGE_BASE)
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
                    let table = &$crate::knowledge::queries::KNOWLEDGE_BASE_SHARES;
                    Self::replace_shares(&mut tx, table, &id, &fields.share_config).await?;
                    Self::commit_knowledge_base(tx, &id).await
                })
                .await
            }

            async fn knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                self.shared_where::<$crate::knowledge::rows::KnowledgeBaseRow>(
                    &$crate::knowledge::queries::KNOWLEDGE_BASE_BY_ID,
                    &id.to_string(),
                )
                .await
            }

            async fn knowledge_base_by_slug(
                &self,
                slug: &str,
            ) -> $crate::Result<Option<ars_domain::KnowledgeBase>> {
                self.shared_where::<$crate::knowledge::rows::KnowledgeBaseRow>(
                    &$crate::knowledge::queries::KNOWLEDGE_BASE_BY_SLUG,
                    slug,
                )
                .await
            }

            async fn list_knowledge_bases(
                &self,
                filter: $crate::KnowledgeBaseFilter,
            ) -> $crate::Result<Vec<ars_domain::KnowledgeBase>> {
                self.list_shared::<$crate::knowledge::rows::KnowledgeBaseRow>(
                    &$crate::knowledge::queries::LIST_KNOWLEDGE_BASES,
                    filter.visible_to,
                    None,
                )
                .await
            }

            async fn update_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
                fields: &ars_domain::KnowledgeBaseFields,
            ) -> $crate::Result<ars_domain::KnowledgeBase> {
                let fields = fields.clone();
                self.write("update_knowledge_base", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    let done = sqlx::query($crate::knowledge::queries::UPDATE_KNOWLEDGE_BASE)
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
                    let table = &$crate::knowledge::queries::KNOWLEDGE_BASE_SHARES;
                    Self::replace_shares(&mut tx, table, &id, &fields.share_config).await?;
                    Self::commit_knowledge_base(tx, &id).await
                })
                .await
            }

            async fn delete_knowledge_base(
                &self,
                id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<$crate::Deleted> {
                self.delete_by_id(
                    "delete_knowledge_base",
                    $crate::knowledge::queries::DELETE_KNOWLEDGE_BASE,
                    id.to_string(),
                )
                .await
            }

            async fn put_kb_document(
                &self,
                kb_id: ars_domain::KnowledgeBaseId,
                new: ars_domain::NewKbDocument,
            ) -> $crate::Result<ars_domain::KbDocument> {
                self.write("put_kb_document", move |mut conn| async move {
                    let kb_id = kb_id.to_string();
                    let size = $crate::knowledge::rows::stored_size(&new.bytes)?;
                    let mut tx = conn.begin().await?;
                    let kb: Option<(String,)> =
                        sqlx::query_as($crate::knowledge::queries::KNOWLEDGE_BASE_EXISTS)
                            .bind(&kb_id)
                            .fetch_optional(&mut *tx)
                            .await?;
                    if kb.is_none() {
                        return Err($crate::StoreError::NotFound);
                    }
                    let document = sqlx::query_as::<_, $crate::knowledge::rows::KbDocumentRow>(
                        $crate::knowledge::queries::PUT_KB_DOCUMENT,
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
                    sqlx::query($crate::knowledge::queries::PUT_KB_DOCUMENT_FILE)
                        .bind(document.id.to_string())
                        .bind(&new.bytes)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    Ok(document)
                })
                .await
            }

            async fn kb_documents(
                &self,
                kb_id: ars_domain::KnowledgeBaseId,
            ) -> $crate::Result<Vec<ars_domain::KbDocument>> {
                sqlx::query_as::<_, $crate::knowledge::rows::KbDocumentRow>(
                    $crate::knowledge::queries::KB_DOCUMENTS,
                )
                .bind(kb_id.to_string())
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::knowledge::rows::KbDocumentRow::into_document)
                .collect()
            }

            async fn kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Option<ars_domain::KbDocument>> {
                sqlx::query_as::<_, $crate::knowledge::rows::KbDocumentRow>(
                    $crate::knowledge::queries::KB_DOCUMENT,
                )
                .bind(id.to_string())
                .fetch_optional(&self.pool)
                .await?
                .map($crate::knowledge::rows::KbDocumentRow::into_document)
                .transpose()
            }

            async fn kb_document_file(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Option<Vec<u8>>> {
                let row: Option<(Vec<u8>,)> =
                    sqlx::query_as($crate::knowledge::queries::KB_DOCUMENT_FILE)
                        .bind(id.to_string())
                        .fetch_optional(&self.pool)
                        .await?;
                Ok(row.map(|(bytes,)| bytes))
            }

            async fn delete_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<$crate::Deleted> {
                self.write("delete_kb_document", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    let kb: Option<(String,)> =
                        sqlx::query_as($crate::knowledge::queries::DELETE_KB_DOCUMENT)
                            .bind(&id)
                            .fetch_optional(&mut *tx)
                            .await?;
                    let Some((kb_id,)) = kb else {
                        return Ok($crate::Deleted::NotFound);
                    };
                    Self::append_kb_change(&mut tx, &kb_id, &id, ars_domain::time::now()).await?;
                    tx.commit().await?;
                    Ok($crate::Deleted::Deleted)
                })
                .await
            }

            async fn kb_claimable(
                &self,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<bool> {
                let now = chrono::SubsecRound::trunc_subsecs(now, 6);
                let waiting: Option<(String,)> =
                    sqlx::query_as($crate::knowledge::queries::ANY_CLAIMABLE_KB_DOCUMENT)
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
                self.write("claim_kb_document", move |mut conn| async move {
                    let now = chrono::SubsecRound::trunc_subsecs(now, 6);
                    let until = chrono::Duration::from_std(lease)
                        .ok()
                        .and_then(|lease| now.checked_add_signed(lease))
                        .ok_or_else(|| {
                            $crate::StoreError::Invalid(format!("a lease of {lease:?} is too long"))
                        })?;
                    sqlx::query_as::<_, $crate::knowledge::rows::KbDocumentRow>(
                        Self::CLAIM_KB_DOCUMENT,
                    )
                    .bind(now)
                    .bind(until)
                    .fetch_optional(&mut *conn)
                    .await?
                    .map($crate::knowledge::rows::KbDocumentRow::into_document)
                    .transpose()
                })
                .await
            }

            async fn renew_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                progress: f32,
                lease_until: chrono::DateTime<chrono::Utc>,
            ) -> $crate::Result<$crate::Written> {
                self.write("renew_kb_document", move |mut conn| async move {
                    let done = sqlx::query($crate::knowledge::queries::RENEW_KB_DOCUMENT)
                        .bind(id.to_string())
                        .bind(i64::from(version))
                        .bind($crate::knowledge::rows::stored_progress(progress))
                        .bind(chrono::SubsecRound::trunc_subsecs(lease_until, 6))
                        .bind(ars_domain::time::now())
                        .execute(&mut *conn)
                        .await?;
                    Ok($crate::Written::from_rows(done.rows_affected()))
                })
                .await
            }

            async fn finish_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                chunks: &[ars_domain::NewKbChunk],
            ) -> $crate::Result<$crate::Written> {
                let chunks = chunks.to_vec();
                self.write("finish_kb_document", move |mut conn| async move {
                    let stored = $crate::knowledge::rows::stored_chunks(&chunks)?;
                    let count = i64::try_from(chunks.len()).map_err(|_| {
                        $crate::StoreError::Invalid(format!("{} chunks are too many", chunks.len()))
                    })?;
                    let id = id.to_string();
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    // First, so it takes the document's row lock (PostgreSQL): a re-upload or a
                    // deletion racing this waits for the commit, or wins and makes this a no-op.
                    let kb: Option<(String,)> =
                        sqlx::query_as($crate::knowledge::queries::FINISH_KB_DOCUMENT)
                            .bind(&id)
                            .bind(i64::from(version))
                            .bind(count)
                            .bind(now)
                            .fetch_optional(&mut *tx)
                            .await?;
                    let Some((kb_id,)) = kb else {
                        return Ok($crate::Written::Superseded);
                    };
                    sqlx::query($crate::knowledge::queries::DELETE_KB_CHUNKS)
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    Self::insert_kb_chunks(&mut tx, &id, &kb_id, &stored).await?;
                    Self::append_kb_change(&mut tx, &kb_id, &id, now).await?;
                    tx.commit().await?;
                    Ok($crate::Written::Applied)
                })
                .await
            }

            async fn fail_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
                error: &str,
            ) -> $crate::Result<$crate::Written> {
                let error = error.to_owned();
                self.write("fail_kb_document", move |mut conn| async move {
                    let done = sqlx::query($crate::knowledge::queries::FAIL_KB_DOCUMENT)
                        .bind(id.to_string())
                        .bind(i64::from(version))
                        .bind(&error)
                        .bind(ars_domain::time::now())
                        .execute(&mut *conn)
                        .await?;
                    Ok($crate::Written::from_rows(done.rows_affected()))
                })
                .await
            }

            async fn release_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
                version: u32,
            ) -> $crate::Result<$crate::Written> {
                self.write("release_kb_document", move |mut conn| async move {
                    let done = sqlx::query($crate::knowledge::queries::RELEASE_KB_DOCUMENT)
                        .bind(id.to_string())
                        .bind(i64::from(version))
                        .bind(ars_domain::time::now())
                        .execute(&mut *conn)
                        .await?;
                    Ok($crate::Written::from_rows(done.rows_affected()))
                })
                .await
            }

            async fn retry_kb_document(
                &self,
                id: ars_domain::KbDocumentId,
            ) -> $crate::Result<$crate::Retried> {
                self.write("retry_kb_document", move |mut conn| async move {
                    let done = sqlx::query($crate::knowledge::queries::RETRY_KB_DOCUMENT)
                        .bind(id.to_string())
                        .bind(ars_domain::time::now())
                        .execute(&mut *conn)
                        .await?;
                    Ok(if done.rows_affected() > 0 {
                        $crate::Retried::Retried
                    } else {
                        $crate::Retried::NotFailed
                    })
                })
                .await
            }

            async fn kb_chunks(
                &self,
                document_id: ars_domain::KbDocumentId,
            ) -> $crate::Result<Vec<ars_domain::KbChunk>> {
                sqlx::query_as::<_, $crate::knowledge::rows::KbChunkRow>(
                    $crate::knowledge::queries::KB_CHUNKS,
                )
                .bind(document_id.to_string())
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::knowledge::rows::KbChunkRow::into_chunk)
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
                for batch in wanted.chunks($crate::knowledge::queries::KB_CHUNK_IDS_PER_SELECT) {
                    let sql = $crate::knowledge::queries::kb_chunks_by_ids(batch.len());
                    let mut query = sqlx::query_as::<_, $crate::knowledge::rows::KbChunkRow>(&sql);
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
                sqlx::query_as::<_, $crate::knowledge::rows::KbChunkRow>(
                    $crate::knowledge::queries::KB_CHUNKS_PAGE,
                )
                .bind(kb_id.to_string())
                .bind(document)
                .bind(ordinal)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::knowledge::rows::KbChunkRow::into_chunk)
                .collect()
            }

            async fn kb_changes_since(
                &self,
                seq: i64,
                limit: u32,
            ) -> $crate::Result<Vec<$crate::KbChange>> {
                sqlx::query_as::<_, $crate::knowledge::rows::KbChangeRow>(
                    $crate::knowledge::queries::KB_CHANGES_SINCE,
                )
                .bind(seq)
                .bind(i64::from(limit))
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::knowledge::rows::KbChangeRow::into_change)
                .collect()
            }

            async fn kb_change_head(&self) -> $crate::Result<i64> {
                let (head,): (i64,) = sqlx::query_as($crate::knowledge::queries::KB_CHANGE_HEAD)
                    .fetch_one(&self.pool)
                    .await?;
                Ok(head)
            }
        }
    };
}
pub(crate) use impl_knowledge_store;
