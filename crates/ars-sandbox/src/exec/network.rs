//! Network for a command whose agent may use it: its own network namespace (bwrap always
//! makes one) joined to the outside by slirp4netns, a user-mode NAT.
//!
//! slirp4netns runs on the host side with `--disable-host-loopback`, so the command reaches
//! what the host can reach *except* the host's loopback: not the ARS API on its default
//! `127.0.0.1` address, not a model server or database listening on localhost. Inside, the
//! command's `127.0.0.1` is its own namespace's loopback. `--enable-sandbox` and
//! `--enable-seccomp` confine slirp4netns itself. Its standard input is a pipe the server
//! holds (the `Child`'s own handle) and `--exit-fd 0` makes it exit when that pipe closes, so
//! it does not outlive a server that was killed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};

use super::bwrap::TAP_DEVICE;

/// How long to look for bwrap's namespace child before giving up on network.
const FIND_CHILD_FOR: Duration = Duration::from_secs(2);

/// Finds the first child of `launcher` (bwrap, whose child holds the namespaces) and starts
/// slirp4netns on it. `None` when the child never appeared or slirp4netns could not start;
/// the command then runs without a way out, which is logged.
pub(crate) async fn attach(slirp4netns: PathBuf, launcher: u32) -> Option<Child> {
    let children = PathBuf::from(format!("/proc/{launcher}/task/{launcher}/children"));
    let started = tokio::time::Instant::now();
    let child = loop {
        if let Some(pid) = first_pid(&children) {
            break pid;
        }
        if started.elapsed() > FIND_CHILD_FOR {
            tracing::warn!("the sandbox's namespace never appeared; the command has no network");
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // bwrap gives the namespace its loopback (an address, then up) before anything else;
    // slirp4netns brings the loopback up too, and if it gets there first — which makes the
    // kernel give it its address — bwrap's own address is refused and the command never
    // starts (`bwrap: loopback: Failed RTM_NEWADDR`). So slirp4netns joins only once the
    // loopback's local routes show: bwrap is past it.
    let routes = PathBuf::from(format!("/proc/{child}/net/fib_trie"));
    while !loopback_is_up(&routes) {
        if started.elapsed() > FIND_CHILD_FOR {
            tracing::warn!("the sandbox's loopback never came up; joining its network anyway");
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut command = Command::new(&slirp4netns);
    command
        .env_clear()
        .args(["--configure", "--mtu=65520", "--disable-host-loopback"])
        .args(["--enable-sandbox", "--enable-seccomp", "--exit-fd=0"])
        .arg(format!("--userns-path=/proc/{child}/ns/user"))
        .arg(child.to_string())
        .arg(TAP_DEVICE)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    match command.spawn() {
        Ok(process) => Some(process),
        Err(err) => {
            tracing::warn!(%err, "cannot start slirp4netns; the command has no network");
            None
        }
    }
}

/// How much of a namespace's routing tables [`loopback_is_up`] reads: a new namespace's are
/// about 1 KB, and the command inside may add routes of its own — no reason to read them all.
const ROUTES_READ: u64 = 16 * 1024;

/// Whether a network namespace's routing tables (its `/proc/<pid>/net/fib_trie`, the kernel's
/// text, not a path the command names) hold the loopback's address: bwrap has set its loopback
/// up. Read only so far ([`ROUTES_READ`]): not finding it only means joining after the bound.
fn loopback_is_up(routes: &Path) -> bool {
    use std::io::Read;
    let mut tables = String::new();
    std::fs::File::open(routes)
        .and_then(|file| file.take(ROUTES_READ).read_to_string(&mut tables))
        .is_ok_and(|_| tables.contains("127.0.0.1"))
}

/// The first pid listed in a `/proc/<pid>/task/<tid>/children` file.
fn first_pid(children: &Path) -> Option<u32> {
    std::fs::read_to_string(children)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_loopback_is_up_once_its_address_shows_within_the_read_bound() {
        let dir = tempfile::tempdir().unwrap();
        let routes = dir.path().join("fib_trie");
        assert!(!loopback_is_up(&routes), "no file: not up");
        std::fs::write(&routes, "Main:\nLocal:\n").unwrap();
        assert!(!loopback_is_up(&routes), "empty tables: not up");
        std::fs::write(
            &routes,
            "Main:\n  +-- 127.0.0.0/8 2 0 2\n     |-- 127.0.0.1\n        /32 host LOCAL\n",
        )
        .unwrap();
        assert!(loopback_is_up(&routes));
        // Routes a command added itself push the address past what is read: not up (the
        // caller joins after its time bound), and the rest is never read.
        let padding = "     |-- 10.9.9.9\n".repeat(2 * ROUTES_READ as usize / 17);
        std::fs::write(&routes, format!("Main:\n{padding}     |-- 127.0.0.1\n")).unwrap();
        assert!(!loopback_is_up(&routes));
    }
}
