//! Control groups for sandboxed commands: one cgroup per command, holding its whole process
//! tree to a process count and a memory size.
//!
//! rlimits alone cannot do that: `RLIMIT_NPROC` is not enforced for root, and `RLIMIT_AS` is
//! per process. So where the server may create cgroups it does — cgroup v2 when its controllers
//! `pids` and `memory` are delegated to the server's cgroup, else the v1 `pids` and `memory`
//! hierarchies — under `<the server's cgroup>/ars-sandbox/<command>`. The command enters its
//! cgroup before `bwrap` starts (a tiny `/bin/sh` writes its own pid and then `exec`s), so no
//! process of it is ever outside. Where none can be created, the server logs that the
//! process limit rests on rlimits alone.
//!
//! Each command's cgroup is named after the server that made it (`cmd-<ns>-<pid>-<start>-<id>`:
//! its pid namespace, pid and start time, so a recycled pid is not mistaken for the owner, and
//! a server in another pid namespace sharing the hierarchy is never judged by our pids). When a server
//! starts, [`Cgroups::detect`] reaps the cgroups whose owner is no longer alive: a server that
//! was killed left them, and anything still in them is a command that outlived its server.
//! Cgroups of a live server, of another pid namespace, or without an owner in their name (as
//! older servers made them) are never touched, so servers
//! sharing one cgroup do not kill each other's commands.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::SandboxLimits;

/// The name of the cgroup under the server's own that holds every command's cgroup.
const PARENT: &str = "ars-sandbox";

/// Which cgroup interface this server uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupKind {
    /// The unified hierarchy, with `pids` and `memory` delegated.
    V2,
    /// The legacy `pids` and `memory` hierarchies.
    V1,
}

/// Where command cgroups are made, found once at start.
#[derive(Clone, Debug)]
pub(crate) struct Cgroups {
    kind: CgroupKind,
    /// The `ars-sandbox` parent in each hierarchy used (one for v2; `pids`, `memory` for v1).
    parents: Vec<Hierarchy>,
}

/// One hierarchy's parent directory and the controller it limits (v1) or `None` (v2).
#[derive(Clone, Debug)]
struct Hierarchy {
    parent: PathBuf,
    controller: Option<Controller>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Controller {
    Pids,
    Memory,
}

impl Cgroups {
    /// Finds a usable cgroup interface for this process, preferring v2. `None` when the server
    /// may not create cgroups (not delegated, read-only, unprivileged).
    pub(crate) fn detect() -> Option<Self> {
        let own = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let cgroups = detect_v2(&own, &mounts).or_else(|| detect_v1(&own, &mounts))?;
        cgroups.reap_orphans();
        Some(cgroups)
    }

    /// Kills and removes the command cgroups of servers that are no longer alive (see the
    /// module docs), logging what was reaped.
    pub(crate) fn reap_orphans(&self) {
        for hierarchy in &self.parents {
            let Ok(entries) = fs::read_dir(&hierarchy.parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(owner) = name.to_str().and_then(Owner::of_cgroup) else {
                    continue;
                };
                if owner.is_alive() {
                    continue;
                }
                let dir = entry.path();
                let killed = kill_members(&dir);
                remove(std::slice::from_ref(&dir));
                tracing::info!(
                    cgroup = %dir.display(),
                    server_pid = owner.pid,
                    killed = ?killed,
                    "reaped a command cgroup left by a server that died"
                );
            }
        }
    }

    /// The interface in use.
    pub(crate) fn kind(&self) -> CgroupKind {
        self.kind
    }

    /// Creates the cgroup of one command with `limits` applied.
    pub(crate) fn create(&self, limits: &SandboxLimits) -> io::Result<CommandCgroup> {
        let id = uuid::Uuid::new_v4().simple();
        // Without an owner (no `/proc` to read it from) the cgroup is simply never reaped.
        let name = match Owner::current() {
            Some(owner) => format!("{}-{id}", owner.prefix()),
            None => format!("cmd-{id}"),
        };
        let mut group = CommandCgroup {
            dirs: Vec::new(),
            kind: self.kind,
        };
        for hierarchy in &self.parents {
            let dir = hierarchy.parent.join(&name);
            fs::create_dir(&dir)?;
            group.dirs.push(dir.clone());
            let wants = |c| hierarchy.controller.is_none() || hierarchy.controller == Some(c);
            if wants(Controller::Pids) && limits.processes > 0 {
                fs::write(dir.join("pids.max"), limits.processes.to_string())?;
            }
            if wants(Controller::Memory) && limits.memory_bytes > 0 {
                let bytes = limits.memory_bytes.to_string();
                match self.kind {
                    CgroupKind::V2 => {
                        fs::write(dir.join("memory.max"), &bytes)?;
                        // No swap either, where the kernel has it; absent file is fine.
                        let _ = fs::write(dir.join("memory.swap.max"), "0");
                    }
                    CgroupKind::V1 => {
                        fs::write(dir.join("memory.limit_in_bytes"), &bytes)?;
                        let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), &bytes);
                    }
                }
            }
        }
        Ok(group)
    }
}

/// The cgroup(s) of one running command; removed (after killing what is left in them) when
/// dropped.
#[derive(Debug)]
pub(crate) struct CommandCgroup {
    dirs: Vec<PathBuf>,
    kind: CgroupKind,
}

impl CommandCgroup {
    /// The `cgroup.procs` files the command's first process must write its pid into.
    pub(crate) fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Whether the memory limit killed a process of the command.
    pub(crate) fn oom_killed(&self) -> bool {
        self.dirs.iter().any(|dir| {
            let events = match self.kind {
                CgroupKind::V2 => fs::read_to_string(dir.join("memory.events")),
                CgroupKind::V1 => fs::read_to_string(dir.join("memory.oom_control")),
            };
            events.is_ok_and(|text| {
                text.lines().any(|line| {
                    line.strip_prefix("oom_kill ")
                        .is_some_and(|n| n.trim().parse::<u64>().unwrap_or(0) > 0)
                })
            })
        })
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        let dirs = std::mem::take(&mut self.dirs);
        // A cgroup can be removed only once its processes are gone, which after the kill is a
        // matter of milliseconds; retry off the caller's thread.
        std::thread::spawn(move || remove(&dirs));
    }
}

/// The server a command cgroup belongs to: its pid namespace (the inode of
/// `/proc/<pid>/ns/pid`), its pid there and the pid's start time (clock ticks after boot,
/// `/proc/<pid>/stat` field 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Owner {
    ns: u64,
    pid: u32,
    start: u64,
}

impl Owner {
    /// This process.
    fn current() -> Option<Self> {
        let pid = std::process::id();
        Some(Self {
            ns: pid_namespace()?,
            pid,
            start: start_time(pid)?,
        })
    }

    /// The start of the names of the cgroups this owner makes.
    fn prefix(self) -> String {
        format!("cmd-{}-{}-{}", self.ns, self.pid, self.start)
    }

    /// The owner named in a command cgroup's name, `cmd-<ns>-<pid>-<start>-<id>`; `None` for
    /// any other name (including the owner-less `cmd-<id>` of older servers).
    fn of_cgroup(name: &str) -> Option<Self> {
        let mut parts = name.strip_prefix("cmd-")?.splitn(4, '-');
        let ns = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let start = parts.next()?.parse().ok()?;
        parts.next()?;
        Some(Self { ns, pid, start })
    }

    /// Whether the owner may still run: it does (its pid exists with the same start time), or
    /// it is in another pid namespace, where this process cannot tell.
    fn is_alive(self) -> bool {
        pid_namespace() != Some(self.ns)
            || start_time(self.pid).is_some_and(|start| start == self.start)
    }
}

/// This process's pid namespace: the inode in the `pid:[<inode>]` link `/proc/self/ns/pid`.
fn pid_namespace() -> Option<u64> {
    let link = fs::read_link("/proc/self/ns/pid").ok()?;
    link.to_str()?
        .strip_prefix("pid:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// A process's start time from `/proc/<pid>/stat`; `None` when there is no such process.
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces; count after it.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// SIGKILLs every process in the cgroup `dir` until it is empty (a process may fork while it
/// is being killed, so a few rounds); answers the pids killed.
fn kill_members(dir: &Path) -> Vec<i32> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let mut killed = Vec::new();
    // v2 kills the whole cgroup at once; v1 has no such file and is walked below.
    let _ = fs::write(dir.join("cgroup.kill"), "1");
    for _ in 0..50 {
        let Ok(procs) = fs::read_to_string(dir.join("cgroup.procs")) else {
            break;
        };
        let pids: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() && !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

/// Kills what is left in `dirs` (a process that left the command's process group, e.g. by
/// `setsid`) and removes them, retrying briefly.
fn remove(dirs: &[PathBuf]) {
    for dir in dirs {
        kill_members(dir);
        for attempt in 0..100 {
            match fs::remove_dir(dir) {
                Ok(()) => break,
                Err(err) if err.kind() == io::ErrorKind::NotFound => break,
                Err(_) if attempt < 99 => std::thread::sleep(Duration::from_millis(20)),
                Err(err) => {
                    tracing::warn!(dir = %dir.display(), %err, "cannot remove a command's cgroup");
                }
            }
        }
    }
}

/// The shell snippet that puts itself into each `cgroup.procs` given before `--` and then
/// `exec`s the rest of its arguments, so the command never runs outside its cgroup.
pub(crate) const ENTER_SCRIPT: &str =
    r#"while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@""#;

/// cgroup v2: the server's own cgroup must let `pids` and `memory` be enabled below it.
fn detect_v2(own: &str, mounts: &str) -> Option<Cgroups> {
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mount = mount_point(mounts, "cgroup2", None)?;
    let own_dir = join_cgroup(&mount, path);
    let available = fs::read_to_string(own_dir.join("cgroup.controllers")).ok()?;
    let has = |c: &str| available.split_whitespace().any(|x| x == c);
    if !has("pids") || !has("memory") {
        return None;
    }
    // Enabling controllers for children needs the server's cgroup to be delegated to it (and,
    // below the root, to hold no processes itself); if the write fails, v2 is not ours to use.
    let parent = own_dir.join(PARENT);
    let enable = |dir: &Path| fs::write(dir.join("cgroup.subtree_control"), "+pids +memory");
    enable(&own_dir).ok()?;
    ensure_dir(&parent).ok()?;
    enable(&parent).ok()?;
    Some(Cgroups {
        kind: CgroupKind::V2,
        parents: vec![Hierarchy {
            parent,
            controller: None,
        }],
    })
}

/// cgroup v1: the `pids` hierarchy is required (it is what bounds a fork bomb); `memory` is
/// used when it is there too.
fn detect_v1(own: &str, mounts: &str) -> Option<Cgroups> {
    let mut parents = Vec::new();
    for (name, controller) in [("pids", Controller::Pids), ("memory", Controller::Memory)] {
        let found = own.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            controllers
                .split(',')
                .any(|c| c == name)
                .then(|| path.to_owned())
        });
        let Some(path) = found else {
            continue;
        };
        let Some(mount) = mount_point(mounts, "cgroup", Some(name)) else {
            continue;
        };
        let parent = join_cgroup(&mount, &path).join(PARENT);
        if ensure_dir(&parent).is_ok() {
            parents.push(Hierarchy {
                parent,
                controller: Some(controller),
            });
        } else if controller == Controller::Pids {
            return None;
        }
    }
    parents
        .iter()
        .any(|h| h.controller == Some(Controller::Pids))
        .then_some(Cgroups {
            kind: CgroupKind::V1,
            parents,
        })
}

/// The mount point of a cgroup file system from `/proc/self/mountinfo`: type `fstype` and, for
/// v1, the controller among its super options.
fn mount_point(mountinfo: &str, fstype: &str, controller: Option<&str>) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let mut after = after.split_whitespace();
        let (kind, _source, options) = (after.next()?, after.next()?, after.next()?);
        if kind != fstype {
            return None;
        }
        if let Some(controller) = controller
            && !options.split(',').any(|o| o == controller)
        {
            return None;
        }
        before.split_whitespace().nth(4).map(PathBuf::from)
    })
}

fn join_cgroup(mount: &Path, path: &str) -> PathBuf {
    mount.join(path.trim_start_matches('/'))
}

fn ensure_dir(dir: &Path) -> io::Result<()> {
    match fs::create_dir(dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn owners_are_read_from_cgroup_names() {
        assert_eq!(
            Owner::of_cgroup("cmd-4026531836-42-1234-0123abcd"),
            Some(Owner {
                ns: 4026531836,
                pid: 42,
                start: 1234
            })
        );
        // Older servers' names carry no owner and are never reaped.
        assert_eq!(
            Owner::of_cgroup("cmd-0123456789abcdef0123456789abcdef"),
            None
        );
        assert_eq!(Owner::of_cgroup("other"), None);
        let me = Owner::current().unwrap();
        assert!(me.is_alive());
        assert_eq!(
            Owner::of_cgroup(&format!("{}-0123abcd", me.prefix())),
            Some(me)
        );
        // A pid of another namespace is not judged by this one's processes.
        let foreign = Owner {
            ns: me.ns + 1,
            pid: u32::MAX,
            start: 1,
        };
        assert!(foreign.is_alive());
    }

    /// Where this process may create cgroups (root on a cgroup host): a command left in the
    /// cgroup of a server that died is killed and its cgroup removed at the next start; a live
    /// server's command cgroup is left alone.
    #[test]
    fn the_cgroups_of_a_dead_server_are_reaped_at_start() {
        let Some(cgroups) = Cgroups::detect() else {
            return; // No cgroups to make here, so none can be left behind.
        };
        // A server that died: a process that has exited, known by its pid and start time.
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = Owner {
            ns: pid_namespace().unwrap(),
            pid: gone.id(),
            start: start_time(gone.id()).unwrap(),
        };
        gone.wait().unwrap();
        let mut orphan = std::process::Command::new("sleep")
            .arg("300")
            .spawn()
            .unwrap();
        let live = Owner::current().unwrap();
        let mut dirs = Vec::new();
        for (owner, tag) in [(dead, "dead"), (live, "live")] {
            for hierarchy in &cgroups.parents {
                let dir = hierarchy
                    .parent
                    .join(format!("{}-test{tag}", owner.prefix()));
                fs::create_dir(&dir).unwrap();
                if tag == "dead" {
                    fs::write(dir.join("cgroup.procs"), orphan.id().to_string()).unwrap();
                }
                dirs.push((tag, dir));
            }
        }

        cgroups.reap_orphans();

        let status = orphan.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "the orphaned command was killed");
        for (tag, dir) in &dirs {
            assert_eq!(dir.exists(), *tag == "live", "{}", dir.display());
        }
        for (_, dir) in dirs {
            let _ = fs::remove_dir(dir);
        }
    }

    #[test]
    fn mount_points_are_found_by_type_and_controller() {
        assert_eq!(
            mount_point(MOUNTS, "cgroup", Some("pids")),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            mount_point(MOUNTS, "cgroup", Some("memory")),
            Some(PathBuf::from("/sys/fs/cgroup/memory"))
        );
        assert_eq!(
            mount_point(MOUNTS, "cgroup2", None),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(mount_point(MOUNTS, "cgroup", Some("cpu")), None);
    }

    #[test]
    fn cgroup_paths_join_below_the_mount() {
        assert_eq!(
            join_cgroup(Path::new("/sys/fs/cgroup/memory"), "/a/b"),
            PathBuf::from("/sys/fs/cgroup/memory/a/b")
        );
        assert_eq!(
            join_cgroup(Path::new("/sys/fs/cgroup"), "/"),
            PathBuf::from("/sys/fs/cgroup")
        );
    }
}
