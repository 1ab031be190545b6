//! The symlink-swap race: while one thread swaps a workspace directory with a symlink out of
//! the scope millions of times (`renameat2(RENAME_EXCHANGE)`, as a shell command in the
//! sandbox can), the file tools and the file browser's operations (tree, download, upload,
//! remove) work on paths through it. Nothing may be read from, listed
//! in, or written to anywhere outside the workspace, whatever the link points at; nor may
//! preparing a scope (a run's first tool call) make a directory there.

// Helpers outside `#[test]` functions panic on failure too; that is how tests fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ars_sandbox::{Sandbox, Scope, TreeLimits, WriteMode};
use common::{Fixture, fixture};
use rustix::fs::{CWD, RenameFlags, renameat_with};
use tokio::io::AsyncReadExt;

/// How long each scenario races; bounded so the suite stays fast.
const RACE_FOR: Duration = Duration::from_millis(1500);
/// What every file outside the scope contains; seeing it in a result is a breach.
const MARKER: &str = "HOST-SECRET";

/// Swaps `a` and `b` atomically until `stop`; returns how many swaps it made.
fn swapper(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).is_ok() {
                swaps += 1;
            }
        }
        swaps
    })
}

/// Every file below `dir`, as (path, content).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    entries(dir)
        .into_iter()
        .filter(|path| path.is_file())
        .map(|path| {
            let content = fs::read(&path).unwrap();
            (path, content)
        })
        .collect()
}

/// Every path below `dir`, directories included (links not followed), sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            }
            out.push(entry.path());
        }
    }
    out.sort();
    out
}

/// A victim directory with a marked secret and a subdirectory, the way an attacker would
/// want to read and plant files in it.
fn victim(dir: &Path) {
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("secret.txt"), format!("{MARKER} password\n")).unwrap();
    fs::write(dir.join("sub/more.txt"), format!("{MARKER} more\n")).unwrap();
    // A name only the victim has, so a listing that reached it shows the marker too.
    fs::write(dir.join(format!("{MARKER}.txt")), "named\n").unwrap();
}

/// Races the file tools against a swapper of `race/r` (a real directory) and `race/swap` (a
/// symlink to `link_target`), then checks that `victim_dir` is untouched and that no tool
/// result ever showed the marker.
async fn race(fx: &Fixture, link_target: &str, victim_dir: &Path) {
    let race_dir = fx.user_data(fx.scope.user_id).join("race");
    fs::create_dir_all(race_dir.join("r/sub")).unwrap();
    fs::write(race_dir.join("r/secret.txt"), "inside\n").unwrap();
    fs::write(race_dir.join("r/sub/more.txt"), "inside more\n").unwrap();
    symlink(link_target, race_dir.join("swap")).unwrap();
    let before = snapshot(victim_dir);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(race_dir.join("r"), race_dir.join("swap"), Arc::clone(&stop));
    let succeeded = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + RACE_FOR;
    let mut workers = Vec::new();
    for worker in 0..4 {
        let (sandbox, scope) = (fx.sandbox.clone(), fx.scope.clone());
        let succeeded = Arc::clone(&succeeded);
        workers.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < deadline {
                i += 1;
                let seen = one_round(&sandbox, &scope, worker, i).await;
                assert!(
                    !seen.iter().any(|text| text.contains(MARKER)),
                    "a tool result showed a file outside the workspace: {seen:?}"
                );
                succeeded.fetch_add(seen.len() as u64, Ordering::Relaxed);
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();

    assert_eq!(
        snapshot(victim_dir),
        before,
        "files outside the workspace were written"
    );
    eprintln!(
        "{link_target}: {swaps} swaps, {} successful tool results, none from outside",
        succeeded.load(Ordering::Relaxed)
    );
    // The race really ran, and the tools really worked in between.
    assert!(swaps > 1000, "only {swaps} swaps");
    assert!(
        succeeded.load(Ordering::Relaxed) > 20,
        "the tools never succeeded"
    );
}

/// One round of every file tool on paths through the swapped directory; returns the text of
/// every successful result.
async fn one_round(sandbox: &impl Sandbox, scope: &Scope, worker: u64, i: u64) -> Vec<String> {
    let base = "/home/gem/user-data/race/r";
    let mut seen = Vec::new();
    if let Ok(out) = sandbox
        .read(scope, &format!("{base}/secret.txt"), 1, None)
        .await
    {
        seen.push(out.content);
    }
    if let Ok(bytes) = sandbox
        .read_bytes(scope, &format!("{base}/secret.txt"), 1 << 20)
        .await
    {
        seen.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    if let Ok(out) = sandbox.list(scope, base).await {
        seen.push(format!("{:?}", out.entries));
    }
    if let Ok(out) = sandbox.grep(scope, ".", Some(base), None).await {
        seen.push(format!("{:?}", out.matches));
    }
    if let Ok(out) = sandbox.glob(scope, "**/*", Some(base)).await {
        seen.push(format!("{:?}", out.matches));
    }
    let planted = format!("{base}/planted-{worker}-{i}.txt");
    if sandbox.write(scope, &planted, "planted\n").await.is_ok() {
        seen.push(String::new());
    }
    if sandbox
        .write(scope, &format!("{base}/sub/planted-{worker}-{i}.txt"), "x")
        .await
        .is_ok()
    {
        seen.push(String::new());
    }
    // Would change a victim's secret, and only a victim's (the inside copy has no marker).
    let _ = sandbox
        .edit(scope, &format!("{base}/secret.txt"), MARKER, "PWNED", false)
        .await;
    // The file browser's operations: a tree, a streamed download, a raw upload, removals.
    let limits = TreeLimits {
        max_depth: 3,
        max_entries: 100,
    };
    if let Ok(out) = sandbox.tree(scope, base, limits).await {
        seen.push(format!("{:?}", out.entries));
    }
    if let Ok(mut file) = sandbox
        .open_file(scope, &format!("{base}/secret.txt"))
        .await
    {
        let mut text = String::new();
        if file.reader.read_to_string(&mut text).await.is_ok() {
            seen.push(text);
        }
    }
    let uploaded = format!("{base}/sub/uploaded-{worker}-{i}.bin");
    if sandbox
        .write_bytes(scope, &uploaded, b"up".to_vec(), WriteMode::Replace)
        .await
        .is_ok()
    {
        seen.push(String::new());
    }
    if sandbox.remove(scope, &planted, false).await.is_ok() {
        seen.push(String::new());
    }
    // Would empty the victim's `sub/` (the next round's writes create the inside one again).
    if i.is_multiple_of(4)
        && sandbox
            .remove(scope, &format!("{base}/sub"), true)
            .await
            .is_ok()
    {
        seen.push(String::new());
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_with_an_absolute_link_out_never_reaches_the_host() {
    let fx = fixture().await;
    let host = fx.dir.path().join("host-dir");
    victim(&host);
    race(&fx, &host.to_string_lossy(), &host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_with_a_relative_link_out_never_reaches_the_host() {
    let fx = fixture().await;
    let host = fx.dir.path().join("host-dir");
    victim(&host);
    // race/ → user-data → <user> → users → data → the temp dir.
    race(&fx, "../../../../../host-dir", &host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn race_with_a_link_to_another_users_workspace_never_reaches_it() {
    let fx = fixture().await;
    let other = fx.other_user().await;
    let theirs = fx.user_data(other.user_id);
    victim(&theirs.join("victim"));
    // race/ → user-data → <user> → users, then into the other user's workspace.
    let target = format!("../../../{}/user-data/victim", other.user_id);
    race(&fx, &target, &theirs).await;
}

/// A run's first tool call prepares its scope, maybe while another run of the same user swaps
/// a directory on the way to the new workdir with a link out: the workdir is made inside the
/// workspace or not at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn preparing_a_scope_through_a_swapped_directory_never_makes_one_outside() {
    let fx = fixture().await;
    let host = fx.dir.path().join("host-dir");
    victim(&host);
    let before = entries(&host);
    let race_dir = fx.user_data(fx.scope.user_id).join("race");
    fs::create_dir_all(race_dir.join("r")).unwrap();
    symlink(&host, race_dir.join("swap")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(race_dir.join("r"), race_dir.join("swap"), Arc::clone(&stop));
    let deadline = Instant::now() + RACE_FOR;
    let (mut prepared, mut i) = (0u64, 0u64);
    while Instant::now() < deadline {
        i += 1;
        let scope =
            Scope::new(fx.scope.user_id, "root-thread", format!("race/r/t{i}/work")).unwrap();
        if fx.sandbox.prepare(&scope).await.is_ok() {
            prepared += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();

    assert_eq!(
        entries(&host),
        before,
        "a directory was made outside the workspace"
    );
    eprintln!("{swaps} swaps, {prepared} of {i} scopes prepared, none outside");
    assert!(swaps > 1000, "only {swaps} swaps");
    assert!(prepared > 20, "no scope was ever prepared");
}
