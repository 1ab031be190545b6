//! What absurd documents cost to read: a million nested elements or levels in each format,
//! and the 120 KB HTML that used to crash the server (20,000 nested `<div>`s).
//!
//! `cargo bench -p ars-knowledge --bench hostile`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use ars_knowledge::extract::{ExtractLimits, Format, extract};

fn time(label: &str, format: Format, bytes: &[u8]) {
    let started = Instant::now();
    let outcome = match extract(format, bytes, ExtractLimits::default()) {
        Ok(text) => format!("read, {} characters", text.chars().count()),
        Err(e) => format!("refused: {e}"),
    };
    println!(
        "{label:<44} {:>8} KiB {:>10.1?}  {outcome}",
        bytes.len() / 1024,
        started.elapsed()
    );
}

fn main() {
    let repro = format!("<html><body>{}deep", "<div>".repeat(20_000));
    time("HTML, 20,000 nested <div>s", Format::Html, repro.as_bytes());
    let million = format!("<html><body>{}deep", "<div>".repeat(1_000_000));
    time(
        "HTML, 1,000,000 nested <div>s",
        Format::Html,
        million.as_bytes(),
    );
    time(
        "JSON, 1,000,000 nested arrays",
        Format::Json,
        "[".repeat(1_000_000).as_bytes(),
    );
    let xml = format!(
        "<w:document xmlns:w=\"w\"><w:body>{}</w:body></w:document>",
        "<w:sdt>".repeat(1_000_000)
    );
    time(
        "DOCX, 1,000,000 nested elements",
        Format::Docx,
        &ars_knowledge::samples::docx_of(&xml),
    );
    time(
        "Markdown, 1,000,000 nested quotes",
        Format::Markdown,
        format!("{} deep\n", ">".repeat(1_000_000)).as_bytes(),
    );
}
