//! Store errors.

/// What can go wrong in a store call. Expected outcomes (a missing row) are `Option`/`bool`
/// return values, not errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint was hit; `field` names the payload field it guards.
    #[error("{field} is already taken")]
    Conflict { field: &'static str },
    /// The row the write targets does not exist.
    #[error("not found")]
    NotFound,
    /// The write names a row that does not exist (a foreign key), or breaks a check constraint.
    #[error("invalid reference: {0}")]
    Invalid(String),
    /// Stored data could not be decoded into domain types.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}
