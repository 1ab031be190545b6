//! The core names no capability: no source file of the runtime core imports a plug-in module.
//! Capabilities reach the core only through the plug-in seam (`plugin.rs`), assembled by the
//! server; the crate root (`lib.rs`) only declares and re-exports modules. Read from the
//! sources, so a new core file is checked the day it is added.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// The plug-in modules: one folder each under `src/`.
const PLUGINS: [&str; 4] = ["subagents", "skills", "mcp", "knowledge"];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The code of a source file without its comments, so documentation may speak of plug-ins.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where `code` names a plug-in module by path: `crate::subagents`, `super::skills`,
/// `ars_runtime::mcp`, or a `use` of it from the crate root such as `use crate::{knowledge, …}`.
fn plugin_paths(code: &str) -> Vec<String> {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut found = Vec::new();
    for word in words {
        let segments: Vec<&str> = word.split("::").collect();
        for pair in segments.windows(2) {
            let roots = ["crate", "super", "self", "ars_runtime"];
            if roots.contains(&pair[0]) && PLUGINS.contains(&pair[1]) {
                found.push(word.to_string());
            }
        }
    }
    for plugin in PLUGINS {
        for brace in code.match_indices("crate::{") {
            let group = &code[brace.0..];
            let group = &group[..group.find('}').unwrap_or(group.len())];
            if group
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == plugin)
            {
                found.push(group.to_string());
            }
        }
    }
    found
}

#[test]
fn the_core_names_no_capability() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut core = 0;
    let mut offences = Vec::new();
    for path in sources(&src) {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str();
        let in_plugin = PLUGINS.iter().any(|p| first == *p);
        if in_plugin || rel == Path::new("lib.rs") {
            continue;
        }
        core += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for found in plugin_paths(&code(&text)) {
            offences.push(format!("{}: {found}", rel.display()));
        }
    }
    assert!(core >= 10, "the core's files were not found under {src:?}");
    assert!(
        offences.is_empty(),
        "core files name a plug-in module (only the plug-in seam may reach them):\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_check_sees_a_plugin_import() {
    for code in [
        "use crate::subagents::SubagentRun;",
        "let x = super::super::skills::SkillLibrary::new();",
        "use crate::{metrics, knowledge::KnowledgeHub};",
        "ars_runtime::mcp::McpHub",
    ] {
        assert!(!plugin_paths(code).is_empty(), "{code}");
    }
    assert!(plugin_paths("use crate::tool::Tool; // see crate::subagents").len() == 1);
    assert!(plugin_paths(&code("use crate::tool::Tool; // see crate::subagents")).is_empty());
    assert!(plugin_paths("let skills = crate::metrics::subagent_run_started;").is_empty());
}
