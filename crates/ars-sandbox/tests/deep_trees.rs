//! Trees as deep as an agent cares to make them: a command's 300-level and 100,000-level
//! folders are counted against the quota to the last byte (as `du` counts them), listed down to
//! the listing's bound, searched down to the search's bound (which says so), and removed by
//! the file browser, all without recursion (a stack overflow would kill the whole server).
//!
//! The trees are made by commands under bubblewrap, as an agent would make them (CI installs
//! it).

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use ars_sandbox::{ExecOutcome, ExecRequest, Sandbox, TreeLimits};
use common::{Fixture, fixture};
use tokio_util::sync::CancellationToken;

const MIB: u64 = 1024 * 1024;

async fn run(fx: &Fixture, command: &str) -> ExecOutcome {
    let request = ExecRequest {
        command: command.to_owned(),
        timeout: Duration::from_secs(120),
        allow_network: false,
    };
    let out = fx
        .sandbox
        .execute(&fx.scope, request, CancellationToken::new())
        .await
        .expect("execute could not start the shell (is bubblewrap installed?)");
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    out
}

/// A command that makes `levels` nested folders `d` in the workdir and writes `bytes` bytes
/// into `f` at the bottom (Python: a shell's `mkdir` per level would take minutes).
fn deep_tree(levels: usize, bytes: u64) -> String {
    format!(
        "python3 -c 'import os\nfor _ in range({levels}): os.mkdir(\"d\"); os.chdir(\"d\")\n\
         open(\"f\", \"wb\").write(bytes({bytes}))'"
    )
}

/// What `du` says `path` takes on disk, in bytes (allocated blocks, like the quota).
fn du(path: &Path) -> u64 {
    let out = std::process::Command::new("du")
        .args(["-s", "-B1"])
        .arg(path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("du: {text} {}", String::from_utf8_lossy(&out.stderr)))
}

/// The workspace's usage as the sandbox last measured it.
async fn used(fx: &Fixture) -> u64 {
    let usage = fx.sandbox.workspace_usage(fx.scope.user_id).await.unwrap();
    usage.used_bytes
}

/// `measured` within a block or two of `expected` (`du` and the quota count the same blocks).
fn assert_close(measured: u64, expected: u64) {
    let diff = measured.abs_diff(expected);
    assert!(
        diff <= 8192,
        "measured {measured} bytes, du says {expected} (off by {diff})"
    );
}

#[tokio::test]
async fn a_file_below_300_levels_is_counted() {
    let fx = fixture().await;
    run(&fx, &deep_tree(300, 5 * MIB)).await;
    let used = used(&fx).await;
    assert!(used >= 5 * MIB, "{used} bytes counted for a 5 MiB file");
    assert_close(used, du(&fx.user_data(fx.scope.user_id)));
}

#[tokio::test]
async fn a_100000_level_tree_is_counted_listed_searched_and_removed() {
    let fx = fixture().await;
    let started = Instant::now();
    run(&fx, &deep_tree(100_000, 3 * MIB)).await;
    eprintln!(
        "made and measured 100,000 levels in {:?}",
        started.elapsed()
    );
    let workspace = fx.user_data(fx.scope.user_id);

    // Counted to the bottom, as du counts it. A command that does nothing is measured after
    // too, which times one measurement of the deep tree (plus starting a sandbox).
    let used = used(&fx).await;
    assert!(used >= 3 * MIB, "{used} bytes counted for a 3 MiB file");
    assert_close(used, du(&workspace));
    let started = Instant::now();
    run(&fx, "true").await;
    eprintln!(
        "a command and a measurement of 100,000 levels: {:?}",
        started.elapsed()
    );

    // Listed down to the listing's bound, which says it left the rest out.
    let limits = TreeLimits {
        max_depth: 16,
        max_entries: 2000,
    };
    let tree = fx.sandbox.tree(&fx.scope, ".", limits).await.unwrap();
    assert_eq!(tree.entries.len(), 16, "{:?}", tree.entries.last());
    assert!(tree.truncated);

    // Searched down to the search's bound, which says so too.
    let found = fx.sandbox.glob(&fx.scope, "**/f", None).await.unwrap();
    assert!(found.matches.is_empty() && found.truncated, "{found:?}");

    // Removed whole by the file browser, and the usage drops with it.
    let started = Instant::now();
    fx.sandbox.remove(&fx.scope, "d", true).await.unwrap();
    eprintln!("removed 100,000 levels in {:?}", started.elapsed());
    assert!(!fx.workdir().join("d").exists());
    let after = self::used(&fx).await;
    assert!(after < 64 * 1024, "{after} bytes left after the removal");
    assert_close(after, du(&workspace));
}
