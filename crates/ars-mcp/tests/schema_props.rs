//! The input-schema checker over random schemas full of `$ref`s: whatever a server declares,
//! reading it and checking arguments against it ends, within a small stack (a thread's of
//! 1 MiB, half of what the server's threads have) and a memory bound (this binary's
//! allocator refuses more than 1 GiB beyond what is held when a case starts, which aborts
//! the test).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;

use ars_mcp::ArgsSchema;
use cap::Cap;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// Memory one case may take beyond what the binary holds when it starts (its tests run side
/// by side, and what libraries initialise once stays).
const MEMORY: usize = 1024 * 1024 * 1024;

const DEFS: usize = 5;

/// A reference to a definition, to the root or to a place that may not be a schema.
fn reference() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0..DEFS).prop_map(|i| json!({"$ref": format!("#/$defs/d{i}")})),
        Just(json!({"$ref": "#"})),
        Just(json!({"$ref": "#/properties/a"})),
        Just(json!({"$ref": "#/$defs/d0/properties/b"})),
        Just(json!({"$ref": "#/$defs/missing"})),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"type": "string", "maxLength": 5})),
        Just(json!({"type": "integer", "minimum": 0})),
        Just(json!({"type": "object"})),
        Just(json!({"type": "array"})),
        Just(json!({"enum": [1, "a", null]})),
        Just(json!(true)),
        Just(json!(false)),
        reference(),
    ]
}

/// A schema tree whose leaves are often references.
fn schema() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"allOf": v})),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| json!({"anyOf": v})),
            prop::collection::vec(inner.clone(), 1..3).prop_map(|v| json!({"oneOf": v})),
            inner.clone().prop_map(|s| json!({"not": s})),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"if": a, "then": b})),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| json!({"type": "object", "properties": {"a": a, "b": b}})),
            inner
                .clone()
                .prop_map(|s| json!({"type": "array", "items": s})),
            inner
                .clone()
                .prop_map(|s| json!({"additionalProperties": s})),
            (inner.clone(), reference()).prop_map(|(s, r)| {
                let mut s = s;
                if let (Value::Object(map), Value::Object(r)) = (&mut s, r) {
                    map.extend(r);
                }
                s
            }),
        ]
    })
}

fn document() -> impl Strategy<Value = Value> {
    (schema(), prop::collection::vec(schema(), DEFS)).prop_map(|(root, defs)| {
        let mut root = match root {
            Value::Object(map) => map,
            other => {
                let mut map = Map::new();
                map.insert("allOf".into(), json!([other]));
                map
            }
        };
        let defs: Map<String, Value> = defs
            .into_iter()
            .enumerate()
            .map(|(i, d)| (format!("d{i}"), d))
            .collect();
        root.insert("$defs".into(), Value::Object(defs));
        Value::Object(root)
    })
}

fn instance() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 64, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![Just("a".to_owned()), Just("b".to_owned()), "[a-z]{1,3}"],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One case at a time across this binary's tests: the allocator's limit is one for the whole
/// process, so cases of two tests side by side would each be held to what the other left.
static ONE_CASE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Reads `schema` and checks each instance against it on a thread with a 1 MiB stack.
fn read_and_check(schema: Value, instances: Vec<Value>) -> bool {
    let _one = ONE_CASE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    ALLOCATOR
        .set_limit(ALLOCATOR.allocated().saturating_add(MEMORY))
        .expect("a limit above what is allocated");
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(move || match ArgsSchema::new("prop", "tool", &schema) {
            Ok(checker) => {
                for instance in &instances {
                    let _ = checker.check(instance);
                }
                true
            }
            Err(_) => false,
        })
        .expect("a thread")
        .join()
        .expect("the checker never panics")
}

#[test]
fn random_schemas_with_references_never_overflow_or_run_away() {
    let mut runner = TestRunner::new(Config {
        cases: 400,
        failure_persistence: None,
        ..Config::default()
    });
    let mut compiled = 0usize;
    let mut refused = 0usize;
    let strategy = (document(), prop::collection::vec(instance(), 1..6));
    for _ in 0..400 {
        let (schema, instances) = strategy
            .new_tree(&mut runner)
            .expect("a generated case")
            .current();
        if read_and_check(schema, instances) {
            compiled += 1;
        } else {
            refused += 1;
        }
    }
    eprintln!("compiled {compiled}, refused {refused}");
    // Both outcomes occur, so the generator reaches the checker's every path.
    assert!(compiled > 40, "compiled {compiled}, refused {refused}");
    assert!(refused > 40, "compiled {compiled}, refused {refused}");
}

proptest! {
    #![proptest_config(Config { cases: 200, failure_persistence: None, ..Config::default() })]

    #[test]
    fn checking_ends_for_any_schema_and_arguments(
        schema in document(),
        instances in prop::collection::vec(instance(), 1..4),
    ) {
        read_and_check(schema, instances);
    }
}

#[test]
fn the_reproductions_are_refused_within_the_bounds() {
    assert!(!read_and_check(
        json!({"type": "object", "allOf": [{"$ref": "#"}]}),
        vec![json!({"a": 1})]
    ));
    assert!(!read_and_check(
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}},
               "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
        vec![json!({"x": 1})]
    ));
}
