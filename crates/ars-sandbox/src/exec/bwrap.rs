//! The bubblewrap command line that isolates a shell command to its scope.
//!
//! What the command sees:
//! - `/home/gem/user-data` — the user's workspace, read-write (the workdir is inside it);
//! - `/home/gem/skills` — the shared Skills projection, read-only;
//! - `/home/gem` itself — a private tmpfs, so `$HOME` is writable but forgotten afterwards;
//! - `/usr` and the `/bin`, `/lib*`, `/sbin` links or directories, read-only;
//! - a few files under `/etc` that programs need to run (dynamic linker, Debian alternatives,
//!   time zone, TLS roots, name-service config) — never `passwd`, `shadow`, `group` or the rest;
//! - its own `/proc`, a minimal `/dev`, a private `/tmp`; the root itself is read-only.
//!
//! It runs in fresh namespaces of every kind (so no network unless allowed, and no view of
//! host processes), with every capability dropped, a cleared environment and a new session.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::paths::{HOME_DIR, SKILLS_ROOT, USER_DATA_ROOT};

/// The only environment a sandboxed command gets; nothing of the server's leaks in.
pub(crate) const SHELL_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// `LANG` for sandboxed commands: UTF-8 without depending on installed locales.
pub(crate) const SHELL_LANG: &str = "C.UTF-8";

/// Top-level directories that Debian ships as symlinks into `/usr` (merged /usr) or, on older
/// systems, as real directories.
const SYSTEM_DIRS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The `/etc` entries programs need to run. Everything else in `/etc` — notably `passwd`,
/// `group` and `shadow` — stays invisible.
const ETC_ALLOWLIST: &[&str] = &[
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/hosts",
    "/etc/services",
    "/etc/protocols",
];

/// `/etc` entries only useful (and only bound) when the command may use the network.
const ETC_NETWORK: &[&str] = &["/etc/resolv.conf"];

/// Host directories of one scope, already resolved and checked.
#[derive(Clone, Debug)]
pub(crate) struct ScopeMounts {
    /// Canonical host path of the user workspace.
    pub(crate) user_data: PathBuf,
    /// Canonical host path of the shared Skills projection.
    pub(crate) skills: PathBuf,
    /// The workdir as the command sees it.
    pub(crate) virtual_workdir: String,
}

/// The bwrap arguments (everything after the `bwrap` program itself) that run `bash -c
/// command` isolated to `mounts`.
pub(crate) fn bwrap_args(
    mounts: &ScopeMounts,
    command: &str,
    allow_network: bool,
    extra_ro_binds: &[PathBuf],
) -> Vec<OsString> {
    let mut args = Args::default();
    args.push(["--die-with-parent", "--new-session", "--unshare-all"]);
    if allow_network {
        args.push(["--share-net"]);
    }
    args.push(["--cap-drop", "ALL", "--clearenv"]);
    args.push(["--setenv", "PATH", SHELL_PATH]);
    args.push(["--setenv", "HOME", HOME_DIR]);
    args.push(["--setenv", "LANG", SHELL_LANG]);

    args.push(["--ro-bind", "/usr", "/usr"]);
    for dir in SYSTEM_DIRS {
        let path = Path::new(dir);
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if let Ok(target) = fs::read_link(path) {
                    args.push_os(["--symlink".into(), target.into(), (*dir).into()]);
                }
            }
            Ok(meta) if meta.is_dir() => args.push(["--ro-bind", dir, dir]),
            _ => {}
        }
    }
    let etc = ETC_ALLOWLIST
        .iter()
        .chain(if allow_network { ETC_NETWORK } else { &[] });
    for entry in etc {
        args.push(["--ro-bind-try", entry, entry]);
    }
    for extra in extra_ro_binds {
        args.push_os([
            "--ro-bind-try".into(),
            extra.clone().into(),
            extra.clone().into(),
        ]);
    }

    args.push(["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]);
    args.push(["--tmpfs", HOME_DIR]);
    args.push_os([
        "--bind".into(),
        mounts.user_data.clone().into(),
        USER_DATA_ROOT.into(),
    ]);
    args.push_os([
        "--ro-bind".into(),
        mounts.skills.clone().into(),
        SKILLS_ROOT.into(),
    ]);
    args.push(["--remount-ro", "/"]);
    args.push(["--chdir", &mounts.virtual_workdir]);
    args.push(["/bin/bash", "-c", command]);
    args.0
}

/// A small builder so the argument list above reads as the bwrap command line it is.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn push<const N: usize>(&mut self, items: [&str; N]) {
        self.0.extend(items.iter().map(OsString::from));
    }

    fn push_os<const N: usize>(&mut self, items: [OsString; N]) {
        self.0.extend(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(allow_network: bool) -> Vec<String> {
        let mounts = ScopeMounts {
            user_data: "/data/users/u/user-data".into(),
            skills: "/data/skills".into(),
            virtual_workdir: "/home/gem/user-data/conversations/t".into(),
        };
        bwrap_args(&mounts, "echo hi", allow_network, &[])
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    fn has_window(args: &[String], window: &[&str]) -> bool {
        args.windows(window.len()).any(|w| w == window)
    }

    #[test]
    fn binds_the_scope_at_its_virtual_paths() {
        let args = args(false);
        assert!(has_window(
            &args,
            &["--bind", "/data/users/u/user-data", "/home/gem/user-data"]
        ));
        assert!(has_window(
            &args,
            &["--ro-bind", "/data/skills", "/home/gem/skills"]
        ));
        assert!(has_window(
            &args,
            &["--chdir", "/home/gem/user-data/conversations/t"]
        ));
        assert!(args.ends_with(&["/bin/bash".into(), "-c".into(), "echo hi".into()]));
    }

    #[test]
    fn network_is_shared_only_when_allowed() {
        assert!(!args(false).iter().any(|a| a == "--share-net"));
        assert!(!args(false).iter().any(|a| a == "/etc/resolv.conf"));
        assert!(args(true).iter().any(|a| a == "--share-net"));
    }

    #[test]
    fn never_binds_account_databases_or_all_of_etc() {
        let args = args(true);
        for secret in [
            "/etc",
            "/etc/passwd",
            "/etc/shadow",
            "/etc/group",
            "/etc/ssl",
        ] {
            assert!(!args.iter().any(|a| a == secret), "{secret} is bound");
        }
        assert!(has_window(&args, &["--cap-drop", "ALL", "--clearenv"]));
    }
}
