//! Users and API tokens.

use ars_domain::{AccountChange, Role, User, UserId};
use ars_store::{Deleted, NewToken, Store, StoreError, Updated, UserUpdate};
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
        Some((alice.clone(), forever.clone()))
    );
    assert_eq!(
        lookup("hash-future", now).await,
        Some((alice.clone(), future.clone()))
    );
    assert_eq!(
        lookup("hash-bobs", now).await,
        Some((bob.clone(), bobs.clone()))
    );
    assert_eq!(lookup("hash-past", now).await, None, "an expired token");
    assert_eq!(lookup("hash-unknown", now).await, None);
    // A token is valid strictly before its expiry instant, and not at it.
    let expiry = future.expires_at.unwrap();
    let just_before = expiry - Duration::microseconds(1);
    assert_eq!(
        lookup("hash-future", just_before).await,
        Some((alice.clone(), future.clone()))
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

    assert_eq!(
        store.revoke_token(mallory.id, secret.id).await.unwrap(),
        Deleted::NotFound
    );
    assert!(
        store
            .token_user("hash-secret", now)
            .await
            .unwrap()
            .is_some()
    );

    assert_eq!(
        store.revoke_token(alice.id, secret.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(store.token_user("hash-secret", now).await.unwrap(), None);
    assert!(store.list_tokens(alice.id).await.unwrap().is_empty());
    assert_eq!(
        store.revoke_token(alice.id, secret.id).await.unwrap(),
        Deleted::NotFound
    );
}

fn change(role: Option<Role>, disabled: Option<bool>) -> AccountChange {
    AccountChange { role, disabled }
}

/// The user `update_user` changed, failing the test on any other answer.
async fn updated(store: &dyn Store, id: UserId, change: AccountChange) -> User {
    match store.update_user(id, change).await.unwrap() {
        UserUpdate::Updated(user) => user,
        other => panic!("expected an update, got {other:?}"),
    }
}

pub async fn check_account_changes_keep_an_active_admin(store: &dyn Store) {
    let root = user_with_role(store, "root", Role::Admin).await;
    let amy = user(store, "amy").await;

    let promoted = updated(store, amy.id, change(Some(Role::Admin), None)).await;
    assert_eq!((promoted.role, promoted.disabled), (Role::Admin, false));
    assert!(promoted.updated_at >= amy.updated_at);
    assert_eq!(promoted.created_at, amy.created_at);
    assert_eq!(store.user(amy.id).await.unwrap(), Some(promoted.clone()));

    // Two active admins: one of them may go.
    let demoted = updated(store, root.id, change(Some(Role::User), None)).await;
    assert_eq!(demoted.role, Role::User);

    // Amy is the last active admin now: demoting or disabling her changes nothing.
    for refused in [
        change(Some(Role::User), None),
        change(None, Some(true)),
        change(Some(Role::User), Some(true)),
    ] {
        let answer = store.update_user(amy.id, refused).await.unwrap();
        assert_eq!(answer, UserUpdate::LastAdmin(promoted.clone()));
    }
    assert_eq!(store.user(amy.id).await.unwrap(), Some(promoted.clone()));
    // A change that keeps her an active admin is no change of that kind.
    updated(store, amy.id, change(Some(Role::Admin), Some(false))).await;

    // A disabled admin is no active admin.
    let disabled_admin = updated(store, root.id, change(Some(Role::Admin), Some(true))).await;
    assert!(disabled_admin.disabled && disabled_admin.is_admin());
    let answer = store
        .update_user(amy.id, change(None, Some(true)))
        .await
        .unwrap();
    assert!(matches!(answer, UserUpdate::LastAdmin(_)), "{answer:?}");
    let enabled = updated(store, root.id, change(None, Some(false))).await;
    assert!(enabled.is_active_admin());
    updated(store, amy.id, change(None, Some(true))).await;

    // Disabled users are listed, flagged.
    let listed = store.list_users().await.unwrap();
    let flags: Vec<(String, bool)> = listed
        .into_iter()
        .map(|u| (u.username, u.disabled))
        .collect();
    assert_eq!(flags, [("amy".into(), true), ("root".into(), false)]);

    let missing = store
        .update_user(UserId::new(), change(None, Some(true)))
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)), "{missing:?}");
}

pub async fn check_concurrent_demotions_leave_an_admin(store: &dyn Store) {
    let a = user_with_role(store, "a", Role::Admin).await;
    let b = user_with_role(store, "b", Role::Admin).await;
    let demote = change(Some(Role::User), None);
    let (first, second) = tokio::join!(
        store.update_user(a.id, demote),
        store.update_user(b.id, demote)
    );
    let answers = [first.unwrap(), second.unwrap()];
    let refused = answers
        .iter()
        .filter(|a| matches!(a, UserUpdate::LastAdmin(_)))
        .count();
    assert_eq!(refused, 1, "{answers:?}");
    let admins = store
        .list_users()
        .await
        .unwrap()
        .into_iter()
        .filter(|u| u.is_active_admin())
        .count();
    assert_eq!(admins, 1);
}

pub async fn check_disabled_users_tokens_are_found_flagged(store: &dyn Store) {
    let _root = user_with_role(store, "root", Role::Admin).await;
    let alice = user(store, "alice").await;
    let token = store
        .create_token(token(alice.id, "laptop", None))
        .await
        .unwrap();
    updated(store, alice.id, change(None, Some(true))).await;
    let now = ars_domain::time::now();
    let (found, found_token) = store.token_user("hash-laptop", now).await.unwrap().unwrap();
    assert!(found.disabled);
    assert_eq!(found_token.id, token.id);
    // Enabling the account again leaves the token as it was.
    updated(store, alice.id, change(None, Some(false))).await;
    let (found, _) = store.token_user("hash-laptop", now).await.unwrap().unwrap();
    assert!(!found.disabled);
}

pub async fn check_password_change_revokes_other_tokens(store: &dyn Store) {
    let alice = user(store, "alice").await;
    let bob = user(store, "bob").await;
    let current = store
        .create_token(token(alice.id, "current", None))
        .await
        .unwrap();
    store
        .create_token(token(alice.id, "other", None))
        .await
        .unwrap();
    store
        .create_token(token(bob.id, "bobs", None))
        .await
        .unwrap();
    let now = ars_domain::time::now();

    assert_eq!(
        store
            .set_password(alice.id, "new-hash", Some(current.id))
            .await
            .unwrap(),
        Updated::Updated
    );
    let (changed, hash) = store.user_credentials("alice").await.unwrap().unwrap();
    assert_eq!(hash, "new-hash");
    assert!(changed.updated_at >= alice.updated_at);
    assert!(
        store
            .token_user("hash-current", now)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(store.token_user("hash-other", now).await.unwrap(), None);
    assert!(store.token_user("hash-bobs", now).await.unwrap().is_some());

    // Without a token to keep, every one goes.
    assert_eq!(
        store
            .set_password(alice.id, "newer-hash", None)
            .await
            .unwrap(),
        Updated::Updated
    );
    assert!(store.list_tokens(alice.id).await.unwrap().is_empty());
    assert_eq!(store.list_tokens(bob.id).await.unwrap().len(), 1);

    assert_eq!(
        store.set_password(UserId::new(), "x", None).await.unwrap(),
        Updated::NotFound
    );
}

pub async fn check_token_use_is_recorded(store: &dyn Store) {
    let alice = user(store, "alice").await;
    let created = store
        .create_token(token(alice.id, "ci", None))
        .await
        .unwrap();
    assert_eq!(created.last_used_at, None);
    let at = Utc::now();
    store.touch_token(created.id, at).await.unwrap();
    let expected = Some(chrono::SubsecRound::trunc_subsecs(at, 6));
    let listed = store.list_tokens(alice.id).await.unwrap();
    assert_eq!(listed[0].last_used_at, expected);
    let (_, found) = store
        .token_user("hash-ci", ars_domain::time::now())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.last_used_at, expected);
    // A token revoked meanwhile is no error.
    store
        .touch_token(ars_domain::TokenId::new(), at)
        .await
        .unwrap();
}
