//! Path resolution through the public API: every way out of a scope is refused, every way
//! within it works, and no error names a host path.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;

use ars_sandbox::{Sandbox, SandboxError, Scope};
use common::{Fixture, fixture};

/// Asserts `result` is the refusal `kind` and that its message names no host path.
#[track_caller]
fn assert_refused<T: std::fmt::Debug>(
    fx: &Fixture,
    result: Result<T, SandboxError>,
    kind: fn(&SandboxError) -> bool,
) {
    let err = result.expect_err("the sandbox must refuse this");
    assert!(kind(&err), "unexpected error: {err:?}");
    let message = err.to_string();
    let host = fx.dir.path().to_string_lossy().into_owned();
    assert!(
        !message.contains(&host),
        "error leaks the host path: {message}"
    );
}

fn outside(err: &SandboxError) -> bool {
    matches!(err, SandboxError::OutsideScope { .. })
}

fn invalid(err: &SandboxError) -> bool {
    matches!(err, SandboxError::InvalidPath { .. })
}

#[tokio::test]
async fn dot_dot_out_of_the_workdir_is_refused() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    assert_refused(&fx, sb.read(&fx.scope, "../t2/x", 1, None).await, outside);
    assert_refused(&fx, sb.write(&fx.scope, "../x.txt", "x").await, outside);
    assert_refused(
        &fx,
        sb.write(&fx.scope, "a/../../x.txt", "x").await,
        outside,
    );
    assert_refused(&fx, sb.list(&fx.scope, "..").await, outside);
    assert!(
        !fx.user_data(fx.scope.user_id)
            .join("conversations/x.txt")
            .exists()
    );
}

#[tokio::test]
async fn dot_dot_out_of_user_data_is_refused() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    let scope = &fx.scope;
    let up = "/home/gem/user-data/../../../etc/passwd";
    assert_refused(&fx, sb.read(scope, up, 1, None).await, outside);
    assert_refused(
        &fx,
        sb.write(scope, "/home/gem/user-data/../x", "x").await,
        outside,
    );
    assert_refused(&fx, sb.list(scope, "/home/gem/user-data/..").await, outside);
    assert_refused(
        &fx,
        sb.glob(scope, "*", Some("/home/gem/user-data/..")).await,
        outside,
    );
    assert_refused(
        &fx,
        sb.grep(scope, "x", Some("/home/gem/user-data/../.."), None)
            .await,
        outside,
    );
}

#[tokio::test]
async fn absolute_host_paths_are_refused() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    fx.write("a.txt", "hello\n").await;
    let host_file = fx.workdir().join("a.txt");
    assert!(host_file.exists());
    assert_refused(
        &fx,
        sb.read(&fx.scope, "/etc/passwd", 1, None).await,
        outside,
    );
    // The host path of a file the caller may read is still not a way in. (The message echoes
    // the caller's own input, so the leak check of `assert_refused` does not apply here.)
    let err = sb
        .read(&fx.scope, host_file.to_str().unwrap(), 1, None)
        .await;
    assert!(
        matches!(err, Err(SandboxError::OutsideScope { .. })),
        "{err:?}"
    );
    assert_refused(
        &fx,
        sb.write(&fx.scope, "/tmp/ars-escape.txt", "x").await,
        outside,
    );
    assert_refused(&fx, sb.list(&fx.scope, "/").await, outside);
    assert_refused(&fx, sb.list(&fx.scope, "/home/gem").await, outside);
}

#[tokio::test]
async fn symlink_in_workdir_pointing_outside_is_refused_for_read_and_write() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    let outside_dir = fx.outside();
    symlink(
        outside_dir.join("secret.txt"),
        fx.workdir().join("leak.txt"),
    )
    .unwrap();
    symlink(&outside_dir, fx.workdir().join("leakdir")).unwrap();

    assert_refused(&fx, sb.read(&fx.scope, "leak.txt", 1, None).await, outside);
    assert_refused(&fx, sb.write(&fx.scope, "leak.txt", "pwned").await, outside);
    assert_refused(
        &fx,
        sb.edit(&fx.scope, "leak.txt", "top", "pwned", false).await,
        outside,
    );
    assert_refused(
        &fx,
        sb.read(&fx.scope, "leakdir/secret.txt", 1, None).await,
        outside,
    );
    assert_refused(
        &fx,
        sb.write(&fx.scope, "leakdir/new.txt", "x").await,
        outside,
    );
    assert_refused(
        &fx,
        sb.write(&fx.scope, "leakdir/deep/new.txt", "x").await,
        outside,
    );
    assert_refused(&fx, sb.list(&fx.scope, "leakdir").await, outside);
    assert_eq!(
        fs::read_to_string(outside_dir.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert!(!outside_dir.join("new.txt").exists());
    assert!(!outside_dir.join("deep").exists());

    // Walks do not follow the links either.
    let grep = sb.grep(&fx.scope, "secret", None, None).await.unwrap();
    assert!(grep.matches.is_empty(), "{grep:?}");
    let glob = sb.glob(&fx.scope, "**/secret.txt", None).await.unwrap();
    assert!(glob.matches.is_empty(), "{glob:?}");
}

#[tokio::test]
async fn dangling_symlink_pointing_outside_is_refused_for_write() {
    let fx = fixture().await;
    let target = fx.outside().join("created-through-link.txt");
    symlink(&target, fx.workdir().join("dangling.txt")).unwrap();
    assert_refused(
        &fx,
        fx.sandbox.write(&fx.scope, "dangling.txt", "x").await,
        outside,
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn symlink_within_the_workspace_is_followed() {
    let fx = fixture().await;
    fx.write("/home/gem/user-data/shared/notes.txt", "shared notes\n")
        .await;
    // A relative link from the workdir up into the rest of the workspace, as `ln -s` in the
    // shell makes it.
    symlink("../../shared/notes.txt", fx.workdir().join("notes.txt")).unwrap();
    symlink("../../shared", fx.workdir().join("shared-dir")).unwrap();
    assert_eq!(
        fx.read_text(&fx.scope, "notes.txt").await.unwrap(),
        "shared notes\n"
    );
    let outcome = fx
        .sandbox
        .write(&fx.scope, "notes.txt", "rewritten\n")
        .await
        .unwrap();
    assert_eq!(
        outcome.path,
        "/home/gem/user-data/conversations/t1/notes.txt"
    );
    // The write went to the link's target and left the link in place.
    assert!(
        fs::symlink_metadata(fx.workdir().join("notes.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let shared = fx
        .read_text(&fx.scope, "/home/gem/user-data/shared/notes.txt")
        .await;
    assert_eq!(shared.unwrap(), "rewritten\n");

    // Directory links inside the scope work for every tool.
    let sb = &fx.sandbox;
    let listed = sb.list(&fx.scope, "shared-dir").await.unwrap();
    assert_eq!(listed.entries.len(), 1, "{listed:?}");
    assert_eq!(
        listed.path,
        "/home/gem/user-data/conversations/t1/shared-dir"
    );
    sb.write(&fx.scope, "shared-dir/new.txt", "through the link\n")
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(fx.user_data(fx.scope.user_id).join("shared/new.txt")).unwrap(),
        "through the link\n"
    );
    let grep = sb
        .grep(&fx.scope, "through", Some("shared-dir"), None)
        .await
        .unwrap();
    assert_eq!(grep.matches.len(), 1, "{grep:?}");
    sb.edit(&fx.scope, "notes.txt", "rewritten", "edited", false)
        .await
        .unwrap();
    assert_eq!(
        fx.read_text(&fx.scope, "/home/gem/user-data/shared/notes.txt")
            .await
            .unwrap(),
        "edited\n"
    );
}

#[tokio::test]
async fn every_link_out_is_refused_with_the_same_error() {
    let fx = fixture().await;
    let other = fx.other_user_with_a_diary().await;
    let outside_dir = fx.outside();
    let sb = &fx.sandbox;
    // From the workdir (users/<id>/user-data/conversations/t1) up to the temp dir is six
    // levels; to the users directory four.
    let targets = [
        ("etc", "/etc".to_owned()),
        ("passwd", "/etc/passwd".to_owned()),
        ("proc-root", "/proc/1/root".to_owned()),
        ("proc-self-root", "/proc/self/root/etc".to_owned()),
        ("nowhere", "/no/such/host/path".to_owned()),
        ("host-abs", outside_dir.to_string_lossy().into_owned()),
        (
            "virtual-abs",
            "/home/gem/user-data/conversations".to_owned(),
        ),
        ("rel-out", "../../../../../../outside".to_owned()),
        (
            "rel-nowhere",
            "../../../../../../../../no-such-dir".to_owned(),
        ),
        (
            "rel-other-user",
            format!("../../../../{}/user-data", other.user_id),
        ),
    ];
    let mut messages = Vec::new();
    for (name, target) in &targets {
        symlink(target, fx.workdir().join(name)).unwrap();
        let file = format!("{name}/secret.txt");
        let results = [
            sb.read(&fx.scope, &file, 1, None).await.map(|_| ()),
            sb.read(&fx.scope, name, 1, None).await.map(|_| ()),
            sb.list(&fx.scope, name).await.map(|_| ()),
            sb.write(&fx.scope, &file, "x").await.map(|_| ()),
            sb.write(&fx.scope, &format!("{name}/deep/x.txt"), "x")
                .await
                .map(|_| ()),
            sb.edit(&fx.scope, &file, "top", "pwned", false)
                .await
                .map(|_| ()),
            sb.grep(&fx.scope, "secret", Some(name), None)
                .await
                .map(|_| ()),
            sb.glob(&fx.scope, "*", Some(name)).await.map(|_| ()),
        ];
        for result in results {
            let err = result.expect_err(&format!("link to {target} must be refused"));
            assert!(outside(&err), "{name} -> {target}: {err:?}");
            // One message for every target, with only the caller's own path in it.
            let message = err.to_string();
            let host = fx.dir.path().to_string_lossy().into_owned();
            assert!(!message.contains(&host), "leaks the host path: {message}");
            let SandboxError::OutsideScope { reason, .. } = err else {
                unreachable!()
            };
            messages.push(reason);
        }
    }
    messages.dedup();
    assert_eq!(messages.len(), 1, "different answers: {messages:#?}");
    assert_eq!(
        fs::read_to_string(outside_dir.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    assert_eq!(fs::read_dir(&outside_dir).unwrap().count(), 1);
    assert_eq!(
        fs::read_dir(fx.user_data(other.user_id)).unwrap().count(),
        3
    );
}

#[tokio::test]
async fn nul_bytes_are_refused() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    assert_refused(&fx, sb.read(&fx.scope, "a\0.txt", 1, None).await, invalid);
    assert_refused(
        &fx,
        sb.write(&fx.scope, "a.txt\0/../../etc", "x").await,
        invalid,
    );
    assert_refused(&fx, sb.glob(&fx.scope, "*\0", None).await, |e| {
        matches!(e, SandboxError::InvalidPattern { .. })
    });
}

#[tokio::test]
async fn over_long_paths_are_refused() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    let long_name = "n".repeat(256);
    assert_refused(&fx, sb.write(&fx.scope, &long_name, "x").await, invalid);
    let long_path = "d/".repeat(2100) + "f.txt";
    assert_refused(&fx, sb.write(&fx.scope, &long_path, "x").await, invalid);
    let err = sb.read(&fx.scope, &long_path, 1, None).await.unwrap_err();
    assert!(
        err.to_string().len() < 500,
        "the error echoes the whole path: {err}"
    );
}

#[tokio::test]
async fn writes_under_skills_are_read_only() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    fs::create_dir_all(fx.skills().join("pdf")).unwrap();
    fs::write(fx.skills().join("pdf/SKILL.md"), "# PDF skill\n").unwrap();
    let read_only = |e: &SandboxError| matches!(e, SandboxError::ReadOnly { .. });

    assert_eq!(
        fx.read_text(&fx.scope, "/home/gem/skills/pdf/SKILL.md")
            .await
            .unwrap(),
        "# PDF skill\n"
    );
    assert_refused(
        &fx,
        sb.write(&fx.scope, "/home/gem/skills/pdf/SKILL.md", "x")
            .await,
        read_only,
    );
    assert_refused(
        &fx,
        sb.write(&fx.scope, "/home/gem/skills/new.md", "x").await,
        read_only,
    );
    let edit = sb
        .edit(
            &fx.scope,
            "/home/gem/skills/pdf/SKILL.md",
            "PDF",
            "X",
            false,
        )
        .await;
    assert_refused(&fx, edit, read_only);
    assert_eq!(
        fs::read_to_string(fx.skills().join("pdf/SKILL.md")).unwrap(),
        "# PDF skill\n"
    );
    assert!(!fx.skills().join("new.md").exists());
}

#[tokio::test]
async fn relative_paths_resolve_from_the_workdir() {
    let fx = fixture().await;
    let outcome = fx
        .sandbox
        .write(&fx.scope, "src/main.rs", "fn main() {}\n")
        .await
        .unwrap();
    assert_eq!(
        outcome.path,
        "/home/gem/user-data/conversations/t1/src/main.rs"
    );
    assert!(outcome.created);
    assert_eq!(
        fs::read_to_string(fx.workdir().join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    let absolute = "/home/gem/user-data/conversations/t1/src/main.rs";
    assert_eq!(
        fx.read_text(&fx.scope, absolute).await.unwrap(),
        "fn main() {}\n"
    );
}

#[tokio::test]
async fn absolute_user_data_path_reaches_the_user_workspace() {
    let fx = fixture().await;
    fx.write("/home/gem/user-data/x.txt", "workspace file\n")
        .await;
    let host = fx.user_data(fx.scope.user_id).join("x.txt");
    assert_eq!(fs::read_to_string(host).unwrap(), "workspace file\n");
    // Personal Skills live inside the workspace and are writable.
    let listing = fx
        .sandbox
        .list(&fx.scope, "/home/gem/user-data/agents")
        .await
        .unwrap();
    assert_eq!(listing.entries[0].path, "/home/gem/user-data/agents/skills");
    fx.write(
        "/home/gem/user-data/agents/skills/mine/SKILL.md",
        "# mine\n",
    )
    .await;
}

#[tokio::test]
async fn scopes_sharing_a_workdir_see_the_same_bytes() {
    let fx = fixture().await;
    // A subagent runs in the same runtime and workdir as its parent (SPEC §6).
    let child = Scope::new(
        fx.scope.user_id,
        "root-thread",
        fx.scope.workdir_path.clone(),
    )
    .unwrap();
    fx.sandbox.prepare(&child).await.unwrap();
    fx.write("plan.md", "step 1\n").await;
    assert_eq!(fx.read_text(&child, "plan.md").await.unwrap(), "step 1\n");
    fx.sandbox
        .edit(&child, "plan.md", "step 1", "step 1 done", false)
        .await
        .unwrap();
    assert_eq!(
        fx.read_text(&fx.scope, "plan.md").await.unwrap(),
        "step 1 done\n"
    );
}

#[tokio::test]
async fn another_users_workspace_is_unreachable() {
    let fx = fixture().await;
    let other = fx.other_user_with_a_diary().await;
    let sb = &fx.sandbox;

    // The same virtual path is the caller's own workspace.
    let own = sb
        .read(&fx.scope, "/home/gem/user-data/diary.txt", 1, None)
        .await;
    assert!(matches!(own, Err(SandboxError::NotFound { .. })), "{own:?}");
    // Climbing to the users directory is refused.
    let climb = format!(
        "/home/gem/user-data/../../../users/{}/user-data/diary.txt",
        other.user_id
    );
    assert_refused(&fx, sb.read(&fx.scope, &climb, 1, None).await, outside);
    // So is a symlink to it, for reading and writing.
    let theirs = fx.user_data(other.user_id).join("diary.txt");
    symlink(&theirs, fx.workdir().join("theirs.txt")).unwrap();
    assert_refused(
        &fx,
        sb.read(&fx.scope, "theirs.txt", 1, None).await,
        outside,
    );
    assert_refused(&fx, sb.write(&fx.scope, "theirs.txt", "x").await, outside);
    assert_eq!(fs::read_to_string(theirs).unwrap(), "private\n");
}

#[tokio::test]
async fn unprepared_scopes_and_malformed_scopes_are_reported() {
    let fx = fixture().await;
    let fresh = Scope::new(ars_domain::UserId::new(), "r", "w").unwrap();
    // A read there finds nothing (below); a write is refused until the scope is prepared.
    let err = fx.sandbox.write(&fresh, "a.txt", "x").await.unwrap_err();
    assert!(err.to_string().contains("not been prepared"), "{err}");
    let bad = Scope {
        workdir_path: "../../etc".into(),
        ..fx.scope.clone()
    };
    let err = fx.sandbox.read(&bad, "a.txt", 1, None).await.unwrap_err();
    assert!(matches!(err, SandboxError::InvalidScope(_)), "{err:?}");
    assert!(matches!(
        fx.sandbox.prepare(&bad).await,
        Err(SandboxError::InvalidScope(_))
    ));
}

#[tokio::test]
async fn a_read_in_a_workspace_not_prepared_yet_is_not_found_and_makes_nothing() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    let fresh = Scope::new(ars_domain::UserId::new(), "fresh-root", "conversations/t2").unwrap();
    let home = fx.data().join("users").join(fresh.user_id.to_string());
    for path in [
        ".",
        "notes.md",
        "/home/gem/user-data",
        "/home/gem/user-data/skills",
        "/home/gem/skills",
        "/home/gem/skills/pdf/SKILL.md",
    ] {
        let listed = sb.list(&fresh, path).await;
        assert!(
            matches!(&listed, Err(SandboxError::NotFound { path: shown }) if !shown.contains("data/users")),
            "{path}: {listed:?}"
        );
        let read = sb.read_bytes(&fresh, path, 1024).await;
        assert!(
            matches!(read, Err(SandboxError::NotFound { .. })),
            "{path}: {read:?}"
        );
    }
    assert!(!home.exists(), "a read made {}", home.display());
    // A prepared scope of the same user reads as an empty workdir.
    sb.prepare(&fresh).await.unwrap();
    assert!(sb.list(&fresh, ".").await.unwrap().entries.is_empty());
}
