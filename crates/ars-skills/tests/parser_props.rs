//! SKILL.md and skill archives over random and absurd input: each is read or refused, on a
//! thread with half the stack of a server thread (1 MiB) and within a memory bound (this binary's allocator
//! refuses more than 1 GiB, which aborts the test) — a bounded fuzz run, part of the test
//! command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;
use std::io::{Cursor, Write};

use ars_skills::{UploadLimits, parse_skill_md, read_zip};
use cap::Cap;
use proptest::prelude::*;
use proptest::test_runner::Config;
use zip::write::SimpleFileOptions;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

const MEMORY: usize = 1024 * 1024 * 1024;

fn bounded(read: impl FnOnce() + Send + 'static) {
    let _ = ALLOCATOR.set_limit(MEMORY);
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(read)
        .expect("a thread")
        .join()
        .expect("the reader never panics");
}

/// YAML made of these pieces, unbalanced and nested at random.
fn yaml() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(
                &[
                    "[", "]", "{", "}", "- ", "  ", "\n", "a: ", "&x ", "*x", "<<: *x", "!!str ",
                    "'", "\"", "? ", "|\n", ">\n", "名: 值", ",", "#",
                ][..],
            ),
            1usize..500,
        ),
        0..30,
    )
    .prop_map(|runs| runs.into_iter().map(|(piece, n)| piece.repeat(n)).collect())
}

fn zip_of(entries: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        if writer
            .start_file(name.as_str(), SimpleFileOptions::default())
            .is_ok()
        {
            let _ = writer.write_all(bytes);
        }
    }
    writer.finish().map(Cursor::into_inner).unwrap_or_default()
}

proptest! {
    #![proptest_config(Config { cases: 128, failure_persistence: None, ..Config::default() })]

    #[test]
    fn frontmatter_of_any_shape_is_read_or_refused(body in yaml()) {
        bounded(move || {
            let _ = parse_skill_md(&format!("---\nname: a\ndescription: d\nx: {body}\n---\n"));
            let _ = parse_skill_md(&format!("---\n{body}\n---\n"));
        });
    }

    #[test]
    fn archives_of_any_shape_are_read_or_refused(
        names in prop::collection::vec(
            prop::collection::vec(prop::sample::select(&["a", "..", ".", "", "中", "x.md", "SKILL.md", "/", "\\"][..]), 1..50),
            1..8,
        ),
        garbage in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let entries: Vec<(String, Vec<u8>)> = names
            .into_iter()
            .map(|parts| (parts.join("/"), b"---\nname: a\ndescription: d\n---\n".to_vec()))
            .collect();
        let zip = zip_of(&entries);
        bounded(move || {
            let _ = read_zip(&zip, &UploadLimits::default());
            let _ = read_zip(&garbage, &UploadLimits::default());
        });
    }
}

#[test]
fn a_million_levels_of_nesting_are_refused() {
    bounded(|| {
        for nested in [
            "[".repeat(1_000_000),
            "{a: ".repeat(1_000_000),
            "- ".repeat(1_000_000),
        ] {
            let text = format!("---\nname: a\ndescription: d\nx: {nested}\n---\n");
            assert!(parse_skill_md(&text).is_err());
        }
        let deep = format!("{}SKILL.md", "a/".repeat(1_000_000));
        let zip = zip_of(&[(deep, b"---\nname: a\ndescription: d\n---\n".to_vec())]);
        assert!(read_zip(&zip, &UploadLimits::default()).is_err());
    });
}
