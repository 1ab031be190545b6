//! The file tools: read slices, write, edit, list, glob and grep, all answering in virtual
//! paths.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use ars_sandbox::{EntryKind, Sandbox, SandboxError};
use common::{fixture, fixture_with};

fn numbered(lines: std::ops::RangeInclusive<usize>) -> String {
    lines.map(|n| format!("line {n}\n")).collect()
}

#[tokio::test]
async fn edit_replaces_a_unique_occurrence() {
    let fx = fixture().await;
    fx.write("main.py", "def f():\n    return 1\n").await;
    let outcome = fx
        .sandbox
        .edit(&fx.scope, "main.py", "return 1", "return 2", false)
        .await
        .unwrap();
    assert_eq!(outcome.replacements, 1);
    assert_eq!(outcome.path, "/home/gem/user-data/conversations/t1/main.py");
    assert_eq!(
        fs::read_to_string(fx.workdir().join("main.py")).unwrap(),
        "def f():\n    return 2\n"
    );
}

#[tokio::test]
async fn edit_fails_clearly_when_the_text_is_not_found() {
    let fx = fixture().await;
    fx.write("a.txt", "alpha\n").await;
    let err = fx
        .sandbox
        .edit(&fx.scope, "a.txt", "beta", "gamma", false)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::EditNotFound { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("/home/gem/user-data/conversations/t1/a.txt")
    );
    let missing = fx
        .sandbox
        .edit(&fx.scope, "nope.txt", "a", "b", false)
        .await;
    assert!(
        matches!(missing, Err(SandboxError::NotFound { .. })),
        "{missing:?}"
    );
}

#[tokio::test]
async fn edit_fails_when_the_text_is_not_unique_unless_replace_all() {
    let fx = fixture().await;
    fx.write("a.txt", "x = 1\nx = 1\nx = 1\n").await;
    let err = fx
        .sandbox
        .edit(&fx.scope, "a.txt", "x = 1", "x = 2", false)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        SandboxError::EditNotUnique {
            path: "/home/gem/user-data/conversations/t1/a.txt".into(),
            count: 3
        }
    );
    assert!(err.to_string().contains("replace_all"));
    let all = fx
        .sandbox
        .edit(&fx.scope, "a.txt", "x = 1", "x = 2", true)
        .await
        .unwrap();
    assert_eq!(all.replacements, 3);
    assert_eq!(
        fx.read_text(&fx.scope, "a.txt").await.unwrap(),
        "x = 2\n".repeat(3)
    );
}

#[tokio::test]
async fn edit_refuses_empty_or_identical_text_and_binary_files() {
    let fx = fixture().await;
    fx.write("a.txt", "a\n").await;
    for (old, new) in [("", "x"), ("a", "a")] {
        let err = fx.sandbox.edit(&fx.scope, "a.txt", old, new, false).await;
        assert!(matches!(err, Err(SandboxError::InvalidEdit(_))), "{err:?}");
    }
    fs::write(fx.workdir().join("bin.dat"), b"a\0b").unwrap();
    let err = fx.sandbox.edit(&fx.scope, "bin.dat", "a", "b", false).await;
    assert!(matches!(err, Err(SandboxError::Binary { .. })), "{err:?}");
}

#[tokio::test]
async fn read_returns_the_requested_slice_with_line_numbers_and_total() {
    let fx = fixture().await;
    fx.write("ten.txt", &numbered(1..=10)).await;
    let slice = fx
        .sandbox
        .read(&fx.scope, "ten.txt", 3, Some(4))
        .await
        .unwrap();
    assert_eq!(
        slice.content,
        "     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline 6\n"
    );
    assert_eq!(
        (slice.first_line, slice.lines_returned, slice.total_lines),
        (3, 4, 10)
    );
    assert!(!slice.truncated);

    let whole = fx
        .sandbox
        .read(&fx.scope, "ten.txt", 0, None)
        .await
        .unwrap();
    assert_eq!((whole.first_line, whole.lines_returned), (1, 10));
    let past_end = fx
        .sandbox
        .read(&fx.scope, "ten.txt", 50, None)
        .await
        .unwrap();
    assert_eq!((past_end.lines_returned, past_end.total_lines), (0, 10));
}

#[tokio::test]
async fn read_stops_at_the_byte_cap_and_says_so() {
    let fx = fixture_with(|c| c.max_read_bytes = 100).await;
    fx.write("many.txt", &numbered(1..=100)).await;
    let outcome = fx
        .sandbox
        .read(&fx.scope, "many.txt", 1, None)
        .await
        .unwrap();
    assert!(outcome.truncated);
    assert!(outcome.content.len() <= 100);
    assert_eq!(outcome.total_lines, 100);
    assert!(outcome.lines_returned > 0 && outcome.lines_returned < 100);
}

#[tokio::test]
async fn read_refuses_binary_files_and_directories() {
    let fx = fixture().await;
    fs::write(
        fx.workdir().join("image.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
    .unwrap();
    let err = fx
        .sandbox
        .read(&fx.scope, "image.png", 1, None)
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::Binary { .. }), "{err:?}");
    assert!(err.to_string().contains("binary"));
    let dir = fx.sandbox.read(&fx.scope, ".", 1, None).await;
    assert!(
        matches!(dir, Err(SandboxError::IsDirectory { .. })),
        "{dir:?}"
    );
    let missing = fx.sandbox.read(&fx.scope, "nope.txt", 1, None).await;
    assert_eq!(
        missing.unwrap_err().to_string(),
        "`/home/gem/user-data/conversations/t1/nope.txt` does not exist"
    );
}

#[tokio::test]
async fn write_creates_parents_replaces_atomically_and_leaves_no_temp_files() {
    let fx = fixture().await;
    let first = fx
        .sandbox
        .write(&fx.scope, "a/b/c.txt", "one\n")
        .await
        .unwrap();
    assert!(first.created);
    assert_eq!(first.bytes_written, 4);
    let second = fx
        .sandbox
        .write(&fx.scope, "a/b/c.txt", "two\n")
        .await
        .unwrap();
    assert!(!second.created);
    assert_eq!(fx.read_text(&fx.scope, "a/b/c.txt").await.unwrap(), "two\n");
    let names: Vec<_> = fs::read_dir(fx.workdir().join("a/b"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["c.txt"]);
    let onto_dir = fx.sandbox.write(&fx.scope, "a", "x").await;
    assert!(
        matches!(onto_dir, Err(SandboxError::IsDirectory { .. })),
        "{onto_dir:?}"
    );
}

#[tokio::test]
async fn list_names_entries_by_virtual_path() {
    let fx = fixture().await;
    fx.write("b.txt", "bb").await;
    fx.write("a/inner.txt", "x").await;
    std::os::unix::fs::symlink("/etc/passwd", fx.workdir().join("link")).unwrap();
    let listing = fx.sandbox.list(&fx.scope, ".").await.unwrap();
    assert_eq!(listing.path, "/home/gem/user-data/conversations/t1");
    let summary: Vec<_> = listing
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e.kind))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "/home/gem/user-data/conversations/t1/a",
                EntryKind::Directory
            ),
            (
                "/home/gem/user-data/conversations/t1/b.txt",
                EntryKind::File
            ),
            (
                "/home/gem/user-data/conversations/t1/link",
                EntryKind::Symlink
            ),
        ]
    );
    assert_eq!(listing.entries[1].size, 2);
    let not_dir = fx.sandbox.list(&fx.scope, "b.txt").await;
    assert!(
        matches!(not_dir, Err(SandboxError::NotDirectory { .. })),
        "{not_dir:?}"
    );
}

#[tokio::test]
async fn glob_matches_relative_absolute_and_based_patterns() {
    let fx = fixture().await;
    fx.write("src/lib.rs", "").await;
    fx.write("src/util/mod.rs", "").await;
    fx.write("README.md", "").await;
    fs::create_dir_all(fx.skills().join("pdf")).unwrap();
    fs::write(fx.skills().join("pdf/SKILL.md"), "").unwrap();
    let wd = "/home/gem/user-data/conversations/t1";
    let sb = &fx.sandbox;

    let top = sb.glob(&fx.scope, "src/*.rs", None).await.unwrap();
    assert_eq!(top.matches, [format!("{wd}/src/lib.rs")]);
    let deep = sb.glob(&fx.scope, "**/*.rs", None).await.unwrap();
    assert_eq!(
        deep.matches,
        [format!("{wd}/src/lib.rs"), format!("{wd}/src/util/mod.rs")]
    );
    assert_eq!(deep.base, wd);
    let based = sb.glob(&fx.scope, "*.rs", Some("src/util")).await.unwrap();
    assert_eq!(based.matches, [format!("{wd}/src/util/mod.rs")]);
    let skills = sb
        .glob(&fx.scope, "/home/gem/skills/*/SKILL.md", None)
        .await
        .unwrap();
    assert_eq!(skills.matches, ["/home/gem/skills/pdf/SKILL.md"]);
    let dotdot = sb.glob(&fx.scope, "../**", None).await;
    assert!(
        matches!(dotdot, Err(SandboxError::InvalidPattern { .. })),
        "{dotdot:?}"
    );
}

#[tokio::test]
async fn glob_reports_truncation_at_the_cap() {
    let fx = fixture_with(|c| c.max_results = 3).await;
    for i in 0..5 {
        fx.write(&format!("f{i}.txt"), "").await;
    }
    let outcome = fx.sandbox.glob(&fx.scope, "*.txt", None).await.unwrap();
    assert_eq!(outcome.matches.len(), 3);
    assert!(outcome.truncated);
}

#[tokio::test]
async fn grep_reports_file_line_and_text() {
    let fx = fixture().await;
    fx.write("src/a.rs", "fn alpha() {}\nfn beta() {}\n").await;
    fx.write("notes.md", "alpha release\n").await;
    fs::write(fx.workdir().join("blob.bin"), b"alpha\0").unwrap();
    let sb = &fx.sandbox;
    let wd = "/home/gem/user-data/conversations/t1";

    let all = sb.grep(&fx.scope, r"alpha", None, None).await.unwrap();
    assert_eq!(
        all.render(),
        format!("{wd}/notes.md:1:alpha release\n{wd}/src/a.rs:1:fn alpha() {{}}\n")
    );
    let rust_only = sb
        .grep(&fx.scope, r"fn \w+", None, Some("*.rs"))
        .await
        .unwrap();
    assert_eq!(rust_only.matches.len(), 2);
    assert_eq!(rust_only.matches[1].line, 2);
    let one_file = sb
        .grep(&fx.scope, "beta", Some("src/a.rs"), None)
        .await
        .unwrap();
    assert_eq!(
        one_file.render(),
        format!("{wd}/src/a.rs:2:fn beta() {{}}\n")
    );
    let bad = sb.grep(&fx.scope, "(unclosed", None, None).await;
    assert!(
        matches!(bad, Err(SandboxError::InvalidPattern { .. })),
        "{bad:?}"
    );
}

#[tokio::test]
async fn grep_stops_at_the_match_cap() {
    let fx = fixture_with(|c| c.max_results = 5).await;
    fx.write("many.txt", &numbered(1..=50)).await;
    let outcome = fx
        .sandbox
        .grep(&fx.scope, "line", None, None)
        .await
        .unwrap();
    assert_eq!(outcome.matches.len(), 5);
    assert!(outcome.truncated);
}
