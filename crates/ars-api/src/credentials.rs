//! What this instance remembers of the API tokens it has seen: a request's token is read from
//! the store at most once a second, not once per request (three reads per HTTP run).
//!
//! **Invariant:** a change to an account or its tokens (disabled, role, password, a revoked
//! token) reaches every request of the instance that wrote it at once — it forgets the user
//! before it answers, and a read that began before the change is never kept — and every other
//! instance as soon as the control channel says so ([`Runtime::announce_account_change`]). A
//! change the channel lost, or one written by a process that announces nothing (the `ars`
//! account commands), holds everywhere within [`FRESH_FOR`]: no entry is older. An expired
//! token is never served from memory: its expiry is checked on every request, as the store's
//! read checks it.
//!
//! [`Runtime::announce_account_change`]: ars_runtime::Runtime::announce_account_change

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use ars_domain::{ApiToken, User, UserId};
use ars_runtime::Runtime;

/// How long a token read from the store is trusted: the longest a change this instance was
/// not told of takes to hold here.
pub(crate) const FRESH_FOR: Duration = Duration::from_secs(1);

/// Tokens remembered at once. Only tokens the store knows are remembered, so a flood of made-up
/// tokens costs reads, never memory; past the bound the stale entries go, then all of them.
const CAPACITY: usize = 4096;

/// The tokens read lately, by hash. A std `Mutex`: never held across an `.await`.
#[derive(Default)]
pub(crate) struct Credentials {
    remembered: Mutex<Remembered>,
}

#[derive(Default)]
struct Remembered {
    by_hash: HashMap<String, Entry>,
    /// Counts the changes forgotten so far: a read that began under an older count may have
    /// read what a change replaced, so it is not kept.
    changes: u64,
}

struct Entry {
    user: User,
    token: ApiToken,
    read_at: Instant,
}

/// What [`Credentials::recall`] found.
pub(crate) enum Recalled {
    /// The user and the token, read less than [`FRESH_FOR`] ago; the token is unexpired.
    Known(User, ApiToken),
    /// Read the store, then [`Credentials::keep`] the answer with this mark.
    Read(Mark),
}

/// When a read of the store began, among the changes forgotten.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark(u64);

impl Credentials {
    /// The user and token of `hash`, if read lately and unexpired at `now`.
    pub(crate) fn recall(&self, hash: &str, now: DateTime<Utc>) -> Recalled {
        let Ok(remembered) = self.remembered.lock() else {
            return Recalled::Read(Mark(u64::MAX));
        };
        match remembered.by_hash.get(hash) {
            Some(entry)
                if entry.read_at.elapsed() < FRESH_FOR
                    // The store's rule: a token expiring exactly now is expired.
                    && entry.token.expires_at.is_none_or(|at| at > now) =>
            {
                Recalled::Known(entry.user.clone(), entry.token.clone())
            }
            _ => Recalled::Read(Mark(remembered.changes)),
        }
    }

    /// Remembers what a read begun at `mark` found, unless an account changed since.
    pub(crate) fn keep(&self, mark: Mark, hash: &str, user: &User, token: &ApiToken) {
        let Ok(mut remembered) = self.remembered.lock() else {
            return;
        };
        if remembered.changes != mark.0 {
            return;
        }
        if remembered.by_hash.len() >= CAPACITY && !remembered.by_hash.contains_key(hash) {
            remembered
                .by_hash
                .retain(|_, entry| entry.read_at.elapsed() < FRESH_FOR);
            if remembered.by_hash.len() >= CAPACITY {
                remembered.by_hash.clear();
            }
        }
        remembered.by_hash.insert(
            hash.to_owned(),
            Entry {
                user: user.clone(),
                token: token.clone(),
                read_at: Instant::now(),
            },
        );
    }

    /// Notes that the token of `hash` was recorded as used at `at`, so the next requests do
    /// not record it again.
    pub(crate) fn used(&self, hash: &str, at: DateTime<Utc>) {
        if let Ok(mut remembered) = self.remembered.lock()
            && let Some(entry) = remembered.by_hash.get_mut(hash)
        {
            entry.token.last_used_at = Some(at);
        }
    }

    /// Forgets every token of `user`: its account or tokens changed.
    pub(crate) fn forget_user(&self, user: UserId) {
        if let Ok(mut remembered) = self.remembered.lock() {
            remembered.changes = remembered.changes.wrapping_add(1);
            remembered.by_hash.retain(|_, entry| entry.user.id != user);
        }
    }

    /// Forgets everything: changes may have been missed.
    fn forget_all(&self) {
        if let Ok(mut remembered) = self.remembered.lock() {
            remembered.changes = remembered.changes.wrapping_add(1);
            remembered.by_hash.clear();
        }
    }

    /// Follows the account changes the runtime hears on the control channel, from every
    /// instance, for as long as these credentials and the runtime live.
    pub(crate) fn follow(self: &Arc<Self>, runtime: &Runtime) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let mut changes = runtime.account_changes();
        let credentials: Weak<Self> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let changed = changes.recv().await;
                let Some(credentials) = credentials.upgrade() else {
                    return;
                };
                match changed {
                    Ok(user) => credentials.forget_user(user),
                    Err(RecvError::Lagged(_)) => credentials.forget_all(),
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ars_domain::{Role, TokenId};

    fn user() -> User {
        let now = ars_domain::time::now();
        User {
            id: UserId::new(),
            username: "ada".into(),
            role: Role::User,
            disabled: false,
            created_at: now,
            updated_at: now,
        }
    }

    fn token(of: &User, expires_at: Option<DateTime<Utc>>) -> ApiToken {
        ApiToken {
            id: TokenId::new(),
            user_id: of.id,
            name: "laptop".into(),
            created_at: of.created_at,
            expires_at,
            last_used_at: None,
        }
    }

    fn known(recalled: Recalled) -> Option<(User, ApiToken)> {
        match recalled {
            Recalled::Known(user, token) => Some((user, token)),
            Recalled::Read(_) => None,
        }
    }

    fn mark(recalled: Recalled) -> Mark {
        match recalled {
            Recalled::Read(mark) => mark,
            Recalled::Known(..) => panic!("expected a read"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_read_is_trusted_for_a_second_and_then_read_again() {
        let credentials = Credentials::default();
        let (ada, laptop) = (user(), token(&user(), None));
        let now = ars_domain::time::now();
        let first = mark(credentials.recall("h", now));
        credentials.keep(first, "h", &ada, &laptop);
        assert_eq!(known(credentials.recall("h", now)), Some((ada, laptop)));
        tokio::time::advance(FRESH_FOR).await;
        assert!(known(credentials.recall("h", now)).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn an_expired_token_is_never_served_from_memory() {
        let credentials = Credentials::default();
        let ada = user();
        let now = ars_domain::time::now();
        let laptop = token(&ada, Some(now + chrono::Duration::milliseconds(10)));
        let first = mark(credentials.recall("h", now));
        credentials.keep(first, "h", &ada, &laptop);
        assert!(known(credentials.recall("h", now)).is_some());
        let at_expiry = now + chrono::Duration::milliseconds(10);
        assert!(
            known(credentials.recall("h", at_expiry)).is_none(),
            "a token expiring exactly now is expired"
        );
    }

    #[tokio::test]
    async fn a_changed_account_is_forgotten_and_a_read_begun_before_the_change_is_not_kept() {
        let credentials = Credentials::default();
        let (ada, bob) = (user(), user());
        let (adas, bobs) = (token(&ada, None), token(&bob, None));
        let now = ars_domain::time::now();
        for (hash, user, token) in [("a", &ada, &adas), ("b", &bob, &bobs)] {
            let read = mark(credentials.recall(hash, now));
            credentials.keep(read, hash, user, token);
        }
        credentials.forget_user(ada.id);
        assert!(known(credentials.recall("a", now)).is_none());
        assert!(known(credentials.recall("b", now)).is_some(), "only ada's");

        // A read begins, the account changes meanwhile: what the read found may be stale.
        let before = mark(credentials.recall("a", now));
        credentials.forget_user(ada.id);
        credentials.keep(before, "a", &ada, &adas);
        assert!(known(credentials.recall("a", now)).is_none());
        let after = mark(credentials.recall("a", now));
        credentials.keep(after, "a", &ada, &adas);
        assert!(known(credentials.recall("a", now)).is_some());
    }

    #[tokio::test]
    async fn remembered_tokens_stay_bounded() {
        let credentials = Credentials::default();
        let ada = user();
        let now = ars_domain::time::now();
        for k in 0..CAPACITY + 10 {
            let hash = format!("h{k}");
            let read = mark(credentials.recall(&hash, now));
            credentials.keep(read, &hash, &ada, &token(&ada, None));
        }
        let held = credentials.remembered.lock().unwrap().by_hash.len();
        assert!(held <= CAPACITY, "{held}");
        assert!(known(credentials.recall(&format!("h{}", CAPACITY + 9), now)).is_some());
    }

    #[tokio::test]
    async fn a_recorded_use_is_remembered() {
        let credentials = Credentials::default();
        let ada = user();
        let now = ars_domain::time::now();
        let read = mark(credentials.recall("h", now));
        credentials.keep(read, "h", &ada, &token(&ada, None));
        credentials.used("h", now);
        let (_, token) = known(credentials.recall("h", now)).unwrap();
        assert_eq!(token.last_used_at, Some(now));
    }
}
