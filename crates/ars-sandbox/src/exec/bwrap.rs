//! The bubblewrap command line that isolates a shell command to its scope.
//!
//! What the command sees:
//! - `/home/gem/user-data` — the user's workspace, read-write (the workdir is inside it);
//! - `/home/gem/skills` — the user's own Skills projection, read-only (no other user's is
//!   mounted);
//! - `/home/gem` itself — a private tmpfs, so `$HOME` is writable but forgotten afterwards;
//! - `/usr` and the `/bin`, `/lib*`, `/sbin` links or directories, read-only;
//! - a few files under `/etc` that programs need to run (dynamic linker, Debian alternatives,
//!   time zone, TLS roots, name-service config) — never `passwd`, `shadow`, `group` or the rest;
//! - its own `/proc`, a minimal `/dev`, a private size-limited `/tmp`; the root itself is
//!   read-only.
//!
//! The command runs under hard rlimits (processes, address space, open files, file size, CPU
//! time) that a `bash` prelude sets before it `exec`s the command. The options reach `bwrap`
//! on its standard input (`--args 0`), so no host path shows in the sandbox's
//! `/proc/1/cmdline`; only the command itself is on bwrap's command line.
//!
//! It runs in fresh namespaces of every kind — always its own network namespace, so no view of
//! the host's network; with network allowed, slirp4netns adds a user-mode NAT to it with the
//! host's loopback cut off — and no view of host processes, with every capability dropped, a
//! cleared environment and a new session.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::config::{SandboxLimits, check_extra_ro_bind};
use crate::layout::{HOME_DIR, SKILLS_ROOT, USER_DATA_ROOT};
use crate::sandbox::ProcessRequest;

/// The only environment a sandboxed command gets; nothing of the server's leaks in.
pub(crate) const SHELL_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// `LANG` for sandboxed commands: UTF-8 without depending on installed locales.
pub(crate) const SHELL_LANG: &str = "C.UTF-8";
/// `NODE_OPTIONS` under an address-space limit: Node's WebAssembly (which its own `fetch`
/// uses) otherwise reserves guard regions of several GiB per instance and dies with "Out of
/// memory" under any realistic `RLIMIT_AS`. A process's own `NODE_OPTIONS` replaces it.
pub(crate) const NODE_OPTIONS_UNDER_LIMIT: &str = "--disable-wasm-trap-handler";

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

/// The resolver configuration of a command with network: slirp4netns's DNS forwarder, since
/// the host's own (often a resolver on the host's loopback) is out of reach by design.
pub(crate) const SANDBOX_RESOLV_CONF: &str = "nameserver 10.0.2.3\n";

/// The network interface slirp4netns adds to a command's network namespace.
pub(crate) const TAP_DEVICE: &str = "tap0";

/// Host directories of one scope, already resolved and checked.
#[derive(Clone, Debug)]
pub(crate) struct ScopeMounts {
    /// Canonical host path of the user workspace.
    pub(crate) user_data: PathBuf,
    /// Canonical host path of the user's Skills projection.
    pub(crate) skills: PathBuf,
    /// The workdir as the command sees it.
    pub(crate) virtual_workdir: String,
    /// With network: the resolver configuration to show at `/etc/resolv.conf`.
    pub(crate) resolv_conf: Option<PathBuf>,
}

/// The bwrap options that isolate a command to `mounts`. The command itself
/// ([`shell_argv`]) follows them after `--` on bwrap's command line.
pub(crate) fn bwrap_args(
    mounts: &ScopeMounts,
    extra_ro_binds: &[PathBuf],
    limits: &SandboxLimits,
) -> Vec<OsString> {
    let mut args = Args::default();
    args.push(["--die-with-parent", "--new-session", "--unshare-all"]);
    args.push(["--cap-drop", "ALL", "--clearenv"]);
    args.push(["--setenv", "PATH", SHELL_PATH]);
    args.push(["--setenv", "HOME", HOME_DIR]);
    args.push(["--setenv", "LANG", SHELL_LANG]);
    if limits.memory_bytes > 0 {
        args.push(["--setenv", "NODE_OPTIONS", NODE_OPTIONS_UNDER_LIMIT]);
    }

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
    for entry in ETC_ALLOWLIST {
        args.push(["--ro-bind-try", entry, entry]);
    }
    if let Some(resolv_conf) = &mounts.resolv_conf {
        args.push_os([
            "--ro-bind".into(),
            resolv_conf.clone().into(),
            "/etc/resolv.conf".into(),
        ]);
    }
    args.push(["--proc", "/proc", "--dev", "/dev"]);
    args.tmpfs("/tmp", limits.tmp_bytes);
    args.tmpfs(HOME_DIR, limits.home_bytes);
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
    // After the tmpfs mounts, so a bind below `/tmp` or `$HOME` is not hidden by them. One
    // the configuration check refuses (over a mount of the sandbox's own, or inside the
    // user's folders) is left out here too, whoever built the configuration.
    for extra in extra_ro_binds {
        if check_extra_ro_bind(extra).is_ok() {
            args.push_os([
                "--ro-bind-try".into(),
                extra.clone().into(),
                extra.clone().into(),
            ]);
        }
    }
    args.push(["--remount-ro", "/"]);
    args.push(["--chdir", &mounts.virtual_workdir]);
    args.0
}

/// The shell's own argument vector: a `bash` that first sets the hard limits and then `exec`s
/// a fresh `bash -c command`, which inherits them and cannot raise them. `quota_file_size`,
/// what the workspace quota leaves one file (see `quota::Budget::file_size`), lowers the file
/// size limit; 0 lets no file grow at all.
pub(crate) fn shell_argv(
    command: &str,
    limits: &SandboxLimits,
    network: bool,
    quota_file_size: Option<u64>,
) -> [String; 5] {
    let mut prelude = String::new();
    if network {
        prelude.push_str(&wait_for_network());
    }
    prelude.push_str(&limits_prelude(
        limits,
        quota_file_size,
        r#"exec /bin/bash -c "$1""#,
    ));
    [
        "/bin/bash".to_owned(),
        "-c".to_owned(),
        prelude,
        "ars-sandbox".to_owned(),
        command.to_owned(),
    ]
}

/// A process's own argument vector: like [`shell_argv`], a `bash` that sets the hard limits,
/// then `exec`s the program with its arguments (never through a shell's word splitting).
pub(crate) fn process_argv(
    request: &ProcessRequest,
    limits: &SandboxLimits,
    network: bool,
) -> Vec<String> {
    let mut prelude = String::new();
    if network {
        prelude.push_str(&wait_for_network());
    }
    prelude.push_str(&limits_prelude(limits, None, r#"exec "$@""#));
    let mut argv = vec![
        "/bin/bash".to_owned(),
        "-c".to_owned(),
        prelude,
        "ars-sandbox".to_owned(),
        request.program.clone(),
    ];
    argv.extend(request.args.iter().cloned());
    argv
}

/// Waits (at most two seconds) until slirp4netns has given the namespace its default route,
/// so the command's first connection does not race the interface coming up.
fn wait_for_network() -> String {
    format!(
        "for ((ars_i = 0; ars_i < 200; ars_i++)); do \
           while read -r ars_if ars_dst _; do \
             [[ $ars_if == {TAP_DEVICE} && $ars_dst == 00000000 ]] && break 2; \
           done < /proc/net/route; sleep 0.01; \
         done; unset ars_i ars_if ars_dst; "
    )
}

/// Seconds between the soft CPU limit (SIGXCPU) and the hard one (SIGKILL).
const CPU_GRACE_SECS: u64 = 2;

/// `ulimit -H -S …` for every configured limit (0 = none) and the quota's file size (0 = no
/// file may grow), then `then` (the `exec` of the command).
fn limits_prelude(limits: &SandboxLimits, quota_file_size: Option<u64>, then: &str) -> String {
    let mut flags = String::new();
    let mut flag = |letter: char, value: u64| {
        if value > 0 {
            flags.push_str(&format!(" -{letter} {value}"));
        }
    };
    flag('u', limits.processes);
    // bash counts address space and file size in KiB (1024-byte blocks).
    flag('v', limits.memory_bytes.div_ceil(1024));
    flag('n', limits.open_files);
    let configured = Some(limits.file_size_bytes.div_ceil(1024)).filter(|&kib| kib > 0);
    // Rounded down: the quota's bound is never exceeded by the rounding.
    let file_size = match (configured, quota_file_size.map(|bytes| bytes / 1024)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if let Some(kib) = file_size {
        flags.push_str(&format!(" -f {kib}"));
    }
    let mut apply = String::new();
    if !flags.is_empty() {
        apply.push_str(&format!("ulimit -H -S{flags} && "));
    }
    if limits.cpu_secs > 0 {
        // The soft limit sends SIGXCPU ("CPU time limit exceeded"); the hard one, a little
        // later, SIGKILL for a process that ignores it.
        let (soft, hard) = (limits.cpu_secs, limits.cpu_secs + CPU_GRACE_SECS);
        apply.push_str(&format!("ulimit -S -t {soft} && ulimit -H -t {hard} && "));
    }
    if !apply.is_empty() {
        apply.push_str(
            "true || { echo 'the sandbox limits could not be applied' >&2; exit 125; }; ",
        );
    }
    format!("{apply}{then}")
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

    /// A private tmpfs at `dest`, `bytes` large (0: the kernel's default, half the RAM).
    fn tmpfs(&mut self, dest: &str, bytes: u64) {
        if bytes > 0 {
            self.push_os(["--size".into(), bytes.to_string().into()]);
        }
        self.push(["--tmpfs", dest]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(allow_network: bool) -> Vec<String> {
        let mounts = ScopeMounts {
            user_data: "/data/users/u/user-data".into(),
            skills: "/data/users/u/skills".into(),
            virtual_workdir: "/home/gem/user-data/conversations/t".into(),
            resolv_conf: allow_network.then(|| "/data/sandbox/resolv.conf".into()),
        };
        bwrap_args(&mounts, &[], &SandboxLimits::default())
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
            &["--ro-bind", "/data/users/u/skills", "/home/gem/skills"]
        ));
        assert!(has_window(
            &args,
            &["--chdir", "/home/gem/user-data/conversations/t"]
        ));
        let argv = shell_argv("echo hi", &SandboxLimits::default(), false, None);
        assert!(argv.ends_with(&["ars-sandbox".into(), "echo hi".into()]));
        let prelude = &argv[2];
        assert!(
            prelude.starts_with(
                "ulimit -H -S -u 256 -v 2097152 -n 1024 -f 1048576 && \
                 ulimit -S -t 600 && ulimit -H -t 602 && true || {"
            ),
            "{prelude}"
        );
        assert!(prelude.ends_with(r#"exec /bin/bash -c "$1""#), "{prelude}");
        assert!(has_window(
            &args,
            &["--size", "268435456", "--tmpfs", "/tmp"]
        ));
    }

    #[test]
    fn the_quota_lowers_the_file_size_limit_down_to_zero() {
        let limits = SandboxLimits::default();
        let prelude = |cap| shell_argv("true", &limits, false, cap)[2].clone();
        assert!(prelude(Some(5 * 1024 + 1000)).contains(" -f 5 "));
        assert!(prelude(Some(0)).contains(" -f 0 "));
        assert!(prelude(Some(u64::MAX)).contains(" -f 1048576 "));
        let unlimited = SandboxLimits {
            file_size_bytes: 0,
            ..SandboxLimits::default()
        };
        assert!(!shell_argv("true", &unlimited, false, None)[2].contains(" -f "));
        assert!(shell_argv("true", &unlimited, false, Some(0))[2].contains(" -f 0 "));
    }

    #[test]
    fn extra_binds_come_after_the_tmpfs_mounts_and_refused_ones_not_at_all() {
        let mounts = ScopeMounts {
            user_data: "/data/users/u/user-data".into(),
            skills: "/data/users/u/skills".into(),
            virtual_workdir: "/home/gem/user-data/t".into(),
            resolv_conf: None,
        };
        let extra = ["/tmp/tools", "/home/gem/user-data/x", "/home/gem/bin"].map(PathBuf::from);
        let args: Vec<String> = bwrap_args(&mounts, &extra, &SandboxLimits::default())
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let at = |window: &[&str]| args.windows(window.len()).position(|w| w == window);
        let tmp = at(&["--tmpfs", "/tmp"]).unwrap();
        let home = at(&["--tmpfs", "/home/gem"]).unwrap();
        let tools = at(&["--ro-bind-try", "/tmp/tools", "/tmp/tools"]).unwrap();
        let bin = at(&["--ro-bind-try", "/home/gem/bin", "/home/gem/bin"]).unwrap();
        assert!(tools > tmp && tools > home && bin > home, "{args:?}");
        assert!(
            !args.iter().any(|a| a == "/home/gem/user-data/x"),
            "{args:?}"
        );
    }

    #[test]
    fn the_host_network_is_never_shared() {
        // Never the host's network namespace: with network, slirp4netns gives the command's
        // own namespace a way out (see `supervise`).
        assert!(!args(false).iter().any(|a| a == "--share-net"));
        assert!(!args(true).iter().any(|a| a == "--share-net"));
        assert!(!args(false).iter().any(|a| a == "/etc/resolv.conf"));
        assert!(has_window(
            &args(true),
            &["--ro-bind", "/data/sandbox/resolv.conf", "/etc/resolv.conf"]
        ));
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
