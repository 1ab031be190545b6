//! Tests of upload reading: each refusal, the accepted layouts, and the zip round trip.

use std::io::Write;
use std::time::{Duration, Instant};

use zip::write::SimpleFileOptions;

use super::*;

fn skill_md(name: &str) -> Vec<u8> {
    format!("---\nname: {name}\ndescription: Test skill.\n---\n# {name}\n").into_bytes()
}

fn options() -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
}

/// A zip of the given files (a name ending in `/` is a directory entry).
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        if let Some(dir) = name.strip_suffix('/') {
            writer.add_directory(dir, options()).unwrap();
        } else {
            writer.start_file(*name, options()).unwrap();
            writer.write_all(bytes).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

fn read(bytes: &[u8]) -> Result<SkillBundle, SkillError> {
    read_zip(bytes, &UploadLimits::default())
}

/// Replaces every occurrence of `from` by `to` (same length) in raw zip bytes, to craft
/// archives the writer refuses to make.
fn patch(bytes: &mut [u8], from: &[u8], to: &[u8]) {
    assert_eq!(from.len(), to.len());
    let mut at = 0;
    while let Some(found) = bytes[at..].windows(from.len()).position(|w| w == from) {
        bytes[at + found..at + found + to.len()].copy_from_slice(to);
        at += found + to.len();
    }
}

fn unsafe_path_reason(name: &str) -> &'static str {
    let md = skill_md("a");
    match read(&zip_of(&[("SKILL.md", &md), (name, b"x")])) {
        Err(SkillError::UnsafePath { reason, .. }) => reason,
        other => panic!("expected `{name}` to be refused, got {other:?}"),
    }
}

#[test]
fn zip_with_skill_md_at_root_is_read() {
    let md = skill_md("pdf");
    let bundle = read(&zip_of(&[
        ("SKILL.md", &md),
        ("scripts/", b""),
        ("scripts/x.py", b"print(1)\n"),
        ("assets/logo.png", &[0xff, 0x00, 0x89]),
    ]))
    .unwrap();
    assert_eq!(bundle.name(), "pdf");
    let paths: Vec<&str> = bundle.files.keys().map(String::as_str).collect();
    assert_eq!(paths, ["SKILL.md", "assets/logo.png", "scripts/x.py"]);
    assert_eq!(bundle.size_bytes(), (md.len() + 9 + 3) as u64);
}

#[test]
fn zip_with_one_top_folder_is_read_without_the_folder() {
    let md = skill_md("pdf");
    let bundle = read(&zip_of(&[
        ("pdf/", b""),
        ("pdf/SKILL.md", &md),
        ("pdf/references/a.md", b"# A\n"),
    ]))
    .unwrap();
    assert_eq!(
        bundle.files.keys().collect::<Vec<_>>(),
        ["SKILL.md", "references/a.md"]
    );
}

#[test]
fn folder_name_differing_from_skill_name_is_refused() {
    let md = skill_md("pdf");
    let err = read(&zip_of(&[("tools/SKILL.md", &md)])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "name `pdf` in SKILL.md differs from its folder `tools`"
    );
}

#[test]
fn files_outside_the_top_folder_are_refused() {
    let md = skill_md("pdf");
    let err = read(&zip_of(&[("pdf/SKILL.md", &md), ("README.md", b"x")])).unwrap_err();
    assert!(matches!(err, SkillError::MixedLayout { .. }), "{err}");
}

#[test]
fn zip_without_skill_md_is_refused() {
    assert_eq!(
        read(&zip_of(&[("README.md", b"x")])),
        Err(SkillError::MissingSkillMd)
    );
    assert_eq!(
        read(&zip_of(&[("pdf/README.md", b"x")])),
        Err(SkillError::MissingSkillMd)
    );
    assert_eq!(read(&zip_of(&[])), Err(SkillError::MissingSkillMd));
}

#[test]
fn skill_md_that_is_not_utf8_is_refused() {
    assert_eq!(
        read(&zip_of(&[("SKILL.md", &[b'-', 0xff, 0xfe])])),
        Err(SkillError::SkillMdNotUtf8)
    );
}

#[test]
fn invalid_skill_md_in_a_zip_is_refused() {
    let err = read(&zip_of(&[("SKILL.md", b"# no frontmatter")])).unwrap_err();
    assert_eq!(err, SkillError::MissingFrontmatter);
}

#[test]
fn bytes_that_are_not_a_zip_are_refused() {
    assert!(matches!(read(b"not a zip"), Err(SkillError::Zip(_))));
}

#[test]
fn zip_entry_with_dot_dot_is_refused() {
    assert!(unsafe_path_reason("../evil.sh").contains("`..`"));
    assert!(unsafe_path_reason("scripts/../../evil.sh").contains("`..`"));
}

#[test]
fn zip_entry_with_absolute_path_is_refused() {
    assert_eq!(unsafe_path_reason("/etc/passwd"), "is an absolute path");
}

#[test]
fn zip_entry_with_backslash_is_refused() {
    assert!(unsafe_path_reason("scripts\\x.py").contains("backslash"));
}

#[test]
fn zip_entry_with_drive_letter_is_refused() {
    assert_eq!(unsafe_path_reason("C:/x.txt"), "starts with a drive letter");
}

#[test]
fn zip_entry_with_control_characters_is_refused() {
    assert_eq!(unsafe_path_reason("a\0b"), "contains a control character");
    assert_eq!(unsafe_path_reason("a\nb"), "contains a control character");
}

#[test]
fn zip_entry_with_dot_component_is_refused() {
    assert_eq!(unsafe_path_reason("./x"), "has a `.` component");
    assert!(unsafe_path_reason("a//x").contains("empty folder name"));
}

#[test]
fn zip_symlink_entry_is_refused() {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    writer.start_file("SKILL.md", options()).unwrap();
    writer.write_all(&skill_md("a")).unwrap();
    writer
        .add_symlink("secrets", "/etc/shadow", options())
        .unwrap();
    let bytes = writer.finish().unwrap().into_inner();
    assert_eq!(
        read(&bytes),
        Err(SkillError::Symlink {
            path: "secrets".to_owned()
        })
    );
}

#[test]
fn encrypted_zip_entry_is_refused() {
    let md = skill_md("a");
    let mut bytes = zip_of(&[("SKILL.md", &md), ("secret.txt", b"hidden")]);
    // Set bit 0 of the general-purpose flags ("encrypted") in the central directory header
    // of the second entry: its flags sit 8 bytes after the header's signature.
    let central: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == [0x50, 0x4b, 0x01, 0x02])
        .map(|(at, _)| at)
        .collect();
    bytes[central[1] + 8] |= 1;
    assert_eq!(
        read(&bytes),
        Err(SkillError::Encrypted {
            path: "secret.txt".to_owned()
        })
    );
}

#[test]
fn duplicate_zip_entries_are_refused() {
    let md = skill_md("a");
    let mut bytes = zip_of(&[("SKILL.md", &md), ("dup1.txt", b"x"), ("dup2.txt", b"y")]);
    patch(&mut bytes, b"dup2.txt", b"dup1.txt");
    assert_eq!(read(&bytes), Err(SkillError::DuplicateEntries));
}

#[test]
fn more_than_max_files_is_refused() {
    let md = skill_md("a");
    let names: Vec<String> = (0..5).map(|n| format!("f{n}.txt")).collect();
    let mut entries: Vec<(&str, &[u8])> = vec![("SKILL.md", &md)];
    entries.extend(names.iter().map(|name| (name.as_str(), &b"x"[..])));
    let limits = UploadLimits {
        max_files: 5,
        ..UploadLimits::default()
    };
    assert_eq!(
        read_zip(&zip_of(&entries), &limits),
        Err(SkillError::TooManyFiles { limit: 5 })
    );
    entries.pop();
    assert!(read_zip(&zip_of(&entries), &limits).is_ok());
}

#[test]
fn file_over_max_file_bytes_is_refused() {
    let md = skill_md("a");
    let limits = UploadLimits {
        max_file_bytes: 1000,
        ..UploadLimits::default()
    };
    let bytes = zip_of(&[("SKILL.md", &md), ("big.bin", &[7; 1001])]);
    assert_eq!(
        read_zip(&bytes, &limits),
        Err(SkillError::FileTooLarge {
            path: "big.bin".to_owned(),
            limit: 1000
        })
    );
    let bytes = zip_of(&[("SKILL.md", &md), ("big.bin", &[7; 1000])]);
    assert!(read_zip(&bytes, &limits).is_ok());
}

#[test]
fn files_over_max_total_bytes_are_refused() {
    let md = skill_md("a");
    let limits = UploadLimits {
        max_total_bytes: 3000,
        ..UploadLimits::default()
    };
    let chunk = [1u8; 1500];
    let bytes = zip_of(&[("SKILL.md", &md), ("a.bin", &chunk), ("b.bin", &chunk)]);
    assert_eq!(
        read_zip(&bytes, &limits),
        Err(SkillError::TotalTooLarge { limit: 3000 })
    );
}

#[test]
fn zip_bomb_is_refused_while_reading() {
    // 50 MiB of zeros deflate to about 50 KiB; the default limit is 10 MiB per file.
    let md = skill_md("a");
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    writer.start_file("SKILL.md", options()).unwrap();
    writer.write_all(&md).unwrap();
    writer.start_file("zeros.bin", options()).unwrap();
    let mib = vec![0u8; 1024 * 1024];
    for _ in 0..50 {
        writer.write_all(&mib).unwrap();
    }
    let bytes = writer.finish().unwrap().into_inner();
    assert!(bytes.len() < 1024 * 1024, "{} bytes", bytes.len());

    let started = Instant::now();
    assert_eq!(
        read(&bytes),
        Err(SkillError::FileTooLarge {
            path: "zeros.bin".to_owned(),
            limit: UploadLimits::default().max_file_bytes
        })
    );
    // Reading stops at the limit; decompressing all 50 MiB is never needed.
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn nested_archives_are_kept_as_plain_files() {
    let md = skill_md("a");
    let inner = zip_of(&[("inner/SKILL.md", &md)]);
    let bundle = read(&zip_of(&[
        ("SKILL.md", &md),
        ("assets/inner.zip", &inner),
        ("assets/other.skill", &inner),
        ("assets/x.tar.gz", b"\x1f\x8b not really"),
    ]))
    .unwrap();
    assert_eq!(bundle.files["assets/inner.zip"], inner);
    assert_eq!(bundle.files.len(), 4);
    assert!(!bundle.files.contains_key("inner/SKILL.md"));
}

#[test]
fn macos_metadata_folder_is_skipped() {
    let md = skill_md("pdf");
    let bundle = read(&zip_of(&[
        ("pdf/SKILL.md", &md),
        ("__MACOSX/pdf/._SKILL.md", b"\0\x05\x16\x07"),
    ]))
    .unwrap();
    assert_eq!(bundle.files.keys().collect::<Vec<_>>(), ["SKILL.md"]);
}

#[test]
fn to_zip_then_read_zip_gives_the_same_bundle_and_version() {
    let md = skill_md("round-trip");
    let original = read(&zip_of(&[
        ("SKILL.md", &md),
        ("scripts/run.sh", b"#!/bin/sh\necho hi\n"),
        ("assets/blob.bin", &[0, 1, 2, 255]),
        ("references/中文.md", "数据".as_bytes()),
    ]))
    .unwrap();
    let packed = original.to_zip().unwrap();
    assert_eq!(
        packed,
        original.to_zip().unwrap(),
        "to_zip is deterministic"
    );
    let again = read(&packed).unwrap();
    assert_eq!(again, original);
    assert_eq!(again.version(), original.version());
}

#[test]
fn version_is_lowercase_hex_and_follows_the_content() {
    let bundle = read_skill_md(&skill_md("a")).unwrap();
    let version = bundle.version();
    assert_eq!(version.len(), 64);
    assert!(
        version
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    let mut changed = bundle.clone();
    changed.files.insert("x.txt".to_owned(), b"x".to_vec());
    assert_ne!(changed.version(), version);
}

#[test]
fn read_skill_md_gives_a_bundle_of_one_file() {
    let bundle = read_skill_md(&skill_md("solo")).unwrap();
    assert_eq!(bundle.name(), "solo");
    assert_eq!(bundle.files.keys().collect::<Vec<_>>(), ["SKILL.md"]);
    assert_eq!(read_skill_md(&[0xff]), Err(SkillError::SkillMdNotUtf8));
}

#[test]
fn bundle_from_files_checks_the_folder_name_and_paths() {
    let files = BTreeMap::from([("SKILL.md".to_owned(), skill_md("pdf"))]);
    assert!(bundle_from_files(files.clone(), Some("pdf")).is_ok());
    assert!(matches!(
        bundle_from_files(files.clone(), Some("other")),
        Err(SkillError::FolderMismatch { .. })
    ));
    let mut bad = files.clone();
    bad.insert("../x".to_owned(), Vec::new());
    assert!(matches!(
        bundle_from_files(bad, None),
        Err(SkillError::UnsafePath { .. })
    ));
    let mut clash = files;
    clash.insert("scripts".to_owned(), Vec::new());
    clash.insert("scripts/x.py".to_owned(), Vec::new());
    assert!(matches!(
        bundle_from_files(clash, None),
        Err(SkillError::UnsafePath {
            reason: "is both a file and a folder",
            ..
        })
    ));
}

#[test]
fn a_tree_as_deep_as_a_zip_can_name_is_refused_by_its_path() {
    // Zip names are a flat list; the tree they describe is bounded by each path's checks. A
    // name holds at most 65,535 bytes, so 30,000 folders is as deep as an archive can go.
    let deep = format!("{}f.txt", "a/".repeat(30_000));
    let zip = zip_of(&[("SKILL.md", &skill_md("deep")), (deep.as_str(), b"x")]);
    match read(&zip) {
        Err(SkillError::UnsafePath { reason, .. }) => {
            assert_eq!(reason, "is longer than 1024 bytes");
        }
        other => panic!("{other:?}"),
    }
    let nested = format!("{}f.txt", "a/".repeat(40));
    let zip = zip_of(&[("SKILL.md", &skill_md("deep")), (nested.as_str(), b"x")]);
    match read(&zip) {
        Err(SkillError::UnsafePath { reason, .. }) => {
            assert_eq!(reason, "is nested deeper than 32 folders");
        }
        other => panic!("{other:?}"),
    }
    let fine = format!("{}f.txt", "a/".repeat(32));
    assert!(check_path(&fine).is_ok());
    assert!(check_path(&format!("{}/f", "n".repeat(256))).is_err());
}
