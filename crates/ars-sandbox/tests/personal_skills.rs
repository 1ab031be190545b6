//! Personal skill folders in the workspace (`install_personal_skill`, `remove_personal_skill`)
//! and the raw reads the server downloads them with (`read_bytes`, `read_tree`): atomic,
//! charged to the quota, and never written, deleted or read through a symlink planted by an
//! agent.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::time::Duration;

use ars_sandbox::{ExecRequest, Sandbox, SandboxError};
use common::{Fixture, fixture, fixture_with};
use tokio_util::sync::CancellationToken;

const SKILLS: &str = "/home/gem/user-data/agents/skills";

fn files(pairs: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    pairs
        .iter()
        .map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec()))
        .collect()
}

/// Host path of the fixture user's `agents/skills`.
fn personal(fx: &Fixture) -> PathBuf {
    fx.user_data(fx.scope.user_id).join("agents/skills")
}

/// What `agents/skills` holds on the host, temp folders included.
fn entries(fx: &Fixture) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(personal(fx))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

async fn install(
    fx: &Fixture,
    name: &str,
    content: &str,
    replace: bool,
) -> Result<(), SandboxError> {
    let files = files(&[("SKILL.md", content.as_bytes())]);
    fx.sandbox
        .install_personal_skill(fx.scope.user_id, name, files, replace)
        .await
}

#[tokio::test]
async fn an_installed_personal_skill_is_visible_to_file_tools_and_shell() {
    let fx = fixture().await;
    let bundle = files(&[("SKILL.md", b"# Mine\n"), ("scripts/run.sh", b"echo run\n")]);
    fx.sandbox
        .install_personal_skill(fx.scope.user_id, "mine", bundle, false)
        .await
        .unwrap();
    let text = fx
        .read_text(&fx.scope, &format!("{SKILLS}/mine/SKILL.md"))
        .await
        .unwrap();
    assert_eq!(text, "# Mine\n");
    let request = ExecRequest {
        command: format!("cat {SKILLS}/mine/SKILL.md; bash {SKILLS}/mine/scripts/run.sh"),
        timeout: Duration::from_secs(10),
        allow_network: false,
    };
    let out = fx
        .sandbox
        .execute(&fx.scope, request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(out.stdout, "# Mine\nrun\n", "{out:?}");
    assert_eq!(entries(&fx), ["mine"]);
}

#[tokio::test]
async fn installing_over_an_existing_skill_needs_replace() {
    let fx = fixture().await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    let old = files(&[("SKILL.md", b"v1"), ("old.txt", b"old")]);
    sb.install_personal_skill(user, "mine", old, false)
        .await
        .unwrap();
    let err = install(&fx, "mine", "v2", false).await.unwrap_err();
    assert!(
        matches!(&err, SandboxError::SkillExists { name, path }
            if name == "mine" && path == &format!("{SKILLS}/mine")),
        "{err:?}"
    );
    assert_eq!(
        fs::read_to_string(personal(&fx).join("mine/SKILL.md")).unwrap(),
        "v1"
    );

    install(&fx, "mine", "v2", true).await.unwrap();
    assert_eq!(
        fs::read_to_string(personal(&fx).join("mine/SKILL.md")).unwrap(),
        "v2"
    );
    assert!(!personal(&fx).join("mine/old.txt").exists());
    assert_eq!(entries(&fx), ["mine"], "no temp folder is left behind");

    assert!(sb.remove_personal_skill(user, "mine").await.unwrap());
    assert!(!sb.remove_personal_skill(user, "mine").await.unwrap());
    assert!(entries(&fx).is_empty());
    let err = sb.remove_personal_skill(user, "../x").await.unwrap_err();
    assert!(matches!(err, SandboxError::InvalidSkill { .. }), "{err:?}");
}

#[tokio::test]
async fn a_skill_can_be_installed_before_the_users_first_run() {
    let fx = fixture().await;
    let user = ars_domain::UserId::new();
    let bundle = files(&[("SKILL.md", b"# Early\n")]);
    fx.sandbox
        .install_personal_skill(user, "early", bundle, false)
        .await
        .unwrap();
    let path = fx.user_data(user).join("agents/skills/early/SKILL.md");
    assert_eq!(fs::read_to_string(path).unwrap(), "# Early\n");
}

#[tokio::test]
async fn a_symlink_planted_at_the_skill_is_replaced_not_written_through() {
    let fx = fixture().await;
    let outside = fx.outside();
    let link = personal(&fx).join("evil");
    symlink(&outside, &link).unwrap();

    // It counts as an existing skill.
    let err = install(&fx, "evil", "pwned", false).await.unwrap_err();
    assert!(matches!(err, SandboxError::SkillExists { .. }), "{err:?}");
    install(&fx, "evil", "mine now", true).await.unwrap();
    assert!(!link.is_symlink() && link.is_dir());
    assert_eq!(
        fs::read_to_string(link.join("SKILL.md")).unwrap(),
        "mine now"
    );
    assert!(!outside.join("SKILL.md").exists());
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );

    // Removing a link named like a skill removes the link, never its target.
    fs::remove_dir_all(&link).unwrap();
    symlink(&outside, &link).unwrap();
    assert!(
        fx.sandbox
            .remove_personal_skill(fx.scope.user_id, "evil")
            .await
            .unwrap()
    );
    assert!(!link.is_symlink());
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn a_symlink_planted_at_agents_skills_refuses_the_install() {
    let fx = fixture().await;
    let outside = fx.outside();
    fs::remove_dir(personal(&fx)).unwrap();
    symlink(&outside, personal(&fx)).unwrap();
    let err = install(&fx, "mine", "x", false).await.unwrap_err();
    assert!(matches!(err, SandboxError::NotDirectory { .. }), "{err:?}");
    let err = fx
        .sandbox
        .remove_personal_skill(fx.scope.user_id, "secret")
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::NotDirectory { .. }), "{err:?}");
    let names: Vec<_> = fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["secret.txt"]);
}

#[tokio::test]
async fn an_install_is_charged_to_the_workspace_quota() {
    let fx = fixture_with(|config| config.limits.workspace_quota_bytes = 256 * 1024).await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    let big = vec![b'x'; 300 * 1024];
    let err = sb
        .install_personal_skill(
            user,
            "big",
            files(&[("SKILL.md", b"#"), ("blob", &big)]),
            false,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::QuotaExceeded { .. }), "{err:?}");
    assert!(
        entries(&fx).is_empty(),
        "nothing half-written: {:?}",
        entries(&fx)
    );

    let before = sb.workspace_usage(user).await.unwrap().used_bytes;
    let medium = vec![b'x'; 100 * 1024];
    sb.install_personal_skill(user, "medium", files(&[("blob", &medium)]), false)
        .await
        .unwrap();
    let after = sb.workspace_usage(user).await.unwrap().used_bytes;
    assert!(after >= before + 100 * 1024, "{before} -> {after}");
    // A second one no longer fits beside the first.
    let err = sb
        .install_personal_skill(
            user,
            "again",
            files(&[("blob", &vec![b'y'; 200 * 1024])]),
            false,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::QuotaExceeded { .. }), "{err:?}");
    assert_eq!(entries(&fx), ["medium"]);
}

#[tokio::test]
async fn read_bytes_round_trips_binary_and_refuses_over_the_limit() {
    let fx = fixture().await;
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    fx.sandbox
        .install_personal_skill(
            fx.scope.user_id,
            "bin",
            files(&[("data.bin", &bytes)]),
            false,
        )
        .await
        .unwrap();
    let path = format!("{SKILLS}/bin/data.bin");
    let read = fx.sandbox.read_bytes(&fx.scope, &path, 4096).await.unwrap();
    assert_eq!(read, bytes);
    let err = fx
        .sandbox
        .read_bytes(&fx.scope, &path, 4095)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::TooLarge { .. }), "{err:?}");
    let err = fx
        .sandbox
        .read_bytes(&fx.scope, &format!("{SKILLS}/bin"), 10)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::IsDirectory { .. }), "{err:?}");

    // Projected skills are readable too.
    fx.sandbox
        .project_skills(
            fx.scope.user_id,
            vec![ars_sandbox::ProjectedSkill {
                name: "pdf".into(),
                version: "1".into(),
                files: Some(files(&[("SKILL.md", b"\0pdf")])),
            }],
        )
        .await
        .unwrap();
    let read = fx
        .sandbox
        .read_bytes(&fx.scope, "/home/gem/skills/pdf/SKILL.md", 100)
        .await;
    assert_eq!(read.unwrap(), b"\0pdf");
}

#[tokio::test]
async fn read_bytes_does_not_follow_a_symlink_out() {
    let fx = fixture().await;
    let outside = fx.outside();
    symlink(outside.join("secret.txt"), fx.workdir().join("link")).unwrap();
    let err = fx
        .sandbox
        .read_bytes(&fx.scope, "link", 1000)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::OutsideScope { .. }), "{err:?}");
    assert!(
        !err.to_string().contains(&*outside.to_string_lossy()),
        "{err}"
    );
}

#[tokio::test]
async fn read_tree_returns_every_file_sorted_and_skips_symlinks() {
    let fx = fixture().await;
    let bundle = files(&[
        ("SKILL.md", b"# S\n"),
        ("b/z.bin", b"\0\x01\xff"),
        ("a.txt", b"a"),
        ("b/c/d.txt", b"d"),
    ]);
    fx.sandbox
        .install_personal_skill(fx.scope.user_id, "tree", bundle.clone(), false)
        .await
        .unwrap();
    // Planted links, out and in: neither is followed.
    let dir = personal(&fx).join("tree");
    let outside = fx.outside();
    symlink(&outside, dir.join("out-dir")).unwrap();
    symlink(outside.join("secret.txt"), dir.join("out-file")).unwrap();
    symlink("a.txt", dir.join("in-file")).unwrap();

    let tree = fx
        .sandbox
        .read_tree(&fx.scope, &format!("{SKILLS}/tree"), 10, 1000)
        .await
        .unwrap();
    let mut want = bundle;
    want.sort();
    assert_eq!(tree, want);

    let err = fx
        .sandbox
        .read_tree(&fx.scope, &format!("{SKILLS}/tree"), 3, 1000)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::TooLarge { .. }), "{err:?}");
    let err = fx
        .sandbox
        .read_tree(&fx.scope, &format!("{SKILLS}/tree"), 10, 8)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::TooLarge { .. }), "{err:?}");
    let err = fx
        .sandbox
        .read_tree(&fx.scope, &format!("{SKILLS}/tree/out-dir"), 10, 1000)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::OutsideScope { .. }), "{err:?}");
}
