//! Virtual paths and the one function that maps them to host paths.
//!
//! The agent only ever sees the virtual layout of SPEC §6:
//!
//! | virtual path | host path | access |
//! |---|---|---|
//! | `/home/gem/user-data` | `<data>/users/<user_id>/user-data` | read-write |
//! | `/home/gem/user-data/<workdir_path>` | the same, below | read-write, the cwd |
//! | `/home/gem/user-data/agents/skills` | the same, below | read-write |
//! | `/home/gem/skills` | `<data>/skills` | read-only |
//!
//! [`Layout::resolve`] is the only way from a caller-supplied path to a host path. It works in
//! two steps: a purely lexical [`normalize`] (NUL bytes, lengths, `..`, which root) and then a
//! check against the real file system (symlinks must not lead out of the root). Host paths it
//! returns are canonical up to the deepest existing component, so later operations never follow
//! a symlink the check did not see.
//!
//! **Boundary:** a symlink swapped in by a concurrently running shell command between the check
//! and the use (a TOCTOU race) is not covered here; the isolated shell cannot see host paths,
//! so a link it plants can only point at paths that mean nothing outside the sandbox — and
//! those fail the prefix check.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ars_domain::UserId;

use crate::error::{SandboxError, display_path};
use crate::scope::Scope;

/// The user's workspace as the agent sees it.
pub const USER_DATA_ROOT: &str = "/home/gem/user-data";
/// The shared/built-in Skills projection as the agent sees it (read-only).
pub const SKILLS_ROOT: &str = "/home/gem/skills";
/// Where the user's personal Skills live, inside the workspace.
pub const PERSONAL_SKILLS_DIR: &str = "/home/gem/user-data/agents/skills";
/// The home directory of the isolated shell.
pub const HOME_DIR: &str = "/home/gem";
/// Longest accepted path, matching Linux `PATH_MAX`.
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted path component, matching Linux `NAME_MAX`.
pub const MAX_COMPONENT_BYTES: usize = 255;

/// Which virtual root a path lives under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Root {
    UserData,
    Skills,
}

impl Root {
    fn virtual_root(self) -> &'static str {
        match self {
            Root::UserData => USER_DATA_ROOT,
            Root::Skills => SKILLS_ROOT,
        }
    }
}

/// What the caller is about to do with the path; writes are refused under read-only roots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// A lexically normalised virtual path: a root and the components below it (no `.`, no `..`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VirtualPath {
    pub(crate) root: Root,
    pub(crate) rest: Vec<String>,
}

impl VirtualPath {
    /// The path as the agent sees it, e.g. `/home/gem/user-data/conversations/t/a.txt`.
    pub(crate) fn display(&self) -> String {
        let mut out = self.root.virtual_root().to_owned();
        for component in &self.rest {
            out.push('/');
            out.push_str(component);
        }
        out
    }
}

/// Lexical half of path resolution: validates `input` and normalises it against the scope.
///
/// Relative paths resolve from the workdir and may not `..` above it (the rest of the
/// workspace is reachable by its absolute virtual path). Absolute paths must start with one of
/// the virtual roots and may not `..` above that root.
pub(crate) fn normalize(scope: &Scope, input: &str) -> Result<VirtualPath, SandboxError> {
    let invalid = |reason: String| SandboxError::InvalidPath {
        path: display_path(input),
        reason,
    };
    if input.contains('\0') {
        return Err(invalid("it contains a NUL byte".into()));
    }
    if input.len() > MAX_PATH_BYTES {
        return Err(invalid(format!("it is longer than {MAX_PATH_BYTES} bytes")));
    }
    let parts: Vec<&str> = input
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if let Some(long) = parts.iter().find(|p| p.len() > MAX_COMPONENT_BYTES) {
        return Err(invalid(format!(
            "the component `{}` is longer than {MAX_COMPONENT_BYTES} bytes",
            display_path(long)
        )));
    }

    let (root, mut stack, rest, floor_name) = if input.starts_with('/') {
        let root = match parts.as_slice() {
            ["home", "gem", "user-data", ..] => Root::UserData,
            ["home", "gem", "skills", ..] => Root::Skills,
            _ => {
                return Err(SandboxError::OutsideScope {
                    path: display_path(input),
                    reason: format!(
                        "only {USER_DATA_ROOT} (your workspace), {SKILLS_ROOT} (shared Skills, \
                         read-only) and paths relative to the workdir {} are reachable",
                        scope.virtual_workdir()
                    ),
                });
            }
        };
        (
            root,
            Vec::new(),
            &parts[3..],
            root.virtual_root().to_owned(),
        )
    } else {
        let base: Vec<String> = scope.workdir_components().map(str::to_owned).collect();
        (Root::UserData, base, &parts[..], scope.virtual_workdir())
    };

    let floor = stack.len();
    for part in rest {
        if *part == ".." {
            if stack.len() == floor {
                let hint = if input.starts_with('/') {
                    String::new()
                } else {
                    format!(
                        "; use an absolute path under {USER_DATA_ROOT} to reach the rest of your workspace"
                    )
                };
                return Err(SandboxError::OutsideScope {
                    path: display_path(input),
                    reason: format!("`..` would climb out of {floor_name}{hint}"),
                });
            }
            stack.pop();
        } else {
            stack.push((*part).to_owned());
        }
    }
    Ok(VirtualPath { root, rest: stack })
}

/// A caller path resolved to a host path that was checked to stay inside its root.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    /// The normalised virtual path: what every result and error shows.
    pub(crate) virtual_path: String,
    /// The host path: canonical up to the deepest existing component.
    pub(crate) host: PathBuf,
    /// Whether the whole path existed at resolution time.
    pub(crate) exists: bool,
}

impl Resolved {
    /// The virtual path of `host_child`, a path found by walking below `self.host`.
    pub(crate) fn child_virtual(&self, host_child: &Path) -> String {
        let mut out = self.virtual_path.clone();
        if let Ok(relative) = host_child.strip_prefix(&self.host) {
            for component in relative.components() {
                out.push('/');
                out.push_str(&component.as_os_str().to_string_lossy());
            }
        }
        out
    }
}

/// Where things live under the data dir.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    data_dir: PathBuf,
}

impl Layout {
    pub(crate) fn new(data_dir: PathBuf) -> Self {
        Self { data_dir }
    }

    /// `<data>/users/<user_id>/user-data`: the user's workspace.
    pub(crate) fn user_data(&self, user: UserId) -> PathBuf {
        self.data_dir
            .join("users")
            .join(user.to_string())
            .join("user-data")
    }

    /// `<data>/skills`: the shared Skills projection.
    pub(crate) fn skills(&self) -> PathBuf {
        self.data_dir.join("skills")
    }

    fn root_dir(&self, user: UserId, root: Root) -> PathBuf {
        match root {
            Root::UserData => self.user_data(user),
            Root::Skills => self.skills(),
        }
    }

    /// Canonical host directory of a virtual root; fails if the scope was never prepared.
    pub(crate) fn canonical_root(&self, user: UserId, root: Root) -> Result<PathBuf, SandboxError> {
        fs::canonicalize(self.root_dir(user, root)).map_err(|err| SandboxError::Io {
            path: root.virtual_root().to_owned(),
            message: if err.kind() == io::ErrorKind::NotFound {
                "the sandbox workspace has not been prepared".to_owned()
            } else {
                err.to_string()
            },
        })
    }

    /// Resolves a caller-supplied path for `access`, refusing every way out of the scope.
    pub(crate) fn resolve(
        &self,
        scope: &Scope,
        input: &str,
        access: Access,
    ) -> Result<Resolved, SandboxError> {
        scope.validate()?;
        let vpath = normalize(scope, input)?;
        let shown = vpath.display();
        if access == Access::Write && vpath.root == Root::Skills {
            return Err(SandboxError::ReadOnly {
                path: shown,
                reason: format!(
                    "{SKILLS_ROOT} is the shared Skills projection; put personal Skills under \
                     {PERSONAL_SKILLS_DIR}"
                ),
            });
        }
        let root = self.canonical_root(scope.user_id, vpath.root)?;

        // Find the deepest component that exists (as anything, a dangling link included).
        let mut probe = root.clone();
        probe.extend(&vpath.rest);
        let mut existing = vpath.rest.len();
        while existing > 0 {
            match fs::symlink_metadata(&probe) {
                Ok(_) => break,
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    existing -= 1;
                    probe.pop();
                }
                Err(err) => return Err(SandboxError::io(&shown, &err)),
            }
        }

        let canonical = fs::canonicalize(&probe).map_err(|_| SandboxError::OutsideScope {
            path: shown.clone(),
            reason: "it goes through a symbolic link that does not resolve (dangling or a loop); \
                     refusing to follow it"
                .to_owned(),
        })?;
        if !canonical.starts_with(&root) {
            return Err(SandboxError::OutsideScope {
                path: shown,
                reason: format!(
                    "it goes through a symbolic link that points outside {}",
                    vpath.root.virtual_root()
                ),
            });
        }
        let mut host = canonical;
        host.extend(&vpath.rest[existing..]);
        Ok(Resolved {
            virtual_path: shown,
            host,
            exists: existing == vpath.rest.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        Scope::new(UserId::new(), "run", "conversations/t1").unwrap()
    }

    fn check(input: &str, expected: Result<&str, &str>) {
        let got = normalize(&scope(), input);
        match (got, expected) {
            (Ok(path), Ok(want)) => assert_eq!(path.display(), want, "{input:?}"),
            (Err(err), Err(kind)) => {
                let debug = format!("{err:?}");
                assert!(debug.starts_with(kind), "{input:?}: {debug}");
            }
            (got, want) => panic!("{input:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn relative_paths_resolve_from_the_workdir() {
        let wd = "/home/gem/user-data/conversations/t1";
        check("", Ok(wd));
        check(".", Ok(wd));
        check("a.txt", Ok(&format!("{wd}/a.txt")));
        check("./src//lib.rs", Ok(&format!("{wd}/src/lib.rs")));
        check("src/../b", Ok(&format!("{wd}/b")));
    }

    #[test]
    fn absolute_virtual_paths_reach_their_roots() {
        check("/home/gem/user-data", Ok("/home/gem/user-data"));
        check("/home/gem/user-data/x", Ok("/home/gem/user-data/x"));
        check(
            "/home/gem/user-data/agents/skills/s/SKILL.md",
            Ok("/home/gem/user-data/agents/skills/s/SKILL.md"),
        );
        check(
            "/home/gem/skills/pdf/SKILL.md",
            Ok("/home/gem/skills/pdf/SKILL.md"),
        );
        check("/home/gem/user-data/a/../b", Ok("/home/gem/user-data/b"));
    }

    #[test]
    fn dot_dot_may_not_leave_the_workdir_or_the_root() {
        check("..", Err("OutsideScope"));
        check("../other", Err("OutsideScope"));
        check("a/../../x", Err("OutsideScope"));
        check("/home/gem/user-data/..", Err("OutsideScope"));
        check("/home/gem/user-data/../skills", Err("OutsideScope"));
        check("/home/gem/skills/../../../etc/passwd", Err("OutsideScope"));
        check("/home/gem/../gem/user-data", Err("OutsideScope"));
    }

    #[test]
    fn foreign_absolute_paths_are_refused() {
        for path in [
            "/",
            "/etc/passwd",
            "/home/gem",
            "/home/gem/other",
            "/tmp/x",
            "/home",
        ] {
            check(path, Err("OutsideScope"));
        }
    }

    #[test]
    fn malformed_paths_are_refused() {
        check("a\0b", Err("InvalidPath"));
        check(&"a".repeat(256), Err("InvalidPath"));
        check(&"ab/".repeat(1400), Err("InvalidPath"));
        check(
            &"a".repeat(255),
            Ok(&format!(
                "{}/{}",
                scope().virtual_workdir(),
                "a".repeat(255)
            )),
        );
    }

    #[test]
    fn writes_under_skills_are_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().to_owned());
        let err = layout
            .resolve(&scope(), "/home/gem/skills/x", Access::Write)
            .unwrap_err();
        assert!(matches!(err, SandboxError::ReadOnly { .. }), "{err:?}");
    }
}
