//! The user's Skills projection: `<data>/users/<id>/skills`, shown read-only at
//! `/home/gem/skills`, and its manifest `<data>/users/<id>/skills.manifest`.
//!
//! The manifest (one `name version` line per skill) sits beside the projection rather than in
//! it, so the agent never sees it. It is rewritten before a projection changes anything, to
//! name only the skills that stay as they are, and again at the end: after a crash half way
//! it may forget a skill (which the next projection then writes again), but it never claims a
//! version that is not on disk. A projection that changes no skill (every run's, once the
//! user's skills are in place) writes no manifest: each write is a new file renamed over the
//! old, and creating an inode per run is most of what a projection would cost.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io;

use ars_domain::UserId;
use cap_fs_ext::DirExt;
use cap_std::fs::Dir;

use super::{tree, validate};
use crate::error::SandboxError;
use crate::files::atomic_write;
use crate::layout::SKILLS_ROOT;
use crate::paths::{Layout, SKILLS_DIR_NAME};
use crate::sandbox::ProjectedSkill;

/// The manifest's file name in the user's home.
const MANIFEST: &str = "skills.manifest";

/// Name → version of what `user`'s projection holds now.
pub(crate) fn projected(
    layout: &Layout,
    user: UserId,
) -> Result<BTreeMap<String, String>, SandboxError> {
    let Some(home) = layout.open_user_home(user, false)? else {
        return Ok(BTreeMap::new());
    };
    match home.open_dir_nofollow(SKILLS_DIR_NAME) {
        Ok(projection) => Ok(read_manifest(&home, &projection)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(err) => Err(SandboxError::io(SKILLS_ROOT, &err)),
    }
}

/// Makes `user`'s projection hold exactly `skills`. The caller serialises projections of one
/// user.
pub(crate) fn project(
    layout: &Layout,
    user: UserId,
    skills: &[ProjectedSkill],
) -> Result<(), SandboxError> {
    let mut wanted = BTreeMap::new();
    for skill in skills {
        validate::name(&skill.name)?;
        validate::version(&skill.name, &skill.version)?;
        if let Some(files) = &skill.files {
            validate::files(&skill.name, files)?;
        }
        if wanted.insert(skill.name.as_str(), skill).is_some() {
            return Err(SandboxError::InvalidSkill {
                name: skill.name.clone(),
                reason: "it is listed twice".into(),
            });
        }
    }
    let root_err = |err: io::Error| SandboxError::io(SKILLS_ROOT, &err);
    let Some(home) = layout.open_user_home(user, true)? else {
        return Err(SandboxError::NotFound {
            path: SKILLS_ROOT.to_owned(),
        });
    };
    match home.create_dir(SKILLS_DIR_NAME) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(root_err(err)),
    }
    let projection = home.open_dir_nofollow(SKILLS_DIR_NAME).map_err(root_err)?;
    remove_stale_temps(&home);

    let current = read_manifest(&home, &projection);
    let mut kept = BTreeMap::new();
    for skill in skills.iter().filter(|s| s.files.is_none()) {
        if current.get(&skill.name) != Some(&skill.version) {
            return Err(SandboxError::InvalidSkill {
                name: skill.name.clone(),
                reason: format!(
                    "version {} is not projected, so it cannot be kept; pass its files",
                    skill.version
                ),
            });
        }
        kept.insert(skill.name.clone(), skill.version.clone());
    }
    // Every skill kept as the manifest already names it: the manifest stays as it is.
    let unchanged = kept.len() == skills.len() && kept == current;
    if !unchanged {
        write_manifest(&home, &kept).map_err(root_err)?;
    }

    for skill in skills {
        let Some(files) = &skill.files else { continue };
        let shown = format!("{SKILLS_ROOT}/{}", skill.name);
        let tmp = tree::temp_name();
        let swapped = tree::build(&home, &tmp, files)
            .and_then(|()| tree::swap_in(&home, &tmp, &projection, &skill.name, true));
        match swapped {
            // The old copy now sits at `tmp`; a copy left behind goes with the next projection.
            Ok(true) => {
                if let Err(err) = tree::remove(&home, OsStr::new(&tmp)) {
                    tracing::warn!(skill = %skill.name, %err, "cannot remove a replaced skill");
                }
            }
            Ok(false) => {}
            Err(err) => {
                let _ = tree::remove(&home, OsStr::new(&tmp));
                return Err(SandboxError::io(&shown, &err));
            }
        }
    }

    // Everything else goes: skills no longer visible, and anything that is not a skill.
    let entries: Vec<_> = projection
        .entries()
        .map_err(root_err)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| name.to_str().is_none_or(|name| !wanted.contains_key(name)))
        .collect();
    for name in entries {
        tree::remove(&projection, &name).map_err(|err| {
            SandboxError::io(&format!("{SKILLS_ROOT}/{}", name.to_string_lossy()), &err)
        })?;
    }
    if unchanged {
        return Ok(());
    }

    let all = skills
        .iter()
        .map(|s| (s.name.clone(), s.version.clone()))
        .collect();
    write_manifest(&home, &all).map_err(root_err)
}

/// The manifest's entries whose skill folder exists; malformed lines are ignored.
fn read_manifest(home: &Dir, projection: &Dir) -> BTreeMap<String, String> {
    let Ok(text) = home.read_to_string(MANIFEST) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(name, version)| {
            validate::name(name).is_ok() && validate::version(name, version).is_ok()
        })
        .filter(|(name, _)| {
            projection
                .symlink_metadata(name)
                .is_ok_and(|meta| meta.is_dir())
        })
        .map(|(name, version)| (name.to_owned(), version.to_owned()))
        .collect()
}

fn write_manifest(home: &Dir, skills: &BTreeMap<String, String>) -> io::Result<()> {
    let text: String = skills
        .iter()
        .map(|(name, version)| format!("{name} {version}\n"))
        .collect();
    atomic_write(home, OsStr::new(MANIFEST), text.as_bytes())
}

/// Removes temp folders a crashed projection left in the user's home (best effort).
fn remove_stale_temps(home: &Dir) {
    let Ok(entries) = home.entries() else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if tree::is_temp_name(&name) {
            let _ = tree::remove(home, &name);
        }
    }
}
