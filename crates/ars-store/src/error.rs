//! Store errors, and the one place where database errors become them.
//!
//! Every sqlx error reaches callers through [`From<sqlx::Error>`], so a `?` anywhere in the
//! store classifies constraint violations the same way: unique → [`StoreError::Conflict`],
//! foreign key or check → [`StoreError::Invalid`], undecodable column → [`StoreError::Corrupt`].

use sqlx::error::{DatabaseError, ErrorKind};

/// What can go wrong in a store call. Expected outcomes (a missing row) are `Option`s or
/// outcome enums ([`crate::Deleted`], …), not errors.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint was hit; `field` names the payload field it guards.
    #[error("{field} is already taken")]
    Conflict { field: &'static str },
    /// The row the write targets does not exist.
    #[error("not found")]
    NotFound,
    /// The write names a row that does not exist (a foreign key), or breaks a check constraint.
    #[error("invalid write: {0}")]
    Invalid(String),
    /// The thread already has an active (pending or running) run, `active`: a new run must
    /// wait for it to end. Callers report it (SPEC: `busy`, naming the run), never queue.
    #[error("the thread already has an active run {active}")]
    Busy { active: ars_domain::RunId },
    /// A write for a run that is no longer active (the fence): whoever still executes it was
    /// cut off — cancelled, reaped after its lease ran out — and must stop.
    #[error("run {run} has ended; nothing more is written for it")]
    RunEnded { run: ars_domain::RunId },
    /// The `replace_from` of [`crate::RunStore::create_run_with_input`] names no message of the
    /// thread's history that an input may replace (`reason` says why); nothing was written.
    #[error("message {message} cannot be replaced: {reason}")]
    NotReplaceable {
        message: ars_domain::MessageId,
        reason: Unreplaceable,
    },
    /// Stored data could not be decoded into domain types.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Database(#[source] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// Why a message cannot be replaced by a new input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreplaceable {
    /// No message of this thread has that id (there is none, or it is another thread's).
    #[error("the thread has no such message")]
    NotInThread,
    /// It is an assistant, tool or system message: only the user's own messages are replaced.
    #[error("it is not a user message")]
    NotUserMessage,
    /// A run already replaced it: it has left the thread's history.
    #[error("it has already been replaced")]
    AlreadyReplaced,
}

/// Unique constraints and the payload field each one guards: `(needle, field)`, the needle
/// matched against the constraint name (PostgreSQL: `users_username_key`) or the message
/// (SQLite: `… failed: users.username`). The first match wins; anything else (a primary key) is
/// reported as `id`. Skill and provider names are matched with their table, since `name` alone
/// would also match `username`.
const UNIQUE_FIELDS: [(&str, &str); 8] = [
    ("username", "username"),
    ("slug", "slug"),
    ("token_hash", "token_hash"),
    ("is_default", "is_default"),
    ("skills_name_key", "name"),
    ("skills.name", "name"),
    ("model_providers_name_key", "name"),
    ("model_providers.name", "name"),
];

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        if let sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) = error {
            return Self::Corrupt(error.to_string());
        }
        let Some(db) = error.as_database_error() else {
            return Self::Database(error);
        };
        match db.kind() {
            ErrorKind::UniqueViolation => Self::Conflict {
                field: unique_field(db),
            },
            ErrorKind::ForeignKeyViolation
            | ErrorKind::CheckViolation
            | ErrorKind::NotNullViolation => Self::Invalid(db.message().to_string()),
            _ => Self::Database(error),
        }
    }
}

/// Which payload field a unique violation is about.
fn unique_field(db: &dyn DatabaseError) -> &'static str {
    let names = [db.constraint().unwrap_or_default(), db.message()];
    UNIQUE_FIELDS
        .into_iter()
        .find(|(needle, _)| names.iter().any(|name| name.contains(needle)))
        .map_or("id", |(_, field)| field)
}
