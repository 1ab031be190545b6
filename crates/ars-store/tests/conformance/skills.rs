//! Skill rows and their files: create, read, replace, share, delete.

use std::collections::BTreeMap;

use ars_domain::{NewSkill, ShareConfig, SkillContent, SkillFileInfo, SkillId, UserId, Visibility};
use ars_store::test_support::RawSql;
use ars_store::{Deleted, SkillFilter, Store, StoreError};

use crate::fixtures::{file, new_skill, shares, skill_content, sorted, user};

/// Bytes that are not text: NULs, a lone continuation byte, an invalid UTF-8 lead.
const BINARY: &[u8] = &[0, 0xff, 0xfe, 0, 0x80, b'P', b'K', 0, 0xc3];

/// A skill with every manifest field set and files of every kind, given out of order.
fn rich_content(name: &str) -> SkillContent {
    SkillContent {
        name: name.to_string(),
        description: "Fills in PDF forms.".into(),
        license: Some("Apache-2.0".into()),
        compatibility: Some("needs python3".into()),
        metadata: BTreeMap::from([
            ("author".to_string(), "ars".to_string()),
            ("语言".to_string(), "中文".to_string()),
        ]),
        allowed_tools: vec!["shell".into(), "read_file".into()],
        version: "sha256:0123abcd".into(),
        files: vec![
            file("scripts/fill.py", b"print('hi')\n"),
            file("references/说明.md", "# 说明\n".as_bytes()),
            file("assets/logo.bin", BINARY),
            file("assets/empty.txt", b""),
            file("SKILL.md", b"---\nname: pdf\n---\nUse it.\n"),
        ],
    }
}

/// The paths of `content` in byte order, as the store lists them.
fn sorted_infos(content: &SkillContent) -> Vec<SkillFileInfo> {
    let mut infos: Vec<SkillFileInfo> = content.files.iter().map(|f| f.info()).collect();
    infos.sort_by(|a, b| a.path.cmp(&b.path));
    infos
}

/// Asserts the stored files of `id` are exactly those of `content`.
async fn assert_files(store: &dyn Store, id: SkillId, content: &SkillContent) {
    let mut files = content.files.clone();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(store.skill_contents(id).await.unwrap(), files);
    assert_eq!(store.skill_files(id).await.unwrap(), sorted_infos(content));
    for file in &content.files {
        let stored = store.skill_file(id, &file.path).await.unwrap();
        assert_eq!(
            stored.as_deref(),
            Some(file.content.as_slice()),
            "{}",
            file.path
        );
    }
}

pub async fn check_skill_create_get_and_files_round_trip(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (l1, l2) = (user(store, "l1").await, user(store, "l2").await);
    let content = rich_content("pdf");
    let new = NewSkill {
        owner_id: Some(owner.id),
        // Unsorted, with a duplicate: kept once each and returned sorted, as for agents.
        share_config: shares(Visibility::Users, &[l2.id, l1.id, l2.id], &[owner.id]),
        content: content.clone(),
    };
    let created = store.create_skill(&new).await.unwrap();

    assert_eq!(created.name, "pdf");
    assert_eq!(created.description, content.description);
    assert_eq!(created.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(created.compatibility.as_deref(), Some("needs python3"));
    assert_eq!(created.metadata, content.metadata);
    assert_eq!(created.allowed_tools, ["shell", "read_file"], "order kept");
    assert_eq!(created.owner_id, Some(owner.id));
    assert_eq!(created.share_config.visibility, Visibility::Users);
    assert_eq!(created.share_config.user_ids, sorted(&[l1.id, l2.id]));
    assert_eq!(created.share_config.manager_ids, vec![owner.id]);
    assert_eq!(created.version, "sha256:0123abcd");
    assert_eq!(created.file_count, 5);
    assert_eq!(created.size_bytes, content.size_bytes());
    assert_eq!(created.created_at, created.updated_at);

    assert_eq!(
        store.skill(created.id).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(
        store.skill_by_name("pdf").await.unwrap(),
        Some(created.clone())
    );
    assert_files(store, created.id, &content).await;
    let paths: Vec<String> = store
        .skill_files(created.id)
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert_eq!(
        paths,
        [
            "SKILL.md",
            "assets/empty.txt",
            "assets/logo.bin",
            "references/说明.md",
            "scripts/fill.py"
        ],
        "byte order"
    );

    // What is not there reads as absent, not as an error.
    assert_eq!(store.skill_file(created.id, "nope.md").await.unwrap(), None);
    assert_eq!(
        store.skill_file(created.id, "skill.md").await.unwrap(),
        None
    );
    let ghost = SkillId::new();
    assert_eq!(store.skill(ghost).await.unwrap(), None);
    assert_eq!(store.skill_by_name("nope").await.unwrap(), None);
    assert_eq!(store.skill_files(ghost).await.unwrap(), []);
    assert_eq!(store.skill_contents(ghost).await.unwrap(), []);
    assert_eq!(store.skill_file(ghost, "SKILL.md").await.unwrap(), None);

    // A minimal, ownerless skill: no optional fields, private, no shares.
    let plain = store
        .create_skill(&new_skill("plain", None, ShareConfig::default()))
        .await
        .unwrap();
    assert_eq!((plain.license, plain.compatibility), (None, None));
    assert!(plain.metadata.is_empty() && plain.allowed_tools.is_empty());
    assert_eq!(plain.owner_id, None);
    assert_eq!(plain.share_config, ShareConfig::default());
    assert_eq!(plain.file_count, 1);
}

pub async fn check_taken_skill_name_conflicts_and_writes_nothing(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let first = store
        .create_skill(&new_skill("pdf", Some(owner.id), ShareConfig::default()))
        .await
        .unwrap();
    let mut second = new_skill("pdf", None, shares(Visibility::Public, &[], &[]));
    second.content = rich_content("pdf");
    let result = store.create_skill(&second).await;
    assert!(
        matches!(result, Err(StoreError::Conflict { field: "name" })),
        "{result:?}"
    );
    let all = store.list_skills(SkillFilter::default()).await.unwrap();
    assert_eq!(all, vec![first.clone()]);
    assert_files(store, first.id, &skill_content("pdf", "v1")).await;
}

pub async fn check_skill_names_are_one_to_64_characters(store: &dyn Store) {
    for name in [String::new(), "x".repeat(65), "说".repeat(65)] {
        let result = store
            .create_skill(&new_skill(&name, None, ShareConfig::default()))
            .await;
        assert!(
            matches!(result, Err(StoreError::Invalid(_))),
            "{name:?}: {result:?}"
        );
    }
    // Characters, not bytes: 64 three-byte characters fit.
    for name in ["x".repeat(64), "说".repeat(64)] {
        let skill = new_skill(&name, None, ShareConfig::default());
        assert_eq!(store.create_skill(&skill).await.unwrap().name, name);
    }
    assert_eq!(
        store
            .list_skills(SkillFilter::default())
            .await
            .unwrap()
            .len(),
        2
    );
}

pub async fn check_a_failed_skill_create_leaves_nothing(store: &dyn Store) {
    // A path given twice is refused up front; an empty path by the schema, after the row and
    // the first file are written: either way nothing stays.
    let mut twice = skill_content("twice", "v1");
    twice.files.push(file("SKILL.md", b"again"));
    let mut empty_path = skill_content("empty-path", "v1");
    empty_path.files.push(file("", b"nameless"));
    for content in [twice, empty_path] {
        let name = content.name.clone();
        let new = NewSkill {
            owner_id: None,
            share_config: ShareConfig::default(),
            content,
        };
        let result = store.create_skill(&new).await;
        assert!(
            matches!(result, Err(StoreError::Invalid(_))),
            "{name}: {result:?}"
        );
        assert_eq!(store.skill_by_name(&name).await.unwrap(), None);
    }
    assert_eq!(store.list_skills(SkillFilter::default()).await.unwrap(), []);
}

pub async fn check_unknown_skill_users_are_invalid(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let ghostly = new_skill(
        "ghostly",
        Some(owner.id),
        shares(Visibility::Users, &[owner.id, UserId::new()], &[]),
    );
    let result = store.create_skill(&ghostly).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.skill_by_name("ghostly").await.unwrap(), None);

    let unowned = new_skill("unowned", Some(UserId::new()), ShareConfig::default());
    let result = store.create_skill(&unowned).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");

    let kept = store
        .create_skill(&new_skill("kept", Some(owner.id), ShareConfig::default()))
        .await
        .unwrap();
    let managed_by_ghost = shares(Visibility::Public, &[], &[UserId::new()]);
    let result = store.update_skill_share(kept.id, &managed_by_ghost).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.skill(kept.id).await.unwrap(), Some(kept));
}

pub async fn check_replace_skill_content_swaps_every_file_at_once(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let share = shares(Visibility::Users, &[friend.id], &[]);
    let mut first = new_skill("pdf", Some(owner.id), share.clone());
    first.content = rich_content("pdf");
    let original = store.create_skill(&first).await.unwrap();

    let mut next = skill_content("pdf", "v2");
    next.description = "Fills and signs PDF forms.".into();
    next.metadata = BTreeMap::from([("author".to_string(), "someone else".to_string())]);
    next.allowed_tools = vec!["python".into()];
    next.files.push(file("scripts/sign.py", BINARY));
    let replaced = store
        .replace_skill_content(original.id, &next)
        .await
        .unwrap();

    assert_eq!(replaced.description, "Fills and signs PDF forms.");
    assert_eq!(
        (replaced.license.clone(), replaced.compatibility.clone()),
        (None, None)
    );
    assert_eq!(replaced.metadata, next.metadata);
    assert_eq!(replaced.allowed_tools, ["python"]);
    assert_eq!(replaced.version, "v2");
    assert_eq!(replaced.file_count, 2);
    assert_eq!(replaced.size_bytes, next.size_bytes());
    // What a new version never touches.
    assert_eq!(replaced.id, original.id);
    assert_eq!(replaced.name, "pdf");
    assert_eq!(replaced.owner_id, Some(owner.id));
    assert_eq!(replaced.share_config, share.normalized());
    assert_eq!(replaced.created_at, original.created_at);
    assert!(replaced.updated_at >= original.updated_at);
    assert_eq!(
        store.skill(original.id).await.unwrap(),
        Some(replaced.clone())
    );
    // The old files are gone, not merged with the new ones.
    assert_files(store, original.id, &next).await;
    let old = store
        .skill_file(original.id, "references/说明.md")
        .await
        .unwrap();
    assert_eq!(old, None);

    // A version that fails halfway (the schema refuses an empty path after the old files are
    // deleted and some new ones written) changes nothing.
    let mut broken = rich_content("pdf");
    broken.files.push(file("", b"nameless"));
    let result = store.replace_skill_content(original.id, &broken).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    let mut twice = rich_content("pdf");
    twice.files.push(file("SKILL.md", b"again"));
    let result = store.replace_skill_content(original.id, &twice).await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(
        store.skill(original.id).await.unwrap(),
        Some(replaced.clone())
    );
    assert_files(store, original.id, &next).await;
}

pub async fn check_replace_skill_content_keeps_the_name(store: &dyn Store) {
    let skill = store
        .create_skill(&new_skill("pdf", None, ShareConfig::default()))
        .await
        .unwrap();
    let result = store
        .replace_skill_content(skill.id, &skill_content("docx", "v2"))
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.skill(skill.id).await.unwrap(), Some(skill.clone()));
    assert_eq!(store.skill_by_name("docx").await.unwrap(), None);
    assert_files(store, skill.id, &skill_content("pdf", "v1")).await;

    let result = store
        .replace_skill_content(SkillId::new(), &skill_content("pdf", "v2"))
        .await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_update_skill_share_replaces_shares_only(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (m1, m2) = (user(store, "m1").await, user(store, "m2").await);
    let (l1, l2) = (user(store, "l1").await, user(store, "l2").await);
    let mut first = new_skill(
        "pdf",
        Some(owner.id),
        shares(Visibility::Users, &[l1.id], &[m1.id]),
    );
    first.content = rich_content("pdf");
    let original = store.create_skill(&first).await.unwrap();

    let next = shares(Visibility::Public, &[l2.id], &[m2.id, m1.id, m2.id]);
    let updated = store.update_skill_share(original.id, &next).await.unwrap();
    assert_eq!(updated.share_config.visibility, Visibility::Public);
    assert_eq!(updated.share_config.user_ids, vec![l2.id]);
    assert_eq!(updated.share_config.manager_ids, sorted(&[m1.id, m2.id]));
    assert!(updated.updated_at >= original.updated_at);
    let mut expected = original.clone();
    expected.share_config = next.normalized();
    expected.updated_at = updated.updated_at;
    assert_eq!(
        updated, expected,
        "nothing but the shares and updated_at changes"
    );
    assert_eq!(store.skill(original.id).await.unwrap(), Some(updated));
    assert_files(store, original.id, &rich_content("pdf")).await;

    // Emptied share lists stay empty.
    let cleared = store
        .update_skill_share(original.id, &ShareConfig::default())
        .await
        .unwrap();
    assert_eq!(cleared.share_config, ShareConfig::default());
    assert_eq!(store.skill(original.id).await.unwrap(), Some(cleared));

    let result = store
        .update_skill_share(SkillId::new(), &ShareConfig::default())
        .await;
    assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
}

pub async fn check_delete_skill_cascades_files_and_shares<S: Store + RawSql>(store: &S) {
    let friend = user(store, "friend").await;
    let mut doomed = new_skill(
        "doomed",
        None,
        shares(Visibility::Users, &[friend.id], &[friend.id]),
    );
    doomed.content = rich_content("doomed");
    let doomed = store.create_skill(&doomed).await.unwrap();
    let kept = store
        .create_skill(&new_skill("kept", None, ShareConfig::default()))
        .await
        .unwrap();
    let touch_files = format!(
        "UPDATE skill_files SET path = path WHERE skill_id = '{}'",
        doomed.id
    );
    let touch_shares = format!(
        "UPDATE skill_shares SET role = role WHERE skill_id = '{}'",
        doomed.id
    );
    assert_eq!(store.execute_raw(&touch_files).await.unwrap(), 5);
    assert_eq!(store.execute_raw(&touch_shares).await.unwrap(), 2);

    assert_eq!(
        store.delete_skill(doomed.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(store.skill(doomed.id).await.unwrap(), None);
    assert_eq!(
        store.execute_raw(&touch_files).await.unwrap(),
        0,
        "files cascade"
    );
    assert_eq!(
        store.execute_raw(&touch_shares).await.unwrap(),
        0,
        "shares cascade"
    );
    assert_eq!(store.skill_contents(doomed.id).await.unwrap(), []);
    assert_eq!(
        store.delete_skill(doomed.id).await.unwrap(),
        Deleted::NotFound
    );
    // Other skills keep their files, and the name is free again.
    assert_files(store, kept.id, &skill_content("kept", "v1")).await;
    store
        .create_skill(&new_skill("doomed", None, ShareConfig::default()))
        .await
        .unwrap();
}

pub async fn check_deleting_a_user_clears_skill_ownership_and_shares<S: Store + RawSql>(store: &S) {
    let owner = user(store, "owner").await;
    let friend = user(store, "friend").await;
    let share = shares(Visibility::Users, &[friend.id], &[friend.id]);
    let kept = store
        .create_skill(&new_skill("kept", Some(owner.id), share))
        .await
        .unwrap();
    for gone in [owner.id, friend.id] {
        let sql = format!("DELETE FROM users WHERE id = '{gone}'");
        assert_eq!(store.execute_raw(&sql).await.unwrap(), 1);
    }
    let after = store.skill(kept.id).await.unwrap().unwrap();
    assert_eq!(after.owner_id, None, "ON DELETE SET NULL");
    assert_eq!(after.share_config, shares(Visibility::Users, &[], &[]));
    assert_files(store, kept.id, &skill_content("kept", "v1")).await;
}
