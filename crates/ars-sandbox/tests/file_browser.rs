//! The server's file browser over a workdir: `tree`, `open_file`, `write_bytes` and `remove`
//! act by handle like the tools, refuse every way out the tools refuse, and never follow a
//! symlink they are not meant to.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;

use ars_sandbox::{EntryKind, Sandbox, SandboxError, TreeLimits, WriteMode};
use common::{fixture, fixture_with};
use tokio::io::AsyncReadExt;

const WIDE: TreeLimits = TreeLimits {
    max_depth: 16,
    max_entries: 1000,
};

/// The tree below `path` as (path relative to the workdir, kind) pairs.
async fn tree_of(fx: &common::Fixture, path: &str, limits: TreeLimits) -> (Vec<String>, bool) {
    let outcome = fx.sandbox.tree(&fx.scope, path, limits).await.unwrap();
    let prefix = format!("{}/", fx.scope.virtual_workdir());
    let paths = outcome
        .entries
        .iter()
        .map(|e| {
            let rel = e.path.strip_prefix(&prefix).unwrap().to_owned();
            match e.kind {
                EntryKind::Directory => format!("{rel}/"),
                EntryKind::Symlink => format!("{rel}@"),
                _ => rel,
            }
        })
        .collect();
    (paths, outcome.truncated)
}

#[tokio::test]
async fn tree_lists_depth_first_with_directories_before_files() {
    let fx = fixture().await;
    for path in ["b.txt", "a/z.txt", "a/b/c.txt", "A.txt", "c/x.txt"] {
        fx.write(path, "x").await;
    }
    let (paths, truncated) = tree_of(&fx, "", WIDE).await;
    assert_eq!(
        paths,
        [
            "a/",
            "a/b/",
            "a/b/c.txt",
            "a/z.txt",
            "c/",
            "c/x.txt",
            "A.txt",
            "b.txt"
        ]
    );
    assert!(!truncated);
    // A subdirectory lists below itself.
    let (paths, _) = tree_of(&fx, "a", WIDE).await;
    assert_eq!(paths, ["a/b/", "a/b/c.txt", "a/z.txt"]);
}

#[tokio::test]
async fn tree_stops_at_the_depth_and_the_count_and_says_so() {
    let fx = fixture().await;
    fx.write("a/b/c.txt", "x").await;
    fx.write("d.txt", "x").await;
    fs::create_dir(fx.workdir().join("empty")).unwrap();
    let one = TreeLimits {
        max_depth: 1,
        max_entries: 100,
    };
    let (paths, truncated) = tree_of(&fx, "", one).await;
    assert_eq!(paths, ["a/", "empty/", "d.txt"]);
    assert!(truncated, "a/ holds more than was listed");

    let (paths, truncated) = tree_of(&fx, "empty", one).await;
    assert!(paths.is_empty());
    assert!(!truncated);

    let two = TreeLimits {
        max_depth: 16,
        max_entries: 2,
    };
    let (paths, truncated) = tree_of(&fx, "", two).await;
    assert_eq!(paths, ["a/", "a/b/"]);
    assert!(truncated);
}

#[tokio::test]
async fn tree_reports_symlinks_and_never_descends_into_them() {
    let fx = fixture().await;
    let outside = fx.outside();
    symlink(&outside, fx.workdir().join("out")).unwrap();
    fx.write("in/a.txt", "x").await;
    symlink("in", fx.workdir().join("alias")).unwrap();
    let (paths, _) = tree_of(&fx, "", WIDE).await;
    assert_eq!(paths, ["in/", "in/a.txt", "alias@", "out@"]);
    // Listing through the link out is refused like every other way out.
    let err = fx.sandbox.tree(&fx.scope, "out", WIDE).await.unwrap_err();
    assert!(matches!(err, SandboxError::OutsideScope { .. }), "{err:?}");
}

#[tokio::test]
async fn tree_and_list_entries_carry_the_modification_time() {
    let fx = fixture().await;
    fx.write("a.txt", "hello").await;
    let listed = fx.sandbox.list(&fx.scope, "").await.unwrap();
    let entry = &listed.entries[0];
    assert_eq!(entry.size, 5);
    let age = entry.modified.unwrap().elapsed().unwrap_or_default();
    assert!(age.as_secs() < 60, "{age:?}");
}

#[tokio::test]
async fn write_bytes_creates_parents_and_answers_the_entry() {
    let fx = fixture().await;
    let bytes = vec![0u8, 159, 146, 150, 1];
    let written = fx
        .sandbox
        .write_bytes(&fx.scope, "up/数据.bin", bytes.clone(), WriteMode::Replace)
        .await
        .unwrap();
    assert!(written.created);
    assert_eq!(written.entry.name, "数据.bin");
    assert_eq!(
        written.entry.path,
        format!("{}/up/数据.bin", fx.scope.virtual_workdir())
    );
    assert_eq!(written.entry.kind, EntryKind::File);
    assert_eq!(written.entry.size, 5);
    assert!(written.entry.modified.is_some());
    assert_eq!(fs::read(fx.workdir().join("up/数据.bin")).unwrap(), bytes);

    let again = fx
        .sandbox
        .write_bytes(
            &fx.scope,
            "up/数据.bin",
            b"new".to_vec(),
            WriteMode::Replace,
        )
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(fs::read(fx.workdir().join("up/数据.bin")).unwrap(), b"new");
    let leftovers: Vec<_> = fs::read_dir(fx.workdir().join("up"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

#[tokio::test]
async fn write_bytes_create_new_never_clobbers() {
    let fx = fixture().await;
    fx.write("keep.txt", "mine").await;
    let err = fx
        .sandbox
        .write_bytes(
            &fx.scope,
            "keep.txt",
            b"theirs".to_vec(),
            WriteMode::CreateNew,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::Exists { .. }), "{err:?}");
    assert_eq!(fs::read(fx.workdir().join("keep.txt")).unwrap(), b"mine");
    let made = fx
        .sandbox
        .write_bytes(&fx.scope, "fresh.txt", b"x".to_vec(), WriteMode::CreateNew)
        .await
        .unwrap();
    assert!(made.created);
}

#[tokio::test]
async fn write_bytes_is_charged_to_the_workspace_quota() {
    let fx = fixture_with(|config| config.limits.workspace_quota_bytes = 64 * 1024).await;
    let err = fx
        .sandbox
        .write_bytes(
            &fx.scope,
            "big.bin",
            vec![7; 128 * 1024],
            WriteMode::Replace,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::QuotaExceeded { .. }), "{err:?}");
    assert!(!fx.workdir().join("big.bin").exists());
}

#[tokio::test]
async fn write_bytes_into_a_directory_or_below_a_file_is_refused() {
    let fx = fixture().await;
    fx.write("dir/a.txt", "x").await;
    let err = fx
        .sandbox
        .write_bytes(&fx.scope, "dir", b"x".to_vec(), WriteMode::Replace)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::IsDirectory { .. }), "{err:?}");
    let err = fx
        .sandbox
        .write_bytes(
            &fx.scope,
            "dir/a.txt/b.txt",
            b"x".to_vec(),
            WriteMode::Replace,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::NotDirectory { .. }), "{err:?}");
}

#[tokio::test]
async fn file_ops_through_a_symlink_out_are_refused_and_touch_nothing_outside() {
    let fx = fixture().await;
    let outside = fx.outside();
    symlink(&outside, fx.workdir().join("out")).unwrap();
    symlink(outside.join("secret.txt"), fx.workdir().join("secret.txt")).unwrap();
    let sb = &fx.sandbox;
    let refused = |err: SandboxError| matches!(err, SandboxError::OutsideScope { .. });

    assert!(refused(
        sb.open_file(&fx.scope, "secret.txt").await.unwrap_err()
    ));
    assert!(refused(
        sb.open_file(&fx.scope, "out/secret.txt").await.unwrap_err()
    ));
    for path in ["secret.txt", "out/secret.txt", "out/new.txt"] {
        let err = sb
            .write_bytes(&fx.scope, path, b"pwned".to_vec(), WriteMode::Replace)
            .await
            .unwrap_err();
        assert!(refused(err.clone()), "{path}: {err:?}");
    }
    for recursive in [false, true] {
        let err = sb
            .remove(&fx.scope, "out/secret.txt", recursive)
            .await
            .unwrap_err();
        assert!(refused(err.clone()), "{err:?}");
    }
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!outside.join("new.txt").exists());

    // The links themselves are the user's entries: removing one removes the link only.
    let removed = sb.remove(&fx.scope, "out", true).await.unwrap();
    assert_eq!(removed.kind, EntryKind::Symlink);
    sb.remove(&fx.scope, "secret.txt", false).await.unwrap();
    assert!(fs::symlink_metadata(fx.workdir().join("out")).is_err());
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn open_file_reads_the_bytes_and_refuses_directories() {
    let fx = fixture().await;
    fx.write("notes/a.md", "# Title\n").await;
    let mut file = fx.sandbox.open_file(&fx.scope, "notes/a.md").await.unwrap();
    assert_eq!(file.entry.name, "a.md");
    assert_eq!(file.entry.size, 8);
    let mut text = String::new();
    file.reader.read_to_string(&mut text).await.unwrap();
    assert_eq!(text, "# Title\n");
    let err = fx.sandbox.open_file(&fx.scope, "notes").await.unwrap_err();
    assert!(matches!(err, SandboxError::IsDirectory { .. }), "{err:?}");
    let err = fx
        .sandbox
        .open_file(&fx.scope, "missing")
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn remove_deletes_files_and_directories_recursive_only_when_asked() {
    let fx = fixture().await;
    fx.write("a.txt", "x").await;
    fx.write("full/deep/b.txt", "x").await;
    fs::create_dir(fx.workdir().join("empty")).unwrap();
    let sb = &fx.sandbox;

    assert_eq!(
        sb.remove(&fx.scope, "a.txt", false).await.unwrap().kind,
        EntryKind::File
    );
    assert!(!fx.workdir().join("a.txt").exists());
    assert_eq!(
        sb.remove(&fx.scope, "empty", false).await.unwrap().kind,
        EntryKind::Directory
    );
    let err = sb.remove(&fx.scope, "full", false).await.unwrap_err();
    assert!(
        matches!(err, SandboxError::DirectoryNotEmpty { .. }),
        "{err:?}"
    );
    assert!(fx.workdir().join("full/deep/b.txt").exists());
    sb.remove(&fx.scope, "full", true).await.unwrap();
    assert!(!fx.workdir().join("full").exists());
    let err = sb.remove(&fx.scope, "full", true).await.unwrap_err();
    assert!(matches!(err, SandboxError::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn remove_recursive_empties_a_folder_of_thousands_of_files_as_it_reads_it() {
    // Files are unlinked while their folder is being read; none may be skipped.
    let fx = fixture().await;
    let many = fx.workdir().join("many");
    fs::create_dir_all(many.join("sub")).unwrap();
    for i in 0..5000 {
        fs::write(many.join(format!("file-{i:05}")), "x").unwrap();
        fs::write(many.join("sub").join(i.to_string()), "").unwrap();
    }
    fx.sandbox.remove(&fx.scope, "many", true).await.unwrap();
    assert!(!many.exists());
}

#[tokio::test]
async fn remove_recursive_never_follows_a_symlink_below() {
    let fx = fixture().await;
    let outside = fx.outside();
    fx.write("tree/a.txt", "x").await;
    symlink(&outside, fx.workdir().join("tree/out")).unwrap();
    fx.sandbox.remove(&fx.scope, "tree", true).await.unwrap();
    assert!(!fx.workdir().join("tree").exists());
    assert!(outside.join("secret.txt").exists());
}

#[tokio::test]
async fn remove_refuses_the_workdir_its_ancestors_and_the_roots() {
    let fx = fixture().await;
    fx.write("keep.txt", "x").await;
    // A link to the workdir's parent would name the workdir as `up/t1`.
    symlink("..", fx.workdir().join("up")).unwrap();
    let sb = &fx.sandbox;
    for path in [
        "",
        ".",
        "sub/..",
        "up/t1",
        "/home/gem/user-data",
        "/home/gem/user-data/conversations",
        "/home/gem/user-data/conversations/t1",
    ] {
        let err = sb.remove(&fx.scope, path, true).await.unwrap_err();
        assert!(
            matches!(err, SandboxError::InvalidPath { .. }),
            "{path:?}: {err:?}"
        );
    }
    let err = sb
        .remove(&fx.scope, "/home/gem/skills/x", true)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::ReadOnly { .. }), "{err:?}");
    let err = sb.remove(&fx.scope, "..", true).await.unwrap_err();
    assert!(matches!(err, SandboxError::OutsideScope { .. }), "{err:?}");
    assert!(fx.workdir().join("keep.txt").exists());
}

#[tokio::test]
async fn remove_workdir_removes_the_workdir_whole_and_nothing_outside() {
    let fx = fixture().await;
    let outside = fx.outside();
    fx.write("deep/er/a.txt", "x").await;
    fx.write("/home/gem/user-data/kept.txt", "kept").await;
    symlink(&outside, fx.workdir().join("out")).unwrap();
    let before = fx
        .sandbox
        .workspace_usage(fx.scope.user_id)
        .await
        .unwrap()
        .used_bytes;
    assert!(fx.sandbox.remove_workdir(&fx.scope).await.unwrap());
    assert!(!fx.workdir().exists());
    assert!(outside.join("secret.txt").exists());
    let workspace = fx.user_data(fx.scope.user_id);
    assert_eq!(
        fs::read_to_string(workspace.join("kept.txt")).unwrap(),
        "kept"
    );
    let after = fx.sandbox.workspace_usage(fx.scope.user_id).await.unwrap();
    assert!(after.used_bytes < before, "{after:?} after {before}");
    // Gone already, or never there (another user's, never prepared): nothing to remove.
    assert!(!fx.sandbox.remove_workdir(&fx.scope).await.unwrap());
    let stranger = ars_sandbox::Scope::new(ars_domain::UserId::new(), "r", "threads/t").unwrap();
    assert!(!fx.sandbox.remove_workdir(&stranger).await.unwrap());
}

#[tokio::test]
async fn remove_workdir_never_follows_a_symlink_on_the_way() {
    let fx = fixture().await;
    let workspace = fx.user_data(fx.scope.user_id);
    // The workdir's parent swapped for a link to a folder holding a same-named folder.
    fx.write("/home/gem/user-data/decoy/t1/precious.txt", "x")
        .await;
    let parent = fx.workdir().parent().unwrap().to_owned();
    fs::remove_dir_all(&parent).unwrap();
    symlink(workspace.join("decoy"), &parent).unwrap();
    let err = fx.sandbox.remove_workdir(&fx.scope).await;
    assert!(err.is_err(), "{err:?}");
    assert!(workspace.join("decoy/t1/precious.txt").exists());
}
