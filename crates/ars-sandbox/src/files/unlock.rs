//! Giving the server back its access to a folder a command locked.
//!
//! Commands run as the server's own user (mapped into their user namespace), so a command can
//! `chmod 000` a folder of its workspace. A server that is not root could then neither read
//! nor remove that folder, and what it holds would escape the quota. The walks that must see
//! everything (measuring, removing) give the owner read, write and search permission back on
//! a folder it cannot read or search, and a removal on a folder it cannot write; a folder
//! that is only read-only (a Go module cache, say) is otherwise left as it is. Never through
//! a symlink: a folder that cannot be opened at all is opened `O_PATH | O_NOFOLLOW` and
//! changed through that descriptor.

use std::ffi::OsStr;
use std::io;
use std::os::fd::AsRawFd;

use cap_std::fs::Dir;
use rustix::fs::{Mode, OFlags};

/// The owner's read, write and search bits.
const OWNER_ALL: u32 = 0o700;
/// The owner's read and search bits: what looking at a folder's entries needs.
const OWNER_READ_SEARCH: u32 = 0o500;

/// Gives the owner full access to the folder `name` in `parent`, which could not be opened.
pub(crate) fn unlock_entry(parent: &Dir, name: &OsStr) -> io::Result<()> {
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(parent, name, flags, Mode::empty())?;
    let mode = rustix::fs::fstat(&fd)?.st_mode;
    chmod(&fd, mode)
}

/// Gives the owner full access to the open folder `dir` when it cannot read or search it, so
/// what it holds can be looked at. Answers whether it changed anything.
pub(crate) fn unlock_open(dir: &Dir) -> io::Result<bool> {
    let mode = rustix::fs::fstat(dir)?.st_mode;
    if mode & OWNER_READ_SEARCH == OWNER_READ_SEARCH {
        return Ok(false);
    }
    chmod(dir, mode)?;
    Ok(true)
}

/// Gives the owner full access to the open folder `dir`, so entries can be removed from it.
pub(crate) fn unlock_for_removal(dir: &Dir) -> io::Result<()> {
    let mode = rustix::fs::fstat(dir)?.st_mode;
    chmod(dir, mode)
}

/// Adds the owner's bits to the folder open as `fd`. `fchmod` refuses the `O_PATH`
/// descriptors directory handles are, so it goes through the descriptor's `/proc` link, which
/// names exactly that folder.
fn chmod(fd: &impl AsRawFd, mode: u32) -> io::Result<()> {
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::chmod(link.as_str(), with_owner_access(mode))?;
    Ok(())
}

fn with_owner_access(mode: u32) -> Mode {
    Mode::from_bits_truncate((mode & 0o7777) | OWNER_ALL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::os::unix::fs::PermissionsExt;

    fn mode_of(path: &std::path::Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn a_locked_folder_is_unlocked_and_a_symlink_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        dir.create_dir("locked").unwrap();
        dir.create_dir("target").unwrap();
        let (locked, target) = (tmp.path().join("locked"), tmp.path().join("target"));
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o050)).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o000)).unwrap();
        std::os::unix::fs::symlink(&target, tmp.path().join("link")).unwrap();

        unlock_entry(&dir, OsStr::new("locked")).unwrap();
        assert_eq!(mode_of(&locked), 0o750);
        assert!(unlock_entry(&dir, OsStr::new("link")).is_err());
        assert_eq!(mode_of(&target), 0o000);

        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o300)).unwrap();
        let open = dir.open_dir("locked").unwrap();
        assert!(unlock_open(&open).unwrap());
        assert_eq!(mode_of(&locked), 0o700);
        // Read-only is left alone, except for a removal.
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
        assert!(!unlock_open(&open).unwrap());
        assert_eq!(mode_of(&locked), 0o555);
        unlock_for_removal(&open).unwrap();
        assert_eq!(mode_of(&locked), 0o755);
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}
