//! Users and API tokens.

use ars_domain::{Role, UserId};
use ars_store::{NewToken, Store, StoreError};
use chrono::{Duration, Utc};

use crate::fixtures::{user, user_with_role};

pub async fn check_users_create_and_lookup(store: &dyn Store) {
    let zed = user_with_role(store, "zed", Role::Admin).await;
    assert_eq!(zed.username, "zed");
    assert_eq!(zed.role, Role::Admin);
    assert_eq!(zed.created_at, zed.updated_at);
    assert_eq!(store.user(zed.id).await.unwrap(), Some(zed.clone()));

    let (found, hash) = store.user_credentials("zed").await.unwrap().unwrap();
    assert_eq!(found, zed);
    assert_eq!(hash, "hash-of-zed");

    assert_eq!(store.user_credentials("nobody").await.unwrap(), None);
    assert_eq!(store.user(UserId::new()).await.unwrap(), None);

    let amy = user(store, "amy").await;
    assert_eq!(amy.role, Role::User);
    // Listed by username.
    assert_eq!(store.list_users().await.unwrap(), vec![amy, zed]);
}

pub async fn check_duplicate_username_conflicts(store: &dyn Store) {
    let alice = user(store, "alice").await;
    let again = store
        .create_user(ars_store::NewUser {
            username: "alice".into(),
            password_hash: "other".into(),
            role: Role::Admin,
        })
        .await;
    assert!(
        matches!(again, Err(StoreError::Conflict { field: "username" })),
        "{again:?}"
    );
    assert_eq!(store.count_users().await.unwrap(), 1);
    let (stored, hash) = store.user_credentials("alice").await.unwrap().unwrap();
    assert_eq!((stored, hash.as_str()), (alice, "hash-of-alice"));
}

pub async fn check_count_and_existing_users(store: &dyn Store) {
    assert_eq!(store.count_users().await.unwrap(), 0);
    let a = user(store, "a").await;
    let b = user(store, "b").await;
    let c = user(store, "c").await;
    assert_eq!(store.count_users().await.unwrap(), 3);

    let stranger = UserId::new();
    assert_eq!(
        store.existing_users(&[c.id, stranger, a.id]).await.unwrap(),
        vec![c.id, a.id]
    );
    assert!(store.existing_users(&[]).await.unwrap().is_empty());

    // More ids than one statement checks: the answer spans every chunk.
    let mut many: Vec<UserId> = (0..1_200).map(|_| UserId::new()).collect();
    many.insert(3, b.id);
    many.push(a.id);
    assert_eq!(store.existing_users(&many).await.unwrap(), vec![b.id, a.id]);
}

fn token(user: UserId, name: &str, expires_in: Option<Duration>) -> NewToken {
    NewToken {
        user_id: user,
        name: name.to_string(),
        token_hash: format!("hash-{name}"),
        expires_at: expires_in.map(|d| ars_domain::time::now() + d),
    }
}

pub async fn check_tokens_lookup_and_expiry(store: &dyn Store) {
    let alice = user(store, "alice").await;
    let bob = user(store, "bob").await;
    let forever = store
        .create_token(token(alice.id, "forever", None))
        .await
        .unwrap();
    let future = store
        .create_token(token(alice.id, "future", Some(Duration::hours(1))))
        .await
        .unwrap();
    let past = store
        .create_token(token(alice.id, "past", Some(Duration::seconds(-1))))
        .await
        .unwrap();
    let bobs = store
        .create_token(token(bob.id, "bobs", None))
        .await
        .unwrap();
    assert_eq!(
        (forever.user_id, forever.name.as_str()),
        (alice.id, "forever")
    );
    assert_eq!(forever.expires_at, None);

    let now = ars_domain::time::now();
    let lookup = |hash: &'static str, at| async move { store.token_user(hash, at).await.unwrap() };
    assert_eq!(
        lookup("hash-forever", now).await,
        Some((alice.clone(), forever.id))
    );
    assert_eq!(
        lookup("hash-future", now).await,
        Some((alice.clone(), future.id))
    );
    assert_eq!(lookup("hash-bobs", now).await, Some((bob.clone(), bobs.id)));
    assert_eq!(lookup("hash-past", now).await, None, "an expired token");
    assert_eq!(lookup("hash-unknown", now).await, None);
    // A token is valid strictly before its expiry instant, and not at it.
    let expiry = future.expires_at.unwrap();
    let just_before = expiry - Duration::microseconds(1);
    assert_eq!(
        lookup("hash-future", just_before).await,
        Some((alice.clone(), future.id))
    );
    assert_eq!(lookup("hash-future", expiry).await, None);
    // An instant with nanoseconds compares correctly too.
    let precise = Utc::now() + Duration::nanoseconds(123);
    assert!(lookup("hash-forever", precise).await.is_some());

    let mut expected = vec![forever, future, past];
    expected.sort_by_key(|t| (t.created_at, t.id));
    assert_eq!(store.list_tokens(alice.id).await.unwrap(), expected);
    assert_eq!(store.list_tokens(bob.id).await.unwrap(), vec![bobs]);

    let orphan = store
        .create_token(token(UserId::new(), "orphan", None))
        .await;
    assert!(matches!(orphan, Err(StoreError::Invalid(_))), "{orphan:?}");
    let mut duplicate = token(bob.id, "again", None);
    duplicate.token_hash = "hash-forever".into();
    let duplicate = store.create_token(duplicate).await;
    assert!(
        matches!(
            duplicate,
            Err(StoreError::Conflict {
                field: "token_hash"
            })
        ),
        "{duplicate:?}"
    );
}

pub async fn check_revoke_only_own_tokens(store: &dyn Store) {
    let alice = user(store, "alice").await;
    let mallory = user(store, "mallory").await;
    let secret = store
        .create_token(token(alice.id, "secret", None))
        .await
        .unwrap();
    let now = ars_domain::time::now();

    assert!(!store.revoke_token(mallory.id, secret.id).await.unwrap());
    assert!(
        store
            .token_user("hash-secret", now)
            .await
            .unwrap()
            .is_some()
    );

    assert!(store.revoke_token(alice.id, secret.id).await.unwrap());
    assert_eq!(store.token_user("hash-secret", now).await.unwrap(), None);
    assert!(store.list_tokens(alice.id).await.unwrap().is_empty());
    assert!(!store.revoke_token(alice.id, secret.id).await.unwrap());
}
