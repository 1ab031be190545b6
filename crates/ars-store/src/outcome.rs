//! What a write did when "nothing happened" is an expected answer, not an error: each outcome
//! names why, so a caller matches on the reason instead of reading a `bool`.

/// What a delete (or a revocation) found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deleted {
    /// The row was there and is gone now, with everything that goes with it.
    Deleted,
    /// There was no such row: nothing changed.
    NotFound,
}

impl Deleted {
    /// `Deleted` when a statement removed a row, `NotFound` when it removed none.
    pub(crate) fn from_rows(rows_affected: u64) -> Self {
        if rows_affected > 0 {
            Self::Deleted
        } else {
            Self::NotFound
        }
    }
}

/// What a change to an existing row found (setting a password).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Updated {
    /// The row was changed.
    Updated,
    /// There was no such row: nothing changed.
    NotFound,
}

/// What a write of an ingestion worker did: it names the version of the document it claimed,
/// and the write happens only while that claim still stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// The claim stood and the write happened.
    Applied,
    /// Nothing was written: the document was re-uploaded (a new version), deleted, or is no
    /// longer `processing`. The worker stops.
    Superseded,
}

impl Written {
    /// `Applied` when the guarded statement matched its row, `Superseded` when it matched none.
    pub(crate) fn from_rows(rows_affected: u64) -> Self {
        if rows_affected > 0 {
            Self::Applied
        } else {
            Self::Superseded
        }
    }
}

/// What a retry of a failed document did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retried {
    /// The document is `pending` again.
    Retried,
    /// Nothing changed: the document is gone, or it has not failed (only a failed document is
    /// retried).
    NotFailed,
}

/// What binding an MCP session to its owner did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The session belongs to the user now.
    Bound,
    /// Nothing changed: the session is unknown, or it has an owner already (a session's owner
    /// never changes).
    Refused,
}
