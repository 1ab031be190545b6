//! Every document reader over random and absurd input: each answers (text or a reason) on a
//! thread with a small stack (256 KiB, an eighth of what the server's threads have) and
//! within a memory bound (this binary's allocator refuses more, which aborts the test) — a
//! bounded fuzz run, part of the test command.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;

use ars_knowledge::chunk::{ChunkSettings, chunk};
use ars_knowledge::extract::{ExtractLimits, Format, extract};
use cap::Cap;
use proptest::prelude::*;
use proptest::test_runner::Config;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Memory this whole binary may hold at once (its tests run side by side).
const MEMORY: usize = 2 * 1024 * 1024 * 1024;

/// Runs `read` on a small stack under the memory bound.
fn bounded<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    let _ = ALLOCATOR.set_limit(MEMORY);
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(read)
        .expect("a thread")
        .join()
        .expect("the reader never panics")
}

fn read(format: Format, bytes: Vec<u8>) {
    bounded(move || {
        if let Ok(text) = extract(format, &bytes, ExtractLimits::default()) {
            chunk(&text, format.text_kind(), ChunkSettings::default());
        }
    });
}

/// Markup made of these pieces in any order: unbalanced, nested, broken.
fn markup(pieces: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((prop::sample::select(pieces), 1usize..2000), 0..40).prop_map(|runs| {
        runs.into_iter()
            .flat_map(|(piece, times)| piece.repeat(times).into_bytes())
            .collect()
    })
}

proptest! {
    #![proptest_config(Config { cases: 96, failure_persistence: None, ..Config::default() })]

    #[test]
    fn html_of_any_shape_is_read(bytes in markup(&[
        "<div>", "</div>", "<h1>", "</h2>", "<script>", "</script>", "<style>", "<!--", "-->",
        "<table><tr><td>", "text ", "中文", "&amp;", "&#x", "<", ">", "<head>", "<title>",
        "<br/>", "<p", "\"", "'", "<![CDATA[", "<textarea>", "<plaintext>",
    ])) {
        read(Format::Html, bytes);
    }

    #[test]
    fn json_of_any_shape_is_read(bytes in markup(&[
        "[", "]", "{", "}", "\"a\":", "\"", "\\\"", ",", "1", "null", "\"中\"", ":", " ",
    ])) {
        read(Format::Json, bytes);
    }

    #[test]
    fn csv_of_any_shape_is_read(bytes in markup(&[
        "a,b\n", "\"", "\"\"", ",", "\n", "\r\n", "x", "中文", ";",
    ])) {
        read(Format::Csv, bytes);
    }

    #[test]
    fn markdown_of_any_shape_is_chunked(bytes in markup(&[
        "# ", "## ", "> ", "- ", "```", "\n", "\n\n", "text", "。", "Mr. ", "1. ", "|", "***",
    ])) {
        read(Format::Markdown, bytes);
    }

    #[test]
    fn word_documents_of_any_shape_are_read(body in markup(&[
        "<w:p>", "</w:p>", "<w:r>", "<w:t>", "</w:t>", "text", "<w:sdt>", "</w:sdt>", "&amp;",
        "&#12345;", "<w:pStyle w:val=\"Heading1\"/>", "<", "<!DOCTYPE x [<!ENTITY a \"b\">]>",
    ])) {
        let xml = format!(
            "<w:document xmlns:w=\"w\"><w:body>{}</w:body></w:document>",
            String::from_utf8_lossy(&body)
        );
        read(Format::Docx, ars_knowledge::samples::docx_of(&xml));
    }

    #[test]
    fn random_bytes_in_every_format_are_read_or_refused(
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
        format in prop::sample::select(vec![
            Format::Text, Format::Markdown, Format::Html, Format::Docx, Format::Csv, Format::Json,
        ]),
    ) {
        read(format, bytes);
    }
}

#[test]
fn a_million_levels_of_every_kind_of_nesting_are_read_or_refused() {
    for (format, text) in [
        (Format::Html, "<div>".repeat(1_000_000)),
        (Format::Html, "<b><i>".repeat(500_000)),
        (Format::Json, "[".repeat(1_000_000)),
        (Format::Json, "{\"a\":".repeat(1_000_000)),
        (Format::Markdown, format!("{}x", "> ".repeat(1_000_000))),
        (Format::Markdown, format!("{}x", "- ".repeat(1_000_000))),
        (Format::Csv, "\"".repeat(1_000_001)),
    ] {
        read(format, text.into_bytes());
    }
    let xml = format!("<w:document>{}</w:document>", "<w:p>".repeat(1_000_000));
    read(Format::Docx, ars_knowledge::samples::docx_of(&xml));
}
