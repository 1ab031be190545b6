//! [`SkillStore`](super::SkillStore) for the SQL stores, expanded for each database by
//! [`impl_skill_store!`] (see the crate docs for what a store type supplies).

/// Implements `SkillStore` for `$store` over database `$db`.
macro_rules! impl_skill_store {
    ($store:ident, $db:ty) => {
        impl $store {
            /// Inserts `files` for skill `id` (which has none now).
            async fn insert_skill_files(
                conn: &mut <$db as sqlx::Database>::Connection,
                id: &str,
                files: &[ars_domain::SkillFile],
            ) -> $crate::Result<()> {
                for file in files {
                    sqlx::query($crate::skills::queries::INSERT_SKILL_FILE)
                        .bind(id)
                        .bind(&file.path)
                        .bind(&file.content)
                        .bind($crate::skills::rows::stored_file_size(file)?)
                        .execute(&mut *conn)
                        .await?;
                }
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl $crate::SkillStore for $store {
            async fn create_skill(
                &self,
                new: &ars_domain::NewSkill,
            ) -> $crate::Result<ars_domain::Skill> {
                let new = new.clone();
                self.write("create_skill", move |mut conn| async move {
                    let content = &new.content;
                    let (file_count, size_bytes) =
                        $crate::skills::rows::stored_skill_totals(content)?;
                    let id = ars_domain::SkillId::new().to_string();
                    let now = ars_domain::time::now();
                    let mut tx = conn.begin().await?;
                    sqlx::query($crate::skills::queries::INSERT_SKILL)
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
                    let table = &$crate::skills::queries::SKILL_SHARES;
                    Self::replace_shares(&mut tx, table, &id, &new.share_config).await?;
                    Self::insert_skill_files(&mut tx, &id, &content.files).await?;
                    Self::commit_read_back::<$crate::skills::rows::SkillRow>(
                        tx,
                        &$crate::skills::queries::SKILL_BY_ID,
                        &id,
                    )
                    .await
                })
                .await
            }

            async fn skill(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<Option<ars_domain::Skill>> {
                self.shared_where::<$crate::skills::rows::SkillRow>(
                    &$crate::skills::queries::SKILL_BY_ID,
                    &id.to_string(),
                )
                .await
            }

            async fn skill_by_name(&self, name: &str) -> $crate::Result<Option<ars_domain::Skill>> {
                self.shared_where::<$crate::skills::rows::SkillRow>(
                    &$crate::skills::queries::SKILL_BY_NAME,
                    name,
                )
                .await
            }

            async fn list_skills(
                &self,
                filter: $crate::SkillFilter,
            ) -> $crate::Result<Vec<ars_domain::Skill>> {
                self.list_shared::<$crate::skills::rows::SkillRow>(
                    &$crate::skills::queries::LIST_SKILLS,
                    filter.visible_to,
                    None,
                )
                .await
            }

            async fn replace_skill_content(
                &self,
                id: ars_domain::SkillId,
                content: &ars_domain::SkillContent,
            ) -> $crate::Result<ars_domain::Skill> {
                let content = content.clone();
                self.write("replace_skill_content", move |mut conn| async move {
                    let (file_count, size_bytes) =
                        $crate::skills::rows::stored_skill_totals(&content)?;
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    // The update matches only while the name is unchanged; it also takes the
                    // row's lock (PostgreSQL), so concurrent replacements of one skill take
                    // turns.
                    let row = sqlx::query_as::<_, $crate::skills::rows::SkillRow>(
                        $crate::skills::queries::REPLACE_SKILL_CONTENT,
                    )
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
                        let stored: Option<(String,)> =
                            sqlx::query_as($crate::skills::queries::SKILL_NAME)
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
                    sqlx::query($crate::skills::queries::DELETE_SKILL_FILES)
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    Self::insert_skill_files(&mut tx, &id, &content.files).await?;
                    Self::commit_shared(tx, &$crate::skills::queries::SKILL_SHARES, Some(row)).await
                })
                .await
            }

            async fn update_skill_share(
                &self,
                id: ars_domain::SkillId,
                share: &ars_domain::ShareConfig,
            ) -> $crate::Result<ars_domain::Skill> {
                let share = share.clone();
                self.write("update_skill_share", move |mut conn| async move {
                    let id = id.to_string();
                    let mut tx = conn.begin().await?;
                    let row = sqlx::query_as::<_, $crate::skills::rows::SkillRow>(
                        $crate::skills::queries::UPDATE_SKILL_VISIBILITY,
                    )
                    .bind(&id)
                    .bind(share.visibility.as_str())
                    .bind(ars_domain::time::now())
                    .fetch_optional(&mut *tx)
                    .await?;
                    let row = row.ok_or($crate::StoreError::NotFound)?;
                    let table = &$crate::skills::queries::SKILL_SHARES;
                    let shares = Self::replace_shares(&mut tx, table, &id, &share).await?;
                    Self::commit_written(tx, row, shares).await
                })
                .await
            }

            async fn delete_skill(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<$crate::Deleted> {
                self.delete_by_id(
                    "delete_skill",
                    $crate::skills::queries::DELETE_SKILL,
                    id.to_string(),
                )
                .await
            }

            async fn skill_files(
                &self,
                id: ars_domain::SkillId,
            ) -> $crate::Result<Vec<ars_domain::SkillFileInfo>> {
                sqlx::query_as::<_, $crate::skills::rows::SkillFileInfoRow>(
                    $crate::skills::queries::SKILL_FILE_INFOS,
                )
                .bind(id.to_string())
                .fetch_all(&self.pool)
                .await?
                .into_iter()
                .map($crate::skills::rows::SkillFileInfoRow::into_info)
                .collect()
            }

            async fn skill_file(
                &self,
                id: ars_domain::SkillId,
                path: &str,
            ) -> $crate::Result<Option<Vec<u8>>> {
                let row: Option<(Vec<u8>,)> = sqlx::query_as($crate::skills::queries::SKILL_FILE)
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
                let rows = sqlx::query_as::<_, $crate::skills::rows::SkillFileRow>(
                    $crate::skills::queries::SKILL_CONTENTS,
                )
                .bind(id.to_string())
                .fetch_all(&self.pool)
                .await?;
                Ok(rows
                    .into_iter()
                    .map($crate::skills::rows::SkillFileRow::into_file)
                    .collect())
            }
        }
    };
}
pub(crate) use impl_skill_store;
