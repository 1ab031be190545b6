//! Timestamps.

use chrono::{DateTime, SubsecRound, Utc};

/// The current time, truncated to microseconds.
///
/// Every store keeps at most microsecond precision (PostgreSQL's `timestamptz`), so truncating
/// here means a value read back equals the value written, whichever store holds it.
pub fn now() -> DateTime<Utc> {
    Utc::now().trunc_subsecs(6)
}
