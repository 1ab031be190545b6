//! Virtual paths and the one function that turns them into a root's handle and a rest.
//!
//! The agent only ever sees the virtual layout of SPEC §6:
//!
//! | virtual path | host path | access |
//! |---|---|---|
//! | `/home/gem/user-data` | `<data>/users/<user_id>/user-data` | read-write |
//! | `/home/gem/user-data/<workdir_path>` | the same, below | read-write, the cwd |
//! | `/home/gem/user-data/agents/skills` | the same, below | read-write |
//! | `/home/gem/skills` | `<data>/users/<user_id>/skills` | read-only |
//!
//! `/home/gem/skills` is the *user's* Skills projection: built-in skills and the shared skills
//! visible to that user, written by [`crate::Sandbox::project_skills`]. It sits beside the
//! workspace, not in it, so it counts against no quota and nothing in the workspace reaches
//! it; no other user's projection is ever opened or mounted for a scope. Its manifest
//! (`skills.manifest`) and the temp dirs of a projection live one level up, in
//! `<data>/users/<user_id>`, which no scope can see.
//!
//! [`Layout::resolve`] is the only way from a caller-supplied path to something the file tools
//! can act on. It is purely lexical ([`normalize`]: NUL bytes, lengths, `..`, which root) and
//! returns a directory *handle* of the root plus the relative rest. Every operation then
//! resolves that rest through the handle at the moment of use (`cap-std`: `openat2` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, or its race-free fallback), so no path is ever
//! checked first and used later. Symlinks that stay inside the root are followed; any way out
//! (an absolute target, `..` past the root, a magic link) fails with the same
//! [`SandboxError::OutsideScope`], whatever the target is.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use ars_domain::UserId;
use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::error::{SandboxError, display_path};
use crate::layout::{
    MAX_COMPONENT_BYTES, MAX_PATH_BYTES, PERSONAL_SKILLS_DIR, SKILLS_ROOT, USER_DATA_ROOT,
};
use crate::scope::Scope;

/// The projection's directory name inside [`Layout::user_home`].
pub(crate) const SKILLS_DIR_NAME: &str = "skills";

/// Which virtual root a path lives under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Root {
    UserData,
    Skills,
}

impl Root {
    pub(crate) fn virtual_root(self) -> &'static str {
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
                        "only {USER_DATA_ROOT} (your workspace), {SKILLS_ROOT} (your Skills, \
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

/// A caller path resolved against a directory handle of its root.
///
/// There is no host path in here on purpose: every operation on a `Resolved` goes through
/// [`Resolved::root`] with the relative [`Resolved::rel`], so the kernel resolves the path at
/// the moment of use (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, via
/// `cap-std`). A symlink swapped in by a concurrently running shell command can therefore
/// redirect the operation only to somewhere else inside the same root, never outside it.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The normalised virtual path: what every result and error shows.
    pub(crate) virtual_path: String,
    /// The handle of the virtual root (the user's workspace or Skills projection).
    pub(crate) root: Dir,
    /// The path below the root, `.` for the root itself. Never absolute, never `..`.
    pub(crate) rel: PathBuf,
}

impl Resolved {
    /// The virtual path of `name`, an entry found below this path.
    pub(crate) fn child_virtual(&self, relative: &Path) -> String {
        join_virtual(&self.virtual_path, relative)
    }

    /// Maps an I/O error on this path to the sandbox error the model reads.
    pub(crate) fn err(&self, err: &io::Error) -> SandboxError {
        SandboxError::io(&self.virtual_path, err)
    }
}

/// `base` (a virtual path) followed by the components of `relative`.
pub(crate) fn join_virtual(base: &str, relative: &Path) -> String {
    let mut out = base.to_owned();
    for component in relative.components() {
        if let std::path::Component::Normal(part) = component {
            out.push('/');
            out.push_str(&part.to_string_lossy());
        }
    }
    out
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

    /// `<data>/users/<user_id>`: what the server keeps for a user. No scope sees it; its
    /// children `user-data` and `skills` are the user's two virtual roots.
    pub(crate) fn user_home(&self, user: UserId) -> PathBuf {
        self.data_dir.join("users").join(user.to_string())
    }

    /// `<data>/users/<user_id>/user-data`: the user's workspace.
    pub(crate) fn user_data(&self, user: UserId) -> PathBuf {
        self.user_home(user).join("user-data")
    }

    /// Opens (creating it first when `create`) the handle of [`Layout::user_home`]; `None`
    /// when it does not exist and was not to be created.
    pub(crate) fn open_user_home(
        &self,
        user: UserId,
        create: bool,
    ) -> Result<Option<Dir>, SandboxError> {
        let path = self.user_home(user);
        if create {
            fs::create_dir_all(&path).map_err(|err| unprepared(Root::Skills, &err))?;
        }
        match Dir::open_ambient_dir(path, ambient_authority()) {
            Ok(dir) => Ok(Some(dir)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(unprepared(Root::Skills, &err)),
        }
    }

    /// Writes (when it differs) and returns `<data>/sandbox/resolv.conf`, the resolver
    /// configuration shown to commands with network.
    pub(crate) fn resolv_conf(&self, content: &str) -> io::Result<PathBuf> {
        let path = self.data_dir.join("sandbox").join("resolv.conf");
        if fs::read_to_string(&path).ok().as_deref() != Some(content) {
            fs::create_dir_all(self.data_dir.join("sandbox"))?;
            fs::write(&path, content)?;
        }
        Ok(path)
    }

    /// `<data>/users/<user_id>/skills`: the user's Skills projection.
    pub(crate) fn skills(&self, user: UserId) -> PathBuf {
        self.user_home(user).join(SKILLS_DIR_NAME)
    }

    fn root_dir(&self, user: UserId, root: Root) -> PathBuf {
        match root {
            Root::UserData => self.user_data(user),
            Root::Skills => self.skills(user),
        }
    }

    /// Canonical host directory of a virtual root, for bind mounts; fails if the scope was
    /// never prepared. The roots themselves are not reachable from inside the sandbox (the
    /// shell sees them only as mount points), so their host paths cannot be raced.
    pub(crate) fn canonical_root(&self, user: UserId, root: Root) -> Result<PathBuf, SandboxError> {
        fs::canonicalize(self.root_dir(user, root)).map_err(|err| unprepared(root, &err))
    }

    /// Opens the handle of a virtual root. A workspace its own commands locked (`chmod 000`,
    /// which stops a server that is not root from opening it) gets its owner's access back:
    /// the quota must see what it holds. Its host path is safe to use here: it is a mount
    /// point to the commands, which can change its mode but never replace it.
    pub(crate) fn open_root(&self, user: UserId, root: Root) -> Result<Dir, SandboxError> {
        let path = self.root_dir(user, root);
        let open = || Dir::open_ambient_dir(&path, ambient_authority());
        match open() {
            Err(err) if root == Root::UserData && err.kind() == io::ErrorKind::PermissionDenied => {
                use std::os::unix::fs::PermissionsExt;
                let mode = fs::metadata(&path)
                    .map_err(|e| unprepared(root, &e))?
                    .permissions()
                    .mode();
                fs::set_permissions(&path, fs::Permissions::from_mode((mode & 0o7777) | 0o700))
                    .map_err(|e| unprepared(root, &e))?;
                open()
            }
            opened => opened,
        }
        .map_err(|err| unprepared(root, &err))
    }

    /// Resolves a caller-supplied path for `access`: validates it lexically, refuses writes
    /// under read-only roots and opens the root's handle. Nothing below the root is looked
    /// at here; the operation that uses the result resolves the rest through the handle.
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
                    "{SKILLS_ROOT} is your Skills projection (built-in and shared skills); put \
                     personal Skills under {PERSONAL_SKILLS_DIR}"
                ),
            });
        }
        // The kernel takes at most `PATH_MAX - 1` bytes below the root's handle; a relative path
        // short enough as given may pass that once the workdir is put in front of it.
        let rel_len = vpath.rest.iter().map(|c| c.len() + 1).sum::<usize>();
        if rel_len > MAX_PATH_BYTES {
            return Err(SandboxError::InvalidPath {
                path: display_path(input),
                reason: format!(
                    "it is longer than {MAX_PATH_BYTES} bytes below {}",
                    vpath.root.virtual_root()
                ),
            });
        }
        let root = match self.open_root(scope.user_id, vpath.root) {
            Ok(root) => root,
            // A root not made yet (its scope is prepared by a run's first tool call) holds
            // nothing to read.
            Err(_)
                if access == Access::Read && !self.root_dir(scope.user_id, vpath.root).exists() =>
            {
                return Err(SandboxError::NotFound { path: shown });
            }
            Err(err) => return Err(err),
        };
        let rel = if vpath.rest.is_empty() {
            PathBuf::from(".")
        } else {
            vpath.rest.iter().collect()
        };
        Ok(Resolved {
            virtual_path: shown,
            root,
            rel,
        })
    }
}

/// The error for a virtual root that cannot be opened.
fn unprepared(root: Root, err: &io::Error) -> SandboxError {
    SandboxError::Io {
        path: root.virtual_root().to_owned(),
        message: if err.kind() == io::ErrorKind::NotFound {
            "the sandbox workspace has not been prepared".to_owned()
        } else {
            err.to_string()
        },
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

    #[test]
    fn a_relative_path_too_long_below_the_workdir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().to_owned());
        // Within the limit as given, over it with `conversations/t1/` in front.
        let input = "a/".repeat(2040);
        assert!(input.len() <= MAX_PATH_BYTES);
        let err = layout.resolve(&scope(), &input, Access::Write).unwrap_err();
        assert!(matches!(err, SandboxError::InvalidPath { .. }), "{err:?}");
    }
}
