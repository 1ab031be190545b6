//! Runs the `csv-data` built-in skill's scripts on a small file with a UTF-8 BOM, CRLF line
//! endings, a quoted field and a Chinese column, and checks their summary tables.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("builtin/csv-data/scripts")
        .join(name)
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `program script args…` and returns its standard output, failing on a non-zero exit.
fn run(program: &str, script: &Path, args: &[&Path]) -> String {
    let out = Command::new(program)
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{program} {} failed: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn csv_summary_py_summarises_a_csv_with_a_bom_and_chinese_text() {
    if !has("python3") {
        eprintln!("skipped: python3 is not installed on this machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("data.csv");
    std::fs::write(
        &csv,
        "\u{feff}name,城市,score\r\nalice,北京,1.5\r\n\"dave, jr\",广州,\r\nbob,上海,9\r\ncarol,北京,5\r\n",
    )
    .unwrap();

    let out = run("python3", &script("csv_summary.py"), &[&csv]);
    assert!(out.contains("encoding: utf-8\n"), "{out}");
    assert!(out.contains("delimiter: ,\n"), "{out}");
    assert!(out.contains("rows: 4 (not counting the header)\n"), "{out}");
    assert!(out.contains("columns: 3\n"), "{out}");
    // The BOM is not part of the first column's name; the quoted comma is one field.
    assert!(out.contains("\nname\t4\t4\t\t\t\n"), "{out}");
    assert!(out.contains("\n城市\t4\t3\t\t\t\n"), "{out}");
    assert!(out.contains("\nscore\t3\t3\t1.5\t9\t5.1667\n"), "{out}");
}

#[test]
fn csv_summary_py_reads_tsv_given_the_delimiter() {
    if !has("python3") {
        eprintln!("skipped: python3 is not installed on this machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("data.txt");
    std::fs::write(&tsv, "a\tb\n1\tx\n3\ty\n").unwrap();
    let out = Command::new("python3")
        .arg(script("csv_summary.py"))
        .arg(&tsv)
        .args(["--delimiter", "tab"])
        .output()
        .unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(out.contains("delimiter: tab\n"), "{out}");
    assert!(out.contains("\na\t2\t2\t1\t3\t2\n"), "{out}");
    assert!(out.contains("\nb\t2\t2\t\t\t\n"), "{out}");
}

#[test]
fn csv_summary_sh_summarises_without_python() {
    assert!(has("bash"), "bash is needed to run the fallback script");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("data.csv");
    std::fs::write(
        &csv,
        "\u{feff}name,城市,score\r\nalice,北京,1.5\r\nbob,上海,9\r\ncarol,北京,5\r\ndave,,\r\n",
    )
    .unwrap();
    let out = run("bash", &script("csv_summary.sh"), &[&csv]);
    assert!(out.contains("delimiter: ,\n"), "{out}");
    assert!(out.contains("rows: 4 (not counting the header)\n"), "{out}");
    assert!(out.contains("\nname\t4\t4\t\t\t\n"), "{out}");
    assert!(out.contains("\n城市\t3\t2\t\t\t\n"), "{out}");
    assert!(out.contains("\nscore\t3\t3\t1.5\t9\t5.1667\n"), "{out}");

    let tsv = dir.path().join("data.tsv");
    std::fs::write(&tsv, "a\tb\n1\tx\n3\ty\n").unwrap();
    let out = run("bash", &script("csv_summary.sh"), &[&tsv]);
    assert!(out.contains("delimiter: tab\n"), "{out}");
    assert!(out.contains("\na\t2\t2\t1\t3\t2\n"), "{out}");
}
