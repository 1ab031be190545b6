//! Walking a directory tree by handle, iteratively.
//!
//! The trees walked here are written by agents, so they may be arbitrarily deep (a shell loop
//! makes 100,000 nested folders in seconds). The walk therefore never recurses: it keeps an
//! explicit stack of directories, each with the entries it has yet to visit, and its memory is
//! bounded by the entries of the directories on the way down. It also never holds one open
//! descriptor per level: only the deepest [`MAX_OPEN_DIRS`] levels keep their handles, and a
//! shallower directory is reopened when the walk climbs back into it.
//!
//! Every directory is opened relative to its parent's handle without following symlinks
//! (`O_NOFOLLOW`), so a link swapped in mid-walk is skipped, never followed out of the tree.
//! A directory whose handle was closed is reopened through the `..` of the child the walk just
//! left, and used only if it is the very directory (device and inode) the walk was in before;
//! if it is not (the tree was moved meanwhile), it is looked up again from the walk's base by
//! name, level by level with `O_NOFOLLOW`, each level checked the same way. What cannot be
//! found again is left out and the walk says so ([`Walked::incomplete`]).

use std::ffi::{OsStr, OsString};
use std::io;
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, FileType, MetadataExt};
use rustix::fs::{Mode, OFlags};

use super::unlock::{unlock_entry, unlock_open};

/// Directory handles one walk keeps open at most (besides its base): the deepest levels.
const MAX_OPEN_DIRS: usize = 32;

/// How many times one walk looks a directory up again from its base after the tree moved
/// under it; past that, what moved is left out. Each look-up costs one `open` per level, so
/// the bound keeps a walk linear however a running command shuffles the tree.
const MAX_LOOKUPS: usize = 8;

/// Levels a search (`glob`, `grep`) descends; deeper entries are left out and the search says
/// it was cut short. Paths that deep are tens of kilobytes long, and matching each one would
/// make the search quadratic in the depth.
const SEARCH_DEPTH: usize = 256;

/// What a walk visits and in which order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Walk {
    /// Leave out what `.git` directories hold (they are still visited themselves).
    skip_git: bool,
    /// Levels visited: 1 is the base's own entries.
    levels: usize,
    /// Visit each directory's entries in order: by name, or directories first for a tree.
    /// An unordered walk visits what is not a directory as it reads the directory, so its
    /// memory holds the directories on the way only, however many files one directory holds.
    ordered: bool,
    /// Directories first, then by name (for an ordered walk).
    dirs_first: bool,
    /// Give the owner access back to a folder a command locked (see [`super::unlock`]): for
    /// the walks that must see everything.
    unlock: bool,
}

impl Walk {
    /// Everything, at any depth, in no particular order (but each directory's entries before
    /// what its subdirectories hold): for measuring, removing and reading a tree.
    pub(crate) const ALL: Walk = Walk {
        skip_git: false,
        levels: usize::MAX,
        ordered: false,
        dirs_first: false,
        unlock: true,
    };

    /// A search: `.git` left out, [`SEARCH_DEPTH`] levels, by name.
    pub(crate) const SEARCH: Walk = Walk {
        skip_git: true,
        levels: SEARCH_DEPTH,
        ordered: true,
        dirs_first: false,
        unlock: false,
    };

    /// The file browser's tree: `levels` levels, directories first.
    pub(crate) fn tree(levels: usize) -> Walk {
        Walk {
            skip_git: false,
            levels,
            ordered: true,
            dirs_first: true,
            unlock: false,
        }
    }
}

/// One entry the walk found.
pub(crate) struct Entry<'a> {
    /// The directory the entry is in.
    pub(crate) dir: &'a Dir,
    /// Its name in `dir`.
    pub(crate) name: &'a OsStr,
    /// Its path relative to the walk's base.
    pub(crate) path: &'a Path,
    /// Its type, never following a symlink.
    pub(crate) file_type: FileType,
}

/// What a walk calls.
pub(crate) trait Visitor {
    /// Called for every entry, before what a directory holds (pre-order).
    fn visit(&mut self, entry: Entry<'_>) -> ControlFlow<()>;

    /// Called once the walk has been through the directory `name` of `parent` and all it
    /// holds (post-order), with `parent`'s handle.
    fn leave(&mut self, _parent: &Dir, _name: &OsStr) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }

    /// Called when the directory at `path` could not be opened, listed or found again, so
    /// what it holds is left out.
    fn failed(&mut self, _path: &Path, _err: &io::Error) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// How a walk ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Walked {
    /// A directory on the last level visited held entries that were left out.
    pub(crate) cut: bool,
    /// A directory could not be opened, listed or found again (see [`Visitor::failed`]).
    pub(crate) incomplete: bool,
    /// The visitor stopped the walk.
    pub(crate) stopped: bool,
}

/// Walks below `base` depth first, calling `visit` for every entry (see [`walk_with`]).
pub(crate) fn walk(
    base: &Dir,
    mode: Walk,
    visit: &mut dyn FnMut(Entry<'_>) -> ControlFlow<()>,
) -> Walked {
    struct Visit<'a>(&'a mut dyn FnMut(Entry<'_>) -> ControlFlow<()>);
    impl Visitor for Visit<'_> {
        fn visit(&mut self, entry: Entry<'_>) -> ControlFlow<()> {
            (self.0)(entry)
        }
    }
    walk_with(base, mode, &mut Visit(visit))
}

/// Walks below `base` depth first, siblings in name order (directories first for a tree),
/// calling `visitor` with each entry, the directory handle it is in, its path relative to
/// `base` and its type (never following a symlink). Directories are descended into by handle
/// (`O_NOFOLLOW`). Iterative: the depth of the tree is bounded by nothing but `mode`.
pub(crate) fn walk_with(base: &Dir, mode: Walk, visitor: &mut dyn Visitor) -> Walked {
    let mut state = State {
        base,
        mode,
        frames: Vec::new(),
        path: Vec::new(),
        first_open: 1,
        lookups: 0,
        walked: Walked::default(),
    };
    if mode.unlock {
        // Best effort: a base the server may not change is walked as it is.
        let _ = unlock_open(base);
    }
    let listed = identity(base).and_then(|id| {
        state.frames.push(Frame {
            handle: None,
            id,
            name_start: 0,
            path_len: 0,
            pending: Vec::new(),
            partial: false,
        });
        state.fill(visitor)
    });
    match listed {
        Ok(ControlFlow::Continue(())) => {}
        Ok(ControlFlow::Break(())) => {
            state.walked.stopped = true;
            return state.walked;
        }
        Err(err) => {
            state.walked.incomplete = true;
            let _ = visitor.failed(Path::new(""), &err);
            return state.walked;
        }
    }
    if state.run(visitor).is_break() {
        state.walked.stopped = true;
    }
    state.walked
}

/// A directory the walk is in: the base, or one on the way down from it.
struct Frame {
    /// Its handle while it is open (always `None` for the base, which is borrowed).
    handle: Option<Dir>,
    /// Its device and inode, to recognise it when it is opened again.
    id: (u64, u64),
    /// Where its name starts in the walk's path buffer.
    name_start: usize,
    /// The length of its path (relative to the base) in the walk's path buffer.
    path_len: usize,
    /// Entries not visited yet, the next one last.
    pending: Vec<(OsString, FileType)>,
    /// Something below it was left out, so the visitor is not told the walk has been
    /// through it ([`Visitor::leave`]).
    partial: bool,
}

/// One walk's state.
struct State<'a> {
    base: &'a Dir,
    mode: Walk,
    /// The base, then each directory on the way down to the current one.
    frames: Vec<Frame>,
    /// The current entry's path relative to the base; each frame knows its own prefix.
    path: Vec<u8>,
    /// Frames from this index on hold their handles; those before it (but the base) do not.
    first_open: usize,
    /// Look-ups from the base so far ([`MAX_LOOKUPS`]).
    lookups: usize,
    walked: Walked,
}

impl State<'_> {
    fn run(&mut self, visitor: &mut dyn Visitor) -> ControlFlow<()> {
        while let Some(top) = self.frames.last_mut() {
            let Some((name, file_type)) = top.pending.pop() else {
                self.climb(visitor)?;
                continue;
            };
            let level = self.frames.len();
            let start = self.set_path(&name);
            let Some(dir) = self.handle(self.frames.len() - 1) else {
                continue; // Unreachable: the deepest frame is always open.
            };
            let path = Path::new(OsStr::from_bytes(&self.path));
            visitor.visit(Entry {
                dir,
                name: &name,
                path,
                file_type,
            })?;
            if !file_type.is_dir() || (self.mode.skip_git && name == ".git") {
                continue;
            }
            // The handle is borrowed from `self` until here; what to do next is decided first.
            let opened = match open_dir(dir, &name, self.mode.unlock) {
                Ok(sub) if level >= self.mode.levels => {
                    self.walked.cut |= sub.entries().is_ok_and(|mut e| e.next().is_some());
                    continue;
                }
                Ok(sub) => identity(&sub).map(|id| (sub, id)),
                // Removed since it was listed: nothing left to visit.
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => Err(err),
            };
            let listed = opened.and_then(|(sub, id)| {
                self.push(Frame {
                    handle: Some(sub),
                    id,
                    name_start: start,
                    path_len: self.path.len(),
                    pending: Vec::new(),
                    partial: false,
                });
                self.fill(visitor)
            });
            match listed {
                Ok(flow) => flow?,
                Err(err) => {
                    self.left_out();
                    let path = &self.path[..start + name.len()];
                    visitor.failed(Path::new(OsStr::from_bytes(path)), &err)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Reads the deepest directory. What it holds goes to its `pending` in the order it is to
    /// be visited; an unordered walk visits what is not a directory right away instead.
    fn fill(&mut self, visitor: &mut dyn Visitor) -> io::Result<ControlFlow<()>> {
        let index = self.frames.len() - 1;
        let dir = match index {
            0 => self.base,
            _ => self.frames[index].handle.as_ref().ok_or_else(moved)?,
        };
        let len = self.frames[index].path_len;
        let mut pending = Vec::new();
        for entry in dir.entries()? {
            let Ok(entry) = entry else { continue };
            // The type from readdir when the file system gives it, else an lstat by handle.
            let Some(file_type) = entry
                .file_type()
                .ok()
                .filter(|t| t.is_dir() || t.is_file() || t.is_symlink())
                .or_else(|| entry.metadata().ok().map(|m| m.file_type()))
            else {
                continue;
            };
            let name = entry.file_name();
            if self.mode.ordered || file_type.is_dir() {
                pending.push((name, file_type));
                continue;
            }
            self.path.truncate(len);
            if len > 0 {
                self.path.push(b'/');
            }
            self.path.extend_from_slice(name.as_bytes());
            let path = Path::new(OsStr::from_bytes(&self.path));
            let flow = visitor.visit(Entry {
                dir,
                name: &name,
                path,
                file_type,
            });
            if flow.is_break() {
                return Ok(flow);
            }
        }
        if self.mode.dirs_first {
            pending.sort_by(|a, b| (!a.1.is_dir(), &a.0).cmp(&(!b.1.is_dir(), &b.0)));
        } else {
            pending.sort_by(|a, b| a.0.cmp(&b.0));
        }
        pending.reverse();
        self.frames[index].pending = pending;
        Ok(ControlFlow::Continue(()))
    }

    /// Sets the path buffer to the deepest frame's path joined with `name`; returns where
    /// `name` starts in it.
    fn set_path(&mut self, name: &OsStr) -> usize {
        let len = self.frames.last().map_or(0, |f| f.path_len);
        self.path.truncate(len);
        if len > 0 {
            self.path.push(b'/');
        }
        let start = self.path.len();
        self.path.extend_from_slice(name.as_bytes());
        start
    }

    /// Something in the deepest directory is left out.
    fn left_out(&mut self) {
        self.walked.incomplete = true;
        if let Some(top) = self.frames.last_mut() {
            top.partial = true;
        }
    }

    /// The handle of frame `index`, if it is open.
    fn handle(&self, index: usize) -> Option<&Dir> {
        if index == 0 {
            Some(self.base)
        } else {
            self.frames.get(index)?.handle.as_ref()
        }
    }

    /// Goes one level down into `frame`, closing the shallowest open handle past the bound.
    fn push(&mut self, frame: Frame) {
        self.frames.push(frame);
        if self.frames.len() - self.first_open > MAX_OPEN_DIRS {
            if let Some(oldest) = self.frames.get_mut(self.first_open) {
                oldest.handle = None;
            }
            self.first_open += 1;
        }
    }

    /// The deepest directory is done: goes back up to its parent (reopening it if its handle
    /// was closed) and tells the visitor. A parent that cannot be found again is left out in
    /// turn, up to one that can (the base always can).
    fn climb(&mut self, visitor: &mut dyn Visitor) -> ControlFlow<()> {
        let Some(done) = self.frames.pop() else {
            return ControlFlow::Continue(());
        };
        let Some(parent) = self.frames.len().checked_sub(1) else {
            return ControlFlow::Continue(()); // The base itself is done: so is the walk.
        };
        self.frames[parent].partial |= done.partial;
        if self.handle(parent).is_none() {
            let reopened = self.reopen(parent, done.handle.as_ref());
            match reopened {
                Ok(handle) => {
                    self.frames[parent].handle = Some(handle);
                    self.first_open = parent;
                }
                Err(err) => {
                    // Left out: what `parent` still held, and leaving `done` (which may
                    // still be there). Its own parent is found again on the next climb.
                    self.walked.incomplete = true;
                    self.frames[parent].pending.clear();
                    self.frames[parent].partial = true;
                    let path = &self.path[..self.frames[parent].path_len];
                    return visitor.failed(Path::new(OsStr::from_bytes(path)), &err);
                }
            }
        }
        if done.partial {
            return ControlFlow::Continue(());
        }
        let name = OsStr::from_bytes(&self.path[done.name_start..done.path_len]);
        let Some(dir) = self.handle(parent) else {
            return ControlFlow::Continue(());
        };
        visitor.leave(dir, name)
    }

    /// Opens frame `index` again: through the `..` of `child` (the directory just left) when
    /// that is the same directory as before, else by name from the base.
    fn reopen(&mut self, index: usize, child: Option<&Dir>) -> io::Result<Dir> {
        let want = self.frames[index].id;
        if let Some(child) = child
            && let Ok(dir) = open_parent(child)
            && identity(&dir).is_ok_and(|id| id == want)
        {
            return Ok(dir);
        }
        if self.lookups >= MAX_LOOKUPS {
            return Err(moved());
        }
        self.lookups += 1;
        // Frames below `first_open` hold no handle, so the look-up starts at the base.
        let mut dir: Option<Dir> = None;
        for level in 1..=index {
            let frame = &self.frames[level];
            let name = OsStr::from_bytes(&self.path[frame.name_start..frame.path_len]);
            let parent = dir.as_ref().unwrap_or(self.base);
            let next = parent.open_dir_nofollow(name)?;
            if identity(&next)? != frame.id {
                return Err(moved());
            }
            dir = Some(next);
        }
        dir.ok_or_else(moved)
    }
}

/// Opens the folder `name` in `dir` without following a symlink; with `unlock`, a folder a
/// command locked gets its owner's access back first.
pub(crate) fn open_dir(dir: &Dir, name: &OsStr, unlock: bool) -> io::Result<Dir> {
    let sub = match dir.open_dir_nofollow(name) {
        Err(err) if unlock && err.kind() == io::ErrorKind::PermissionDenied => {
            unlock_entry(dir, name)?;
            dir.open_dir_nofollow(name)?
        }
        opened => opened?,
    };
    if unlock {
        // Best effort, as for the base: what it holds is looked up through it.
        let _ = unlock_open(&sub);
    }
    Ok(sub)
}

/// The directory above `child`, opened through its `..` entry (never a symlink).
fn open_parent(child: &Dir) -> io::Result<Dir> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(child, "..", flags, Mode::empty())?;
    Ok(Dir::from(fd))
}

/// A directory's device and inode: what it is, wherever it has been moved.
fn identity(dir: &Dir) -> io::Result<(u64, u64)> {
    let meta = dir.dir_metadata()?;
    Ok((meta.dev(), meta.ino()))
}

/// The error for a directory that is no longer where the walk left it.
fn moved() -> io::Error {
    io::Error::other("the folder was moved while it was being walked")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;

    fn names(base: &Dir, mode: Walk) -> (Vec<String>, Walked) {
        let mut seen = Vec::new();
        let walked = walk(base, mode, &mut |entry| {
            seen.push(entry.path.to_string_lossy().into_owned());
            ControlFlow::Continue(())
        });
        (seen, walked)
    }

    fn fixture() -> (tempfile::TempDir, Dir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        (tmp, dir)
    }

    #[test]
    fn visits_pre_order_by_name_and_leaves_post_order() {
        let (_tmp, dir) = fixture();
        dir.create_dir_all("b/c").unwrap();
        dir.write("b/c/f", "x").unwrap();
        dir.write("a", "x").unwrap();
        dir.write("b/z", "x").unwrap();
        let (seen, walked) = names(&dir, Walk::SEARCH);
        assert_eq!(seen, ["a", "b", "b/c", "b/c/f", "b/z"]);
        assert_eq!(walked, Walked::default());
        let (seen, _) = names(&dir, Walk::tree(9));
        assert_eq!(seen, ["b", "b/c", "b/c/f", "b/z", "a"]);
        // Unordered: a directory's files as read, before its subdirectories' contents.
        let (seen, walked) = names(&dir, Walk::ALL);
        assert_eq!(seen, ["a", "b", "b/z", "b/c", "b/c/f"]);
        assert_eq!(walked, Walked::default());
    }

    #[test]
    fn a_walk_of_everything_unlocks_a_locked_folder_and_a_search_does_not() {
        use std::os::unix::fs::PermissionsExt;
        let (tmp, dir) = fixture();
        dir.create_dir_all("a/locked").unwrap();
        dir.write("a/locked/f", "x").unwrap();
        let locked = tmp.path().join("a/locked");
        let mode = || std::fs::metadata(&locked).unwrap().permissions().mode() & 0o777;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        names(&dir, Walk::SEARCH);
        assert_eq!(mode(), 0o000);
        let (seen, walked) = names(&dir, Walk::ALL);
        assert_eq!(mode(), 0o700);
        assert_eq!(seen, ["a", "a/locked", "a/locked/f"]);
        assert_eq!(walked, Walked::default());
    }

    #[test]
    fn a_level_bound_cuts_and_says_so() {
        let (_tmp, dir) = fixture();
        dir.create_dir_all("a/b/c").unwrap();
        dir.create_dir_all("e/f").unwrap();
        let (seen, walked) = names(&dir, Walk::tree(2));
        assert_eq!(seen, ["a", "a/b", "e", "e/f"]);
        assert!(walked.cut && !walked.incomplete);
        let (_, walked) = names(&dir, Walk::tree(3));
        assert!(!walked.cut, "a/b/c is empty: nothing was left out");
    }

    #[test]
    fn deep_trees_climb_back_through_closed_handles() {
        // Far deeper than the open handles, with a sibling to visit on the way back up at
        // every level, so each closed level is reopened through `..`.
        let (_tmp, dir) = fixture();
        let depth = MAX_OPEN_DIRS * 3;
        let mut path = std::path::PathBuf::new();
        for _ in 0..depth {
            path.push("d");
            dir.create_dir(&path).unwrap();
            dir.write(path.join("z"), "x").unwrap();
        }
        struct Count(usize, usize);
        impl Visitor for Count {
            fn visit(&mut self, entry: Entry<'_>) -> ControlFlow<()> {
                self.0 += usize::from(entry.file_type.is_file());
                ControlFlow::Continue(())
            }
            fn leave(&mut self, parent: &Dir, name: &OsStr) -> ControlFlow<()> {
                assert!(parent.symlink_metadata(name).unwrap().is_dir());
                self.1 += 1;
                ControlFlow::Continue(())
            }
        }
        let mut count = Count(0, 0);
        let walked = walk_with(&dir, Walk::ALL, &mut count);
        assert_eq!((count.0, count.1), (depth, depth));
        assert_eq!(walked, Walked::default());
    }

    /// A chain `d/d/…` of `depth` levels with a file `d/d/zz`, walked in order (so `zz` comes
    /// after the climb back): when the walk is at the bottom, `shuffle` runs; returns the
    /// files visited and how the walk ended.
    fn walk_while_moving(shuffle: &dyn Fn(&Dir)) -> (Vec<String>, Walked) {
        let (_tmp, dir) = fixture();
        let depth = MAX_OPEN_DIRS + 4;
        let mut path = std::path::PathBuf::new();
        for _ in 0..depth {
            path.push("d");
            dir.create_dir(&path).unwrap();
        }
        dir.write("d/d/zz", "x").unwrap();
        let mut files = Vec::new();
        let walked = walk(&dir, Walk::SEARCH, &mut |entry| {
            if entry.path.components().count() == depth {
                shuffle(&dir);
            }
            if entry.file_type.is_file() {
                files.push(entry.path.to_string_lossy().into_owned());
            }
            ControlFlow::Continue(())
        });
        (files, walked)
    }

    #[test]
    fn a_moved_directory_is_found_again_by_name() {
        // The fifth level moves to the base: climbing through its `..` lands in the base, not
        // the fourth level, which is then looked up by name.
        let (files, walked) = walk_while_moving(&|dir| {
            dir.rename("d/d/d/d/d", dir, "x").unwrap();
        });
        assert_eq!(files, ["d/d/zz"]);
        assert_eq!(walked, Walked::default());
    }

    #[test]
    fn a_directory_that_cannot_be_found_again_is_left_out() {
        // The same, and the first level is replaced: the look-up by name fails too.
        let (files, walked) = walk_while_moving(&|dir| {
            dir.rename("d/d/d/d/d", dir, "x").unwrap();
            dir.rename("d", dir, "old").unwrap();
            dir.create_dir("d").unwrap();
        });
        assert!(files.is_empty(), "{files:?}");
        assert!(walked.incomplete, "{walked:?}");
    }
}
