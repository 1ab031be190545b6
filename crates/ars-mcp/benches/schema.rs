//! What checking a tool's input schema costs: reading it when the tool list is read (written
//! out with its references followed, then compiled) and checking one call's arguments — for
//! an ordinary schema, a recursive one, and the hostile ones that are refused.
//!
//! `cargo bench -p ars-mcp --bench schema -- [ROUNDS]` (default 200).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use ars_mcp::ArgsSchema;
use serde_json::{Map, Value, json};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn time(label: &str, rounds: usize, mut f: impl FnMut()) {
    let mut times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{label:<52} p50 {:>10.3?}  p99 {:>10.3?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let ordinary = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1},
            "mode": {"enum": ["read", "write", "append"]},
            "lines": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 100},
            "options": {"type": "object", "properties": {
                "encoding": {"type": "string"}, "follow": {"type": "boolean"}},
                "additionalProperties": false}
        },
        "required": ["path"]
    });
    let args = json!({"path": "/tmp/a", "mode": "read", "lines": [1, 2, 3],
                      "options": {"encoding": "utf-8", "follow": true}});
    let recursive = json!({
        "$defs": {"node": {"type": "object", "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
        "$ref": "#/$defs/node"
    });
    let mut tree = json!({"name": "leaf"});
    for _ in 0..6 {
        tree = json!({"name": "n", "children": [tree.clone(), tree]});
    }
    let mut defs = Map::new();
    for i in 0..20 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d20".into(), json!({"type": "string"}));
    let multiplying: Value = json!({"$defs": defs, "$ref": "#/$defs/d0"});

    time("read an ordinary schema", rounds, || {
        ArgsSchema::new("b", "t", &ordinary).unwrap();
    });
    let checker = ArgsSchema::new("b", "t", &ordinary).unwrap();
    time("check an ordinary call", rounds * 50, || {
        checker.check(&args).unwrap();
    });
    time("read a recursive schema (a tree of nodes)", rounds, || {
        ArgsSchema::new("b", "t", &recursive).unwrap();
    });
    let checker = ArgsSchema::new("b", "t", &recursive).unwrap();
    time("check a 127-node tree against it", rounds * 10, || {
        checker.check(&tree).unwrap();
    });
    time("refuse {allOf: [{$ref: #}]}", rounds, || {
        ArgsSchema::new(
            "b",
            "t",
            &json!({"type": "object", "allOf": [{"$ref": "#"}]}),
        )
        .unwrap_err();
    });
    time("refuse references that multiply to 2^20", rounds, || {
        ArgsSchema::new("b", "t", &multiplying).unwrap_err();
    });
}
