use serde_json::{Value, json};

use super::*;

fn compiled(schema: Value) -> ArgsSchema {
    ArgsSchema::new("s", "t", &schema).unwrap()
}

fn refused(schema: Value) -> SchemaRefused {
    ArgsSchema::new("s", "t", &schema).unwrap_err()
}

#[test]
fn arguments_are_checked_against_the_declared_schema() {
    let schema = compiled(
        json!({"type": "object", "properties": {"message": {"type": "string"}},
                "required": ["message"]}),
    );
    assert!(schema.check(&json!({"message": "hi"})).is_ok());
    let missing = schema.check(&json!({})).unwrap_err();
    assert!(missing.contains("message"), "{missing}");
    let wrong = schema.check(&json!({"message": 3})).unwrap_err();
    assert!(wrong.starts_with("/message: "), "{wrong}");
}

#[test]
fn a_schema_that_reaches_outside_is_refused_and_reads_nothing() {
    let error = refused(json!({"$ref": "file:///etc/passwd"}));
    assert_eq!(error, SchemaRefused::External("file:///etc/passwd".into()));
    assert!(matches!(
        refused(json!({"properties": {"a": {"$ref": "https://example.com/s.json#/x"}}})),
        SchemaRefused::External(_)
    ));
    assert!(matches!(
        refused(json!({"properties": {"a": {"$ref": "#/$defs/missing"}}})),
        SchemaRefused::Dangling(_)
    ));
}

#[test]
fn a_self_referencing_schema_is_refused() {
    // The reproduction: this overflowed the stack at the first call.
    let error = refused(json!({"type": "object", "allOf": [{"$ref": "#"}]}));
    assert_eq!(error, SchemaRefused::Loop("#".into()));
    assert!(error.to_string().contains("loop"), "{error}");
    assert!(matches!(
        refused(json!({"$ref": "#"})),
        SchemaRefused::Loop(_)
    ));
    assert!(matches!(
        refused(json!({"not": {"anyOf": [{"if": {"$ref": "#"}}]}})),
        SchemaRefused::Loop(_)
    ));
}

#[test]
fn mutually_referencing_definitions_are_refused() {
    // The reproduction: a → b → a grew without bound when a call was checked.
    let error = refused(json!({
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}
    }));
    assert!(matches!(error, SchemaRefused::Loop(_)), "{error:?}");
}

#[test]
fn recursion_through_the_arguments_is_checked_a_few_levels_then_left_to_the_server() {
    let schema = compiled(json!({
        "$defs": {"node": {
            "type": "object",
            "properties": {"name": {"type": "string"},
                           "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["name"]
        }},
        "$ref": "#/$defs/node"
    }));
    assert!(
        schema
            .check(&json!({"name": "a", "children": [{"name": "b"}]}))
            .is_ok()
    );
    let error = schema
        .check(&json!({"name": "a", "children": [{"children": []}]}))
        .unwrap_err();
    assert!(error.starts_with("/children/0: "), "{error}");
    // Deeper than the levels written out, anything goes.
    let mut deep = json!({"name": "leaf"});
    for _ in 0..10 {
        deep = json!({"name": "n", "children": [deep]});
    }
    deep["children"][0]["children"][0]["children"][0]["children"][0]["children"][0] =
        json!({"name": 1});
    assert!(schema.check(&deep).is_ok());
}

#[test]
fn references_beside_other_keywords_both_apply() {
    let schema = compiled(json!({
        "$defs": {"short": {"maxLength": 3}},
        "properties": {"code": {"$ref": "#/$defs/short", "pattern": "^[a-z]+$"}}
    }));
    assert!(schema.check(&json!({"code": "abc"})).is_ok());
    assert!(schema.check(&json!({"code": "abcd"})).is_err());
    assert!(schema.check(&json!({"code": "AB"})).is_err());
    // Draft 7 and earlier: `$ref` replaces its siblings.
    let legacy = compiled(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"short": {"maxLength": 3}},
        "properties": {"code": {"$ref": "#/definitions/short", "pattern": "^[a-z]+$"}}
    }));
    assert!(legacy.check(&json!({"code": "AB"})).is_ok());
    assert!(legacy.check(&json!({"code": "abcd"})).is_err());
}

#[test]
fn anchors_escaped_pointers_and_the_roots_own_id_resolve() {
    let schema = compiled(json!({
        "$id": "https://example.com/tool.json",
        "$defs": {
            "a/b": {"type": "integer"},
            "named": {"$anchor": "count", "minimum": 1},
            "pct%": {"type": "boolean"}
        },
        "properties": {
            "x": {"$ref": "#/$defs/a~1b"},
            "y": {"$ref": "https://example.com/tool.json#count"},
            "z": {"$ref": "#/$defs/pct%25"}
        }
    }));
    assert!(schema.check(&json!({"x": 1, "y": 2, "z": true})).is_ok());
    assert!(schema.check(&json!({"x": "1"})).is_err());
    assert!(schema.check(&json!({"y": 0})).is_err());
    assert!(schema.check(&json!({"z": 0})).is_err());
}

#[test]
fn schemas_too_deep_or_too_big_are_refused() {
    let mut deep = json!({"type": "string"});
    for _ in 0..100 {
        deep = json!({"properties": {"a": deep}});
    }
    assert!(matches!(refused(deep), SchemaRefused::TooDeep(64)));
    let big: serde_json::Map<String, Value> = (0..30_000)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    assert!(matches!(
        refused(json!({"properties": big})),
        SchemaRefused::TooLarge(_)
    ));
}

#[test]
fn references_that_multiply_are_refused_when_written_out_too_big() {
    // Each level refers twice to the next: 2^20 subschemas once written out.
    let mut defs = serde_json::Map::new();
    for i in 0..20 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d20".into(), json!({"type": "string"}));
    let error = refused(json!({"$defs": defs, "$ref": "#/$defs/d0"}));
    assert!(matches!(error, SchemaRefused::TooExpansive(_)), "{error:?}");
}

#[test]
fn a_branching_recursive_schema_is_written_out_fewer_times_rather_than_refused() {
    // A node with eight recursive children: three rounds would be 8^3 copies of 8 fields.
    let properties: serde_json::Map<String, Value> = (0..8)
        .map(|i| (format!("c{i}"), json!({"$ref": "#/$defs/n"})))
        .chain((0..40).map(|i| (format!("f{i}"), json!({"type": "string", "maxLength": 9}))))
        .collect();
    let schema = compiled(json!({
        "$defs": {"n": {"type": "object", "properties": properties}},
        "$ref": "#/$defs/n"
    }));
    assert!(schema.check(&json!({"c0": {"f1": "ok"}})).is_ok());
    assert!(schema.check(&json!({"c0": {"f1": 3}})).is_err());
}

#[test]
fn dynamic_references_and_nested_ids_are_refused() {
    assert_eq!(
        refused(json!({"$dynamicRef": "#meta"})),
        SchemaRefused::Unsupported("`$dynamicRef`")
    );
    assert_eq!(
        refused(json!({"properties": {"a": {"$id": "https://x/a", "type": "string"}}})),
        SchemaRefused::Unsupported("a nested `$id`")
    );
    // A property named `id` or `$id` is not the keyword.
    compiled(json!({"properties": {"id": {"type": "string"}, "$id": {"type": "string"}}}));
}

#[test]
fn a_schema_that_does_not_compile_checks_nothing() {
    let schema = compiled(json!({"$schema": "https://example.com/unknown", "type": "string"}));
    assert!(!schema.checks());
    assert!(schema.check(&json!(3)).is_ok());
}
