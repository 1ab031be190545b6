//! The skills that ship inside the ARS binary.
//!
//! Their files live under `crates/ars-skills/builtin/<name>/` and are compiled in with
//! `include_bytes!`, one line per file in [`FILES`], so debug and release builds embed the same
//! bytes and no file is read at run time. A unit test checks that [`FILES`] lists exactly the
//! files on disk, so a file added to a skill cannot be forgotten here.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::archive::{SkillBundle, bundle_from_files};

/// Embeds one built-in file as `(skill, path inside the skill, bytes)`.
macro_rules! builtin_file {
    ($skill:literal, $path:literal) => {
        (
            $skill,
            $path,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/builtin/",
                $skill,
                "/",
                $path
            )) as &[u8],
        )
    };
}

/// Every built-in file: the skill's folder name, the path inside it, the bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    builtin_file!("csv-data", "SKILL.md"),
    builtin_file!("csv-data", "scripts/csv_summary.py"),
    builtin_file!("csv-data", "scripts/csv_summary.sh"),
    builtin_file!("delegate-research", "SKILL.md"),
    builtin_file!("delegate-research", "references/report-template.md"),
];

/// The built-in skills, sorted by name, parsed once.
///
/// A built-in that fails validation is left out (the crate's tests make sure none does), so a
/// mistake in one can never keep the server from starting.
pub fn builtin_skills() -> Vec<SkillBundle> {
    static SKILLS: OnceLock<Vec<SkillBundle>> = OnceLock::new();
    SKILLS.get_or_init(load).clone()
}

/// Groups [`FILES`] by skill and validates each folder as a bundle.
fn load() -> Vec<SkillBundle> {
    bundles().into_iter().filter_map(Result::ok).collect()
}

/// Each built-in folder's name and the result of reading it.
fn bundles() -> Vec<Result<SkillBundle, (String, crate::SkillError)>> {
    let mut folders: BTreeMap<&str, BTreeMap<String, Vec<u8>>> = BTreeMap::new();
    for (skill, path, bytes) in FILES {
        folders
            .entry(skill)
            .or_default()
            .insert((*path).to_owned(), bytes.to_vec());
    }
    folders
        .into_iter()
        .map(|(folder, files)| {
            bundle_from_files(files, Some(folder)).map_err(|err| (folder.to_owned(), err))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every file under `dir`, as paths relative to `root` with `/` separators.
    fn files_on_disk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files_on_disk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_builtin_skill_parses_and_is_named_after_its_folder() {
        for result in bundles() {
            let bundle = result.unwrap_or_else(|(folder, err)| panic!("{folder}: {err}"));
            assert!(bundle.files.contains_key("SKILL.md"));
            assert_eq!(bundle.manifest.license.as_deref(), Some("Apache-2.0"));
            assert_eq!(bundle.manifest.metadata["author"], "ars");
            assert!(bundle.manifest.description.chars().count() >= 100);
        }
        let names: Vec<String> = builtin_skills()
            .iter()
            .map(|skill| skill.name().to_owned())
            .collect();
        assert_eq!(names, ["csv-data", "delegate-research"]);
    }

    #[test]
    fn embedded_files_are_exactly_the_files_on_disk() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("builtin");
        let mut on_disk = Vec::new();
        files_on_disk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut embedded: Vec<String> = FILES
            .iter()
            .map(|(skill, path, _)| format!("{skill}/{path}"))
            .collect();
        embedded.sort();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn builtin_skills_survive_a_zip_round_trip() {
        for skill in builtin_skills() {
            let again =
                crate::archive::read_zip(&skill.to_zip().unwrap(), &Default::default()).unwrap();
            assert_eq!(again.version(), skill.version());
        }
    }
}
