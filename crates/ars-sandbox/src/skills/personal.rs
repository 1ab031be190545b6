//! Personal skills: folders in the user's workspace at `/home/gem/user-data/agents/skills`.
//!
//! The workspace is the agent's to write, so anything on the way may be a planted symlink.
//! `agents` and `agents/skills` are opened one component at a time with `O_NOFOLLOW` (a link
//! there refuses the call), and the skill folder itself is only ever exchanged, moved or
//! unlinked as an entry of that directory (see `tree`), so a link named like the skill is
//! replaced or removed as a link, never written or deleted through.

use std::ffi::OsStr;
use std::io;

use ars_domain::UserId;
use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use super::{tree, validate};
use crate::error::SandboxError;
use crate::layout::{PERSONAL_SKILLS_DIR, USER_DATA_ROOT};
use crate::paths::{Layout, Root};
use crate::quota::Quotas;

/// `agents/skills` below the workspace root.
const PERSONAL_SKILLS_REL: [&str; 2] = ["agents", "skills"];

/// Writes the skill folder `name` with `files`, atomically; with `replace` an existing one is
/// swapped out and removed, without it an existing one is [`SandboxError::SkillExists`].
pub(crate) fn install(
    layout: &Layout,
    quotas: &Quotas,
    user: UserId,
    name: &str,
    files: &[(String, Vec<u8>)],
    replace: bool,
) -> Result<(), SandboxError> {
    validate::name(name)?;
    validate::files(name, files)?;
    let shown = format!("{PERSONAL_SKILLS_DIR}/{name}");
    let exists = || SandboxError::SkillExists {
        name: name.to_owned(),
        path: shown.clone(),
    };
    // The server may install before the user's first run prepared anything; the workspace
    // path is the server's own (no part of it is agent-writable), so creating it is safe.
    std::fs::create_dir_all(layout.user_data(user))
        .map_err(|err| SandboxError::io(USER_DATA_ROOT, &err))?;
    let workspace = layout.open_root(user, Root::UserData)?;
    let Some(skills) = open_personal_skills(&workspace, true)? else {
        return Err(SandboxError::NotFound {
            path: PERSONAL_SKILLS_DIR.to_owned(),
        });
    };
    let old_len = match skills.symlink_metadata(name) {
        Ok(_) if !replace => return Err(exists()),
        Ok(_) => tree::disk_usage(&skills, name),
        Err(err) if err.kind() == io::ErrorKind::NotFound => 0,
        Err(err) => return Err(SandboxError::io(&shown, &err)),
    };
    let new_len = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    // Reserved before anything is written, so an install that does not fit leaves no trace.
    let room = quotas.reserve(user, &workspace, old_len, new_len)?;
    let tmp = tree::temp_name();
    let swapped = tree::build(&skills, &tmp, files)
        .and_then(|()| tree::swap_in(&skills, &tmp, &skills, name, replace));
    let replaced = match swapped {
        Ok(replaced) => replaced,
        Err(err) => {
            let _ = tree::remove(&skills, OsStr::new(&tmp));
            // Created concurrently (by the agent) since the check above.
            if err.kind() == io::ErrorKind::AlreadyExists {
                return Err(exists());
            }
            return Err(SandboxError::io(&shown, &err));
        }
    };
    room.commit();
    if replaced {
        // The old folder (or a link planted in its place) now sits at `tmp`.
        let removed = tree::remove(&skills, OsStr::new(&tmp));
        quotas.measure(user, &workspace);
        removed.map_err(|err| SandboxError::Io {
            path: shown.clone(),
            message: format!("the skill was replaced but its old copy could not be removed: {err}"),
        })?;
    }
    Ok(())
}

/// Removes the skill folder `name` (a symlink of that name as a link); whether there was one.
pub(crate) fn remove(
    layout: &Layout,
    quotas: &Quotas,
    user: UserId,
    name: &str,
) -> Result<bool, SandboxError> {
    validate::name(name)?;
    let shown = format!("{PERSONAL_SKILLS_DIR}/{name}");
    if layout.open_user_home(user, false)?.is_none() {
        // A user never prepared has no skills.
        return Ok(false);
    }
    let workspace = layout.open_root(user, Root::UserData)?;
    let Some(skills) = open_personal_skills(&workspace, false)? else {
        return Ok(false);
    };
    match skills.symlink_metadata(name) {
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(SandboxError::io(&shown, &err)),
    }
    let removed = tree::remove(&skills, OsStr::new(name));
    quotas.measure(user, &workspace);
    removed.map_err(|err| SandboxError::io(&shown, &err))?;
    Ok(true)
}

/// Opens `agents/skills` in the workspace one component at a time without following links,
/// creating what is missing when `create`; `None` when it is missing and not to be created.
fn open_personal_skills(workspace: &Dir, create: bool) -> Result<Option<Dir>, SandboxError> {
    let mut current: Option<Dir> = None;
    let mut shown = String::from(USER_DATA_ROOT);
    for part in PERSONAL_SKILLS_REL {
        shown.push('/');
        shown.push_str(part);
        let dir = current.as_ref().unwrap_or(workspace);
        if create {
            match dir.create_dir(part) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(SandboxError::io(&shown, &err)),
            }
        }
        current = Some(match dir.open_dir_nofollow(part) {
            Ok(next) => next,
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
            // A symlink (ELOOP) or a file (ENOTDIR) in the way: refuse rather than follow.
            Err(err) if is_link_or_file(&err) => {
                return Err(SandboxError::NotDirectory { path: shown });
            }
            Err(err) => return Err(SandboxError::io(&shown, &err)),
        });
    }
    Ok(current)
}

/// Whether opening a directory with `O_NOFOLLOW` failed because a symlink (`ELOOP`) or a
/// non-directory (`ENOTDIR`) is there.
fn is_link_or_file(err: &io::Error) -> bool {
    use rustix::io::Errno;
    let code = err.raw_os_error();
    code == Some(Errno::LOOP.raw_os_error()) || code == Some(Errno::NOTDIR.raw_os_error())
}
