//! Account operations shared by the HTTP API and the admin CLI: creating users (hashing off
//! the async threads), changing passwords, creating tokens, and the first-start admin.

use std::sync::OnceLock;

use ars_domain::user::{ADMIN_USERNAME, PasswordPolicy, validate_username};
use ars_domain::{ApiToken, Role, TokenId, User, UserId, ValidationError, credentials};
use ars_store::{AccountStore, NewToken, NewUser};

use crate::ApiError;

/// The threads password hashes run on: one per core, for the server's life. Each argon2 hash
/// holds its memory cost (19 MiB) while it runs and keeps a core busy, so more at once only
/// queue on the cores; hashes beyond them wait in the pool's queue, without a thread: at most
/// one hash's memory per core while logins come, none once they stop (`credentials` maps a
/// hash's memory for it and gives it back). `None` if the threads could not be started.
fn hashing_pool() -> Option<&'static rayon_core::ThreadPool> {
    static POOL: OnceLock<Option<rayon_core::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        hashing_threads(threads)
            .inspect_err(|e| tracing::warn!(error = %e, "password hashing threads not started"))
            .ok()
    })
    .as_ref()
}

/// `threads` hashing threads, named for `top` and debuggers; a panic in a hash answers its
/// caller `None` instead of ending the process (rayon's default).
fn hashing_threads(
    threads: usize,
) -> Result<rayon_core::ThreadPool, rayon_core::ThreadPoolBuildError> {
    rayon_core::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("ars-hash-{i}"))
        .panic_handler(|_| {})
        .build()
}

/// Runs `work` on `pool` (on a blocking thread of the runtime when there is no pool): argon2 is
/// slow on purpose and must not stall the runtime. `None` when the work could not finish (it panicked).
async fn hashed<T: Send + 'static>(
    pool: Option<&rayon_core::ThreadPool>,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let Some(pool) = pool else {
        return tokio::task::spawn_blocking(work).await.ok();
    };
    let (answer, answered) = tokio::sync::oneshot::channel();
    pool.spawn(move || {
        let _ = answer.send(work());
    });
    answered.await.ok()
}

/// Hashes on a hashing thread (see [`hashing_pool`]).
pub async fn hash_password(password: String) -> Result<String, ApiError> {
    hashed(hashing_pool(), move || {
        credentials::hash_password(&password)
    })
    .await
    .ok_or_else(|| ApiError::Internal("password hashing stopped".into()))?
    .map_err(|e| ApiError::Internal(e.to_string()))
}

/// Verifies on a hashing thread (see [`hashing_pool`]). With no stored hash, a dummy hash is
/// still checked so that unknown usernames take as long as wrong passwords.
pub async fn verify_password(password: String, stored: Option<String>) -> bool {
    static DUMMY: OnceLock<String> = OnceLock::new();
    hashed(hashing_pool(), move || match stored {
        Some(hash) => credentials::verify_password(&password, &hash),
        None => {
            let dummy = DUMMY.get_or_init(|| {
                credentials::hash_password("not a real password").unwrap_or_default()
            });
            let _ = credentials::verify_password(&password, dummy);
            false
        }
    })
    .await
    .unwrap_or(false)
}

/// Validates and creates a user; the password must satisfy `policy`.
pub async fn create_user(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    username: &str,
    password: &str,
    role: Role,
) -> Result<User, ApiError> {
    validate_username(username)?;
    policy.validate(password)?;
    let password_hash = hash_password(password.to_string()).await?;
    Ok(store
        .create_user(NewUser {
            username: username.to_string(),
            password_hash,
            role,
        })
        .await?)
}

/// Makes `password` the user's new one: checked against `policy` (a 422 naming `field`),
/// hashed, stored, and every token of the user revoked but `keep` (the session that made the
/// change), so whoever knew the old password is logged out everywhere. A 404 when the user is
/// gone.
pub async fn change_password(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    user: UserId,
    password: &str,
    keep: Option<TokenId>,
    field: &str,
) -> Result<(), ApiError> {
    policy.validate(password).map_err(|err| match err {
        ValidationError::Invalid(e) => {
            let reason = e
                .reason
                .unwrap_or(ars_domain::ErrorReason::InvalidValue.into());
            ApiError::unprocessable(field, e.message).because(reason)
        }
        other => other.into(),
    })?;
    let password_hash = hash_password(password.to_string()).await?;
    match store.set_password(user, &password_hash, keep).await? {
        ars_store::Updated::Updated => Ok(()),
        ars_store::Updated::NotFound => Err(ApiError::not_found(ars_domain::Subject::User)),
    }
}

/// Creates a token for `user`; returns the secret (shown once) and its metadata.
pub async fn create_token(
    store: &dyn AccountStore,
    user: &User,
    name: &str,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<(String, ApiToken), ApiError> {
    let secret = credentials::generate_token();
    let token = store
        .create_token(NewToken {
            user_id: user.id,
            name: name.to_string(),
            token_hash: credentials::token_hash(&secret),
            expires_at,
        })
        .await?;
    Ok((secret, token))
}

/// The result of [`ensure_admin`].
#[derive(Debug, PartialEq, Eq)]
pub enum AdminBootstrap {
    /// Users already exist; nothing was done.
    Existing,
    /// The admin was created with the configured password.
    Created,
    /// The admin was created with this generated password, to be shown once.
    CreatedWithPassword(String),
}

/// On an empty database, creates the `admin` user; a configured password must satisfy
/// `policy` like any other. Safe to race: when another instance created it first, the unique
/// username makes this a no-op.
pub async fn ensure_admin(
    store: &dyn AccountStore,
    policy: PasswordPolicy,
    configured_password: Option<&str>,
) -> Result<AdminBootstrap, ApiError> {
    if store.count_users().await? > 0 {
        return Ok(AdminBootstrap::Existing);
    }
    let (password, generated) = match configured_password {
        Some(p) => (p.to_string(), false),
        None => (credentials::generate_password(policy.min_chars), true),
    };
    match create_user(store, policy, ADMIN_USERNAME, &password, Role::Admin).await {
        Ok(_) if generated => Ok(AdminBootstrap::CreatedWithPassword(password)),
        Ok(_) => Ok(AdminBootstrap::Created),
        Err(e) if matches!(e.kind(), ApiError::Conflict { .. }) => Ok(AdminBootstrap::Existing),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn password_hashes_run_no_more_at_once_than_there_are_hashing_threads() {
        let pool = Arc::new(hashing_threads(2).unwrap());
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let works: Vec<_> = (0..12)
            .map(|i| {
                let (pool, running, most) = (pool.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    hashed(Some(&pool), move || {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(20));
                        running.fetch_sub(1, Ordering::SeqCst);
                        (i, std::thread::current().name().map(str::to_owned))
                    })
                    .await
                })
            })
            .collect();
        for (i, work) in works.into_iter().enumerate() {
            let (done, thread) = work.await.unwrap().expect("every one ran");
            assert_eq!(done, i);
            assert!(thread.is_some_and(|t| t.starts_with("ars-hash-")));
        }
        assert_eq!(most.load(Ordering::SeqCst), 2, "two at a time, never more");
    }

    #[tokio::test]
    async fn a_hash_that_panics_answers_none_and_the_threads_go_on() {
        let pool = hashing_threads(1).unwrap();
        assert_eq!(
            hashed(Some(&pool), || -> u8 { panic!("hash failed") }).await,
            None
        );
        assert_eq!(hashed(Some(&pool), || 7).await, Some(7));
        // Without the threads, a blocking thread of the runtime hashes.
        assert_eq!(hashed(None, || 8).await, Some(8));
    }

    #[tokio::test]
    async fn a_password_hashed_on_the_hashing_threads_verifies_only_itself() {
        let hash = hash_password("correct horse".into()).await.unwrap();
        assert!(verify_password("correct horse".into(), Some(hash.clone())).await);
        assert!(!verify_password("wrong horse".into(), Some(hash)).await);
        assert!(!verify_password("correct horse".into(), None).await);
    }
}
