//! The Skills projection at `/home/gem/skills`: each user sees exactly the skills projected
//! for them — through every file tool and the shell — read-only, and a projection replaces
//! the previous one exactly and atomically.
//!
//! The shell tests need bubblewrap and fail (never skip) without it.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::time::Duration;

use ars_domain::UserId;
use ars_sandbox::{ExecOutcome, ExecRequest, ProjectedSkill, Sandbox, SandboxError, Scope};
use common::{Fixture, fixture};
use tokio_util::sync::CancellationToken;

/// In the private skill's files; grepped for with `[c]` so the pattern never matches itself.
const MARKER: &str = "MARKER-7f3a9c";
const MARKER_REGEX: &str = "MARKER-7f3a9[c]";

fn skill(name: &str, version: &str, files: &[(&str, &str)]) -> ProjectedSkill {
    ProjectedSkill {
        name: name.to_owned(),
        version: version.to_owned(),
        files: Some(
            files
                .iter()
                .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec()))
                .collect(),
        ),
    }
}

fn keep(name: &str, version: &str) -> ProjectedSkill {
    ProjectedSkill {
        name: name.to_owned(),
        version: version.to_owned(),
        files: None,
    }
}

async fn run(fx: &Fixture, scope: &Scope, command: &str) -> ExecOutcome {
    let request = ExecRequest {
        command: command.to_owned(),
        timeout: Duration::from_secs(60),
        allow_network: false,
    };
    fx.sandbox
        .execute(scope, request, CancellationToken::new())
        .await
        .expect("execute could not start the shell (is bubblewrap installed?)")
}

async fn listed(fx: &Fixture, scope: &Scope, path: &str) -> Vec<String> {
    let listing = fx.sandbox.list(scope, path).await.unwrap();
    listing.entries.into_iter().map(|e| e.name).collect()
}

fn versions(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn another_users_private_skill_is_invisible_to_file_tools_and_shell() {
    let fx = fixture().await;
    let (a, b) = (fx.scope.clone(), fx.other_user().await);
    let secret = format!("---\nname: secret-a\n---\n{MARKER}\n");
    let sb = &fx.sandbox;
    sb.project_skills(
        a.user_id,
        vec![skill(
            "secret-a",
            "1",
            &[("SKILL.md", &secret), ("notes/more.txt", MARKER)],
        )],
    )
    .await
    .unwrap();
    sb.project_skills(
        b.user_id,
        vec![skill("public-one", "1", &[("SKILL.md", "# Public\n")])],
    )
    .await
    .unwrap();

    // File tools, as B.
    assert_eq!(listed(&fx, &b, "/home/gem/skills").await, ["public-one"]);
    let read = fx.read_text(&b, "/home/gem/skills/secret-a/SKILL.md").await;
    assert!(
        matches!(read, Err(SandboxError::NotFound { .. })),
        "{read:?}"
    );
    let glob = sb.glob(&b, "/home/gem/skills/**", None).await.unwrap();
    assert_eq!(glob.matches, ["/home/gem/skills/public-one/SKILL.md"]);
    for root in ["/home/gem/skills", "/home/gem/user-data"] {
        let grep = sb.grep(&b, MARKER, Some(root), None).await.unwrap();
        assert!(grep.matches.is_empty(), "{grep:?}");
    }
    assert_eq!(
        sb.projected_skills(b.user_id).await.unwrap(),
        versions(&[("public-one", "1")])
    );

    // The shell, as B: nothing of A's projection is mounted anywhere.
    let out = run(
        &fx,
        &b,
        &format!(
            "ls -la /home/gem/skills; cat /home/gem/skills/secret-a/SKILL.md; \
             timeout 20 find / -name SKILL.md 2>/dev/null; \
             grep -rl -e '{MARKER_REGEX}' /home /tmp 2>/dev/null; \
             timeout 20 grep -rl -e '{MARKER_REGEX}' / --exclude-dir=proc --exclude-dir=sys \
               --exclude-dir=usr 2>/dev/null | head; echo done"
        ),
    )
    .await;
    assert!(out.stdout.ends_with("done\n"), "{out:?}");
    assert!(out.stdout.contains("public-one"), "{out:?}");
    assert!(!out.stdout.contains("secret-a"), "{out:?}");
    assert!(
        !out.stdout.contains(MARKER) && !out.stderr.contains(MARKER),
        "{out:?}"
    );

    // A sees its own skill, through both.
    assert_eq!(listed(&fx, &a, "/home/gem/skills").await, ["secret-a"]);
    let text = fx
        .read_text(&a, "/home/gem/skills/secret-a/SKILL.md")
        .await
        .unwrap();
    assert_eq!(text, secret);
    let out = run(&fx, &a, "cat /home/gem/skills/secret-a/notes/more.txt").await;
    assert_eq!(out.stdout, MARKER, "{out:?}");
}

#[tokio::test]
async fn a_subagent_scope_of_the_same_user_sees_the_same_projection() {
    let fx = fixture().await;
    let child = Scope::new(fx.scope.user_id, "root-thread", "conversations/t1").unwrap();
    let sibling = Scope::new(fx.scope.user_id, "other-root", "conversations/t2").unwrap();
    fx.sandbox.prepare(&sibling).await.unwrap();
    fx.sandbox
        .project_skills(
            fx.scope.user_id,
            vec![skill("pdf", "1", &[("SKILL.md", "x")])],
        )
        .await
        .unwrap();
    for scope in [&fx.scope, &child, &sibling] {
        assert_eq!(listed(&fx, scope, "/home/gem/skills").await, ["pdf"]);
    }
}

#[tokio::test]
async fn projected_skill_is_readable_and_not_writable() {
    let fx = fixture().await;
    let sb = &fx.sandbox;
    sb.project_skills(
        fx.scope.user_id,
        vec![skill("pdf", "1", &[("SKILL.md", "# PDF\n")])],
    )
    .await
    .unwrap();
    let path = "/home/gem/skills/pdf/SKILL.md";
    assert_eq!(fx.read_text(&fx.scope, path).await.unwrap(), "# PDF\n");
    let write = sb.write(&fx.scope, path, "changed").await;
    assert!(
        matches!(write, Err(SandboxError::ReadOnly { .. })),
        "{write:?}"
    );
    let edit = sb.edit(&fx.scope, path, "PDF", "XXX", false).await;
    assert!(
        matches!(edit, Err(SandboxError::ReadOnly { .. })),
        "{edit:?}"
    );
    let new = sb
        .write(&fx.scope, "/home/gem/skills/new/SKILL.md", "x")
        .await;
    assert!(matches!(new, Err(SandboxError::ReadOnly { .. })), "{new:?}");

    let out = run(
        &fx,
        &fx.scope,
        "cat /home/gem/skills/pdf/SKILL.md; \
         touch /home/gem/skills/pdf/new 2>&1; echo \"touch $?\"; \
         echo x > /home/gem/skills/pdf/SKILL.md; echo \"echo $?\"; \
         rm -rf /home/gem/skills/pdf 2>/dev/null; echo \"rm $?\"",
    )
    .await;
    assert!(out.stdout.starts_with("# PDF\n"), "{out:?}");
    assert!(out.stdout.contains("Read-only file system"), "{out:?}");
    assert!(out.stdout.contains("touch 1\n"), "{out:?}");
    assert!(out.stdout.contains("echo 1\n"), "{out:?}");
    assert!(out.stdout.contains("rm 1\n"), "{out:?}");
    assert_eq!(
        fs::read_to_string(fx.skills().join("pdf/SKILL.md")).unwrap(),
        "# PDF\n"
    );
    assert!(!fx.skills().join("pdf/new").exists());
}

#[tokio::test]
async fn a_projection_holds_exactly_the_listed_skills() {
    let fx = fixture().await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    sb.project_skills(
        user,
        vec![
            skill("keep-me", "1", &[("SKILL.md", "kept v1")]),
            skill("change-me", "1", &[("SKILL.md", "v1"), ("old.txt", "old")]),
            skill("drop-me", "1", &[("SKILL.md", "dropped")]),
        ],
    )
    .await
    .unwrap();
    // Something that is no skill at all goes too.
    fs::write(fx.skills().join("stray.txt"), "stray").unwrap();

    sb.project_skills(
        user,
        vec![
            keep("keep-me", "1"),
            skill("change-me", "2", &[("SKILL.md", "v2"), ("new/x.md", "new")]),
            skill("added", "1", &[("SKILL.md", "added")]),
        ],
    )
    .await
    .unwrap();

    assert_eq!(
        sb.projected_skills(user).await.unwrap(),
        versions(&[("added", "1"), ("change-me", "2"), ("keep-me", "1")])
    );
    // Only the skills are visible: no manifest, no temp folder.
    assert_eq!(
        listed(&fx, &fx.scope, "/home/gem/skills").await,
        ["added", "change-me", "keep-me"]
    );
    let glob = sb
        .glob(&fx.scope, "/home/gem/skills/change-me/**", None)
        .await
        .unwrap();
    assert_eq!(
        glob.matches,
        [
            "/home/gem/skills/change-me/SKILL.md",
            "/home/gem/skills/change-me/new/x.md"
        ]
    );
    let read = |path: &str| fs::read_to_string(fx.skills().join(path)).unwrap();
    assert_eq!(read("change-me/SKILL.md"), "v2");
    assert_eq!(read("keep-me/SKILL.md"), "kept v1");
    let home: Vec<_> = fs::read_dir(fx.skills().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(home.is_empty(), "temp folders left: {home:?}");

    // An empty projection empties it.
    sb.project_skills(user, Vec::new()).await.unwrap();
    assert!(sb.projected_skills(user).await.unwrap().is_empty());
    assert!(listed(&fx, &fx.scope, "/home/gem/skills").await.is_empty());
}

/// Every run projects its user's skills; once they are in place, a projection that keeps them
/// all writes nothing (each manifest write is a new file renamed over the old one).
#[tokio::test]
async fn a_projection_that_changes_no_skill_writes_no_manifest() {
    use std::os::unix::fs::MetadataExt;
    let fx = fixture().await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    let manifest = fx.skills().parent().unwrap().join("skills.manifest");
    // The file itself: a rewrite renames a new file over it (a new inode, or a freed one
    // reused, with a new change time).
    let file = || {
        let meta = fs::metadata(&manifest).unwrap();
        (meta.ino(), meta.ctime(), meta.ctime_nsec())
    };
    sb.project_skills(
        user,
        vec![
            skill("one", "1", &[("SKILL.md", "one")]),
            skill("two", "1", &[("SKILL.md", "two")]),
        ],
    )
    .await
    .unwrap();
    let written = file();
    fs::write(fx.skills().join("stray.txt"), "stray").unwrap();

    sb.project_skills(user, vec![keep("one", "1"), keep("two", "1")])
        .await
        .unwrap();
    assert_eq!(file(), written, "the manifest was written again");
    // What is not a skill still goes, and the projection reads as before.
    assert_eq!(
        listed(&fx, &fx.scope, "/home/gem/skills").await,
        ["one", "two"]
    );
    assert_eq!(
        sb.projected_skills(user).await.unwrap(),
        versions(&[("one", "1"), ("two", "1")])
    );

    // Keeping fewer skills than the manifest names is a change: it is written (the manifest
    // names one skill now).
    sb.project_skills(user, vec![keep("one", "1")])
        .await
        .unwrap();
    assert_eq!(
        sb.projected_skills(user).await.unwrap(),
        versions(&[("one", "1")])
    );
    assert_eq!(listed(&fx, &fx.scope, "/home/gem/skills").await, ["one"]);
}

#[tokio::test]
async fn keeping_a_skill_that_is_not_projected_is_refused() {
    let fx = fixture().await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    sb.project_skills(user, vec![skill("pdf", "1", &[("SKILL.md", "v1")])])
        .await
        .unwrap();
    for stale in [keep("pdf", "2"), keep("absent", "1")] {
        let err = sb
            .project_skills(user, vec![stale.clone()])
            .await
            .unwrap_err();
        assert!(matches!(err, SandboxError::InvalidSkill { .. }), "{err:?}");
    }
    // Nothing changed.
    assert_eq!(
        sb.projected_skills(user).await.unwrap(),
        versions(&[("pdf", "1")])
    );
    // A user never projected holds nothing.
    assert!(sb.projected_skills(UserId::new()).await.unwrap().is_empty());
}

#[tokio::test]
async fn invalid_skill_names_and_file_paths_are_refused() {
    let fx = fixture().await;
    let (sb, user) = (&fx.sandbox, fx.scope.user_id);
    let mut bad = Vec::new();
    for name in [
        "",
        "-x",
        "x-",
        "a--b",
        "Caps",
        "a_b",
        "..",
        "a/b",
        &"a".repeat(65),
    ] {
        bad.push(skill(name, "1", &[("SKILL.md", "x")]));
    }
    for path in [
        "/etc/passwd",
        "../escape",
        "a/../../escape",
        "",
        "a//b",
        "./a",
        "a\0b",
    ] {
        bad.push(skill("ok", "1", &[(path, "x")]));
    }
    bad.push(skill("ok", "1 2", &[("SKILL.md", "x")]));
    for refused in bad {
        let err = sb
            .project_skills(user, vec![refused.clone()])
            .await
            .unwrap_err();
        assert!(
            matches!(err, SandboxError::InvalidSkill { .. }),
            "{refused:?}: {err:?}"
        );
    }
    let twice = vec![skill("ok", "1", &[]), skill("ok", "2", &[])];
    assert!(sb.project_skills(user, twice).await.is_err());
    assert!(fs::read_dir(fx.skills()).unwrap().next().is_none());
    assert!(!fx.dir.path().join("escape").exists());
}

#[tokio::test]
async fn concurrent_projections_of_one_user_do_not_corrupt() {
    let fx = fixture().await;
    let user = fx.scope.user_id;
    let mut tasks = Vec::new();
    for round in 0..8 {
        let sandbox = fx.sandbox.clone();
        let version = round.to_string();
        tasks.push(tokio::spawn(async move {
            let files: Vec<(String, Vec<u8>)> = (0..20)
                .map(|i| (format!("dir/f{i}.txt"), version.clone().into_bytes()))
                .collect();
            let skills = ["one", "two"]
                .map(|name| ProjectedSkill {
                    name: name.to_owned(),
                    version: version.clone(),
                    files: Some(files.clone()),
                })
                .to_vec();
            sandbox.project_skills(user, skills).await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let projected = fx.sandbox.projected_skills(user).await.unwrap();
    // One projection won whole: both skills come from the same one.
    assert_eq!(projected.len(), 2, "{projected:?}");
    assert_eq!(projected["one"], projected["two"], "{projected:?}");
    for (name, version) in &projected {
        for i in 0..20 {
            let text = fs::read_to_string(fx.skills().join(format!("{name}/dir/f{i}.txt")));
            assert_eq!(&text.unwrap(), version, "{name} f{i}");
        }
    }
}
