//! A bound on the upload bytes this server holds in memory at once, across all requests.
//!
//! Some uploads are read whole before they are stored (a knowledge-base document goes into
//! the database as one value). Each such request takes room here as its bytes arrive and
//! gives it back when it is done (the guard is dropped), so many large uploads at once cannot
//! take the server's memory: past the bound, a request is answered 503 with `Retry-After`
//! at once, and what it read so far is freed.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::ApiError;

/// Room is counted in KiB, so a `u32` of permits covers terabytes.
const UNIT: usize = 1024;
/// What a refused upload is told to wait.
const RETRY_AFTER_S: u64 = 5;

/// The bound, shared by every request of this server.
#[derive(Clone, Debug)]
pub struct UploadBudget {
    room: Arc<Semaphore>,
    limit: usize,
}

impl UploadBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        let units = limit.div_ceil(UNIT).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            room: Arc::new(Semaphore::new(units)),
            limit,
        }
    }

    /// Room for one request's upload, empty until it grows.
    pub fn hold(&self) -> Held {
        Held {
            budget: self.clone(),
            permit: None,
            bytes: 0,
        }
    }
}

/// The room one request holds; given back when dropped.
#[derive(Debug)]
pub struct Held {
    budget: UploadBudget,
    permit: Option<OwnedSemaphorePermit>,
    bytes: usize,
}

impl Held {
    /// Takes room for `more` bytes, or refuses the request (503) when the server holds as
    /// many upload bytes as it may.
    pub fn grow(&mut self, more: usize) -> Result<(), ApiError> {
        let held_units = self.bytes.div_ceil(UNIT);
        self.bytes += more;
        let needed = self.bytes.div_ceil(UNIT).saturating_sub(held_units);
        if needed == 0 {
            return Ok(());
        }
        let units = u32::try_from(needed).unwrap_or(u32::MAX);
        match Arc::clone(&self.budget.room).try_acquire_many_owned(units) {
            Ok(permit) => {
                match &mut self.permit {
                    Some(held) => held.merge(permit),
                    None => self.permit = Some(permit),
                }
                Ok(())
            }
            Err(_) => Err(ApiError::Unavailable {
                message: format!(
                    "the server is receiving as many uploads as it holds at once ({} MiB); \
                     try again in a few seconds",
                    self.budget.limit / (1024 * 1024)
                ),
                retry_after_s: RETRY_AFTER_S,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_taken_as_bytes_arrive_and_given_back_when_dropped() {
        let budget = UploadBudget::new(10 * UNIT);
        let mut first = budget.hold();
        first.grow(6 * UNIT).unwrap();
        let mut second = budget.hold();
        second.grow(3 * UNIT).unwrap();
        let refused = second.grow(2 * UNIT).unwrap_err();
        assert!(matches!(
            refused,
            ApiError::Unavailable {
                retry_after_s: 5,
                ..
            }
        ));
        drop(first);
        let mut third = budget.hold();
        third.grow(6 * UNIT).unwrap();
        // Bytes within a unit already held take nothing more.
        let mut small = budget.hold();
        small.grow(1).unwrap();
        small.grow(UNIT - 1).unwrap();
    }
}
