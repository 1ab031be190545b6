//! The one piece the four shared resources (agents, skills, MCP servers, knowledge bases) have
//! in common: who sees a row ([`visible_to!`]) and their share rows — read with the row in the
//! same statement ([`with_shares!`], so a read or a list is one round trip), written and
//! replaced in the resource's own transaction.
//!
//! A resource names its share table once ([`ShareTable`], built by [`share_table!`]) and its row
//! type says how it becomes the domain type ([`SharedRow`]); everything else is here, so the
//! four resources share one reading of "shared".
//!
//! **Invariant:** the visibility filter ([`visible_to!`]) is `ars_domain::Caller::can_view` for
//! a non-admin caller; the conformance suite checks the two agree for every shared resource.

use ars_domain::{ShareConfig, UserId, Visibility};

use crate::Result;
use crate::rows::{corrupt, parse_user_id};

/// The share row role (`agent_shares.role`, …) of a `share_config.user_ids` entry.
pub(crate) const SHARE_USER: &str = "user";
/// The share row role of a `share_config.manager_ids` entry.
pub(crate) const SHARE_MANAGER: &str = "manager";

/// Whether the user `$viewer` (a placeholder; NULL for every row) sees a row of the shared
/// resource `$table`, whose share rows are in `$shares`, keyed by `$key`: a user sees public
/// rows, their own, those they manage, and `users` rows that list them.
///
/// Written as the union of the rows each reason selects, each by an index (the public rows'
/// partial index, the owner's, the share table's by user), so a list costs what the viewer
/// sees, not what the table holds; an `OR` of the reasons would read every row.
macro_rules! visible_to {
    ($table:literal, $shares:literal, $key:literal, $viewer:literal) => {
        concat!(
            "(",
            $table,
            ".id IN (SELECT id FROM ",
            $table,
            " WHERE ",
            $viewer,
            " IS NULL UNION ALL SELECT id FROM ",
            $table,
            " WHERE visibility = 'public' UNION ALL SELECT id FROM ",
            $table,
            " WHERE owner_id = ",
            $viewer,
            " UNION ALL SELECT vs.",
            $key,
            " FROM ",
            $shares,
            " vs JOIN ",
            $table,
            " vt ON vt.id = vs.",
            $key,
            " WHERE vs.user_id = ",
            $viewer,
            " AND (vs.role = 'manager' OR vt.visibility = 'users')))"
        )
    };
}
pub(crate) use visible_to;

/// The statements of one resource's share table (`$shares`, keyed by `$key`).
pub(crate) struct ShareTable {
    /// The share rows of resource `$1`, as [`ShareRow`]s.
    pub(crate) of: &'static str,
    /// `$1`: the resource; `$2`: the user; `$3`: the role.
    pub(crate) insert: &'static str,
    /// Every share row of resource `$1`.
    pub(crate) delete: &'static str,
}

/// The [`ShareTable`] of share table `$shares`, whose column `$key` names the resource.
macro_rules! share_table {
    ($shares:literal, $key:literal) => {
        $crate::shares::ShareTable {
            of: concat!(
                "SELECT user_id, role FROM ",
                $shares,
                " WHERE ",
                $key,
                " = $1"
            ),
            insert: concat!(
                "INSERT INTO ",
                $shares,
                " (",
                $key,
                ", user_id, role) VALUES ($1, $2, $3)"
            ),
            delete: concat!("DELETE FROM ", $shares, " WHERE ", $key, " = $1"),
        }
    };
}
pub(crate) use share_table;

/// A statement whose text differs between the two databases: each store runs its own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialects {
    pub(crate) sqlite: &'static str,
    pub(crate) postgres: &'static str,
}

/// Column `shares` of a `$table` row: the JSON array of its share rows in `$shares` (keyed by
/// `$key`) as `[user_id, role]` pairs, `[]` for none. SQL has no portable JSON aggregate, so
/// each database spells it its own way (`$dialect`: `sqlite` or `postgres`).
macro_rules! shares_column {
    (sqlite, $table:literal, $shares:literal, $key:literal) => {
        concat!(
            "(SELECT json_group_array(json_array(s.user_id, s.role)) FROM ",
            $shares,
            " s WHERE s.",
            $key,
            " = ",
            $table,
            ".id) AS shares"
        )
    };
    (postgres, $table:literal, $shares:literal, $key:literal) => {
        concat!(
            "(SELECT COALESCE(json_agg(json_build_array(s.user_id, s.role)), '[]'::json) FROM ",
            $shares,
            " s WHERE s.",
            $key,
            " = ",
            $table,
            ".id) AS shares"
        )
    };
}
pub(crate) use shares_column;

/// The statement `$select` (a select list) `, shares` `$rest` (its `FROM …` onwards) in both
/// databases' [`Dialects`]: the rows of the shared resource `$table` each read with its share
/// rows ([`shares_column!`]) in one statement, so a read is one round trip and the shares are
/// those of the row as it was read.
macro_rules! with_shares {
    (($table:literal, $shares:literal, $key:literal), $select:expr, $rest:expr) => {
        $crate::shares::Dialects {
            sqlite: concat!(
                $select,
                ", ",
                $crate::shares::shares_column!(sqlite, $table, $shares, $key),
                $rest
            ),
            postgres: concat!(
                $select,
                ", ",
                $crate::shares::shares_column!(postgres, $table, $shares, $key),
                $rest
            ),
        }
    };
}
pub(crate) use with_shares;

/// A row of a share table (of one resource).
#[derive(sqlx::FromRow)]
pub(crate) struct ShareRow {
    user_id: String,
    role: String,
}

impl ShareRow {
    pub(crate) fn new(user_id: String, role: &str) -> Self {
        Self {
            user_id,
            role: role.to_owned(),
        }
    }
}

/// The row of a shared resource, which becomes its domain type together with its share rows.
/// (`Send + Sync + Unpin`, as every row is, so the helpers' futures may hold one.)
pub(crate) trait SharedRow: Sized + Send + Sync + Unpin {
    /// The domain type.
    type Resource;

    /// The stored id text, to read this row's shares.
    fn id(&self) -> &str;

    /// The resource, with `shares` being exactly this row's share rows (in any order).
    fn into_resource(self, shares: Vec<ShareRow>) -> Result<Self::Resource>;
}

/// The share config of a resource stored with `visibility` (from column `what`) and exactly
/// its share rows `shares` (in any order).
pub(crate) fn share_config(
    what: &str,
    visibility: &str,
    shares: Vec<ShareRow>,
) -> Result<ShareConfig> {
    let mut share_config = ShareConfig {
        visibility: Visibility::parse(visibility).ok_or_else(|| corrupt(what, visibility))?,
        user_ids: Vec::new(),
        manager_ids: Vec::new(),
    };
    for share in shares {
        let user = parse_user_id(&share.user_id)?;
        match share.role.as_str() {
            SHARE_USER => share_config.user_ids.push(user),
            SHARE_MANAGER => share_config.manager_ids.push(user),
            other => return Err(corrupt("share role", other)),
        }
    }
    Ok(share_config.normalized())
}

/// A shared resource's row read by a [`with_shares!`] statement: its columns, and its share
/// rows from column `shares`.
pub(crate) struct WithShares<R> {
    row: R,
    shares: Vec<(String, String)>,
}

impl<'r, R, DbRow> sqlx::FromRow<'r, DbRow> for WithShares<R>
where
    DbRow: sqlx::Row,
    R: sqlx::FromRow<'r, DbRow>,
    &'r str: sqlx::ColumnIndex<DbRow>,
    sqlx::types::Json<Vec<(String, String)>>:
        sqlx::Decode<'r, DbRow::Database> + sqlx::Type<DbRow::Database>,
{
    fn from_row(row: &'r DbRow) -> std::result::Result<Self, sqlx::Error> {
        let sqlx::types::Json(shares) = row.try_get("shares")?;
        Ok(Self {
            row: R::from_row(row)?,
            shares,
        })
    }
}

impl<R: SharedRow> WithShares<R> {
    /// The resource, with the share rows read with it.
    pub(crate) fn into_resource(self) -> Result<R::Resource> {
        let shares = self
            .shares
            .into_iter()
            .map(|(user_id, role)| ShareRow { user_id, role })
            .collect();
        self.row.into_resource(shares)
    }
}

/// The share rows to write for `share`: one per listed user and role, without duplicates.
pub(crate) fn share_rows(share: &ShareConfig) -> Vec<(UserId, &'static str)> {
    let share = share.clone().normalized();
    let users = share.user_ids.into_iter().map(|id| (id, SHARE_USER));
    let managers = share.manager_ids.into_iter().map(|id| (id, SHARE_MANAGER));
    users.chain(managers).collect()
}

/// The share helpers of store `$store` over database `$db`, for the shared resources'
/// implementations.
macro_rules! impl_shares {
    ($store:ident, $db:ty) => {
        impl $store {
            /// `row` with its shares from `table`, read on the same connection (or
            /// transaction).
            async fn with_shares<R: $crate::shares::SharedRow>(
                conn: &mut <$db as sqlx::Database>::Connection,
                table: &$crate::shares::ShareTable,
                row: Option<R>,
            ) -> $crate::Result<Option<R::Resource>> {
                let Some(row) = row else {
                    return Ok(None);
                };
                let shares = sqlx::query_as::<_, $crate::shares::ShareRow>(table.of)
                    .bind(row.id())
                    .fetch_all(&mut *conn)
                    .await?;
                row.into_resource(shares).map(Some)
            }

            /// The shared resource that `sql` (a [`with_shares!`] statement) selects by its
            /// one bind, `key`, with its shares.
            async fn shared_where<R>(
                &self,
                sql: &$crate::shares::Dialects,
                key: &str,
            ) -> $crate::Result<Option<R::Resource>>
            where
                R: $crate::shares::SharedRow
                    + for<'r> sqlx::FromRow<'r, <$db as sqlx::Database>::Row>,
            {
                sqlx::query_as::<_, $crate::shares::WithShares<R>>(Self::dialect(sql))
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?
                    .map($crate::shares::WithShares::into_resource)
                    .transpose()
            }

            /// The resources a list statement `rows` (a [`with_shares!`] statement) selects
            /// for `viewer` (`$1`; and `$2`, `second`, for lists that take one more bind),
            /// each with its shares.
            async fn list_shared<R>(
                &self,
                rows: &$crate::shares::Dialects,
                viewer: Option<ars_domain::UserId>,
                second: Option<bool>,
            ) -> $crate::Result<Vec<R::Resource>>
            where
                R: $crate::shares::SharedRow
                    + for<'r> sqlx::FromRow<'r, <$db as sqlx::Database>::Row>,
            {
                let mut listed =
                    sqlx::query_as::<_, $crate::shares::WithShares<R>>(Self::dialect(rows))
                        .bind(viewer.map(|user| user.to_string()));
                if let Some(second) = second {
                    listed = listed.bind(second);
                }
                listed
                    .fetch_all(&self.pool)
                    .await?
                    .into_iter()
                    .map($crate::shares::WithShares::into_resource)
                    .collect()
            }

            /// Writes the share rows of `share` for resource `id`, replacing any it had, inside
            /// the caller's write transaction; answers the rows written (what a read of them
            /// would answer: see [`Self::commit_written`]).
            async fn replace_shares(
                conn: &mut <$db as sqlx::Database>::Connection,
                table: &$crate::shares::ShareTable,
                id: &str,
                share: &ars_domain::ShareConfig,
            ) -> $crate::Result<Vec<$crate::shares::ShareRow>> {
                sqlx::query(table.delete)
                    .bind(id)
                    .execute(&mut *conn)
                    .await?;
                let mut written = Vec::new();
                for (user, role) in $crate::shares::share_rows(share) {
                    let user = user.to_string();
                    sqlx::query(table.insert)
                        .bind(id)
                        .bind(&user)
                        .bind(role)
                        .execute(&mut *conn)
                        .await?;
                    written.push($crate::shares::ShareRow::new(user, role));
                }
                Ok(written)
            }

            /// `row`, as written inside the write transaction `tx` together with exactly the
            /// share rows `shares` (as [`Self::replace_shares`] answered them: not read back);
            /// then commits.
            async fn commit_written<R: $crate::shares::SharedRow>(
                tx: sqlx::Transaction<'_, $db>,
                row: R,
                shares: Vec<$crate::shares::ShareRow>,
            ) -> $crate::Result<R::Resource> {
                let resource = row.into_resource(shares)?;
                tx.commit().await?;
                Ok(resource)
            }

            /// The resource that `sql` (a [`with_shares!`] statement) selects by `id`, read
            /// back with its shares inside the write transaction `tx`; then commits.
            /// `NotFound` (and nothing written) when there is none.
            async fn commit_read_back<R>(
                mut tx: sqlx::Transaction<'_, $db>,
                sql: &$crate::shares::Dialects,
                id: &str,
            ) -> $crate::Result<R::Resource>
            where
                R: $crate::shares::SharedRow
                    + for<'r> sqlx::FromRow<'r, <$db as sqlx::Database>::Row>,
            {
                let resource =
                    sqlx::query_as::<_, $crate::shares::WithShares<R>>(Self::dialect(sql))
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?
                        .ok_or($crate::StoreError::NotFound)?
                        .into_resource()?;
                tx.commit().await?;
                Ok(resource)
            }

            /// `row`, as read back inside the write transaction `tx`, with its shares; then
            /// commits. `NotFound` (and nothing written) when there is no row.
            async fn commit_shared<R: $crate::shares::SharedRow>(
                mut tx: sqlx::Transaction<'_, $db>,
                table: &$crate::shares::ShareTable,
                row: Option<R>,
            ) -> $crate::Result<R::Resource> {
                let resource = Self::with_shares(&mut tx, table, row)
                    .await?
                    .ok_or($crate::StoreError::NotFound)?;
                tx.commit().await?;
                Ok(resource)
            }
        }
    };
}
pub(crate) use impl_shares;
