//! The web UI's typed client is generated from `web/openapi.json`; that copy must be the
//! document the server serves, or the UI compiles against an API that does not exist.
//!
//! After changing the API, refresh the copy with
//! `ARS_UPDATE_OPENAPI=1 cargo test -p ars-api --test openapi_snapshot` and regenerate the
//! client in `web/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web/openapi.json")
}

#[test]
fn the_web_clients_openapi_snapshot_matches_the_server() {
    let served = serde_json::to_value(ars_api::openapi_document()).unwrap();
    let path = snapshot_path();
    if std::env::var_os("ARS_UPDATE_OPENAPI").is_some_and(|v| v == "1") {
        let mut text = serde_json::to_string_pretty(&served).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; create it with ARS_UPDATE_OPENAPI=1",
            path.display()
        )
    });
    let snapshot: Value = serde_json::from_str(&text).unwrap();
    let mut differences = Vec::new();
    diff(&snapshot, &served, String::new(), &mut differences);
    assert!(
        differences.is_empty(),
        "{} differs from the server's OpenAPI document at {differences:?}; refresh it with \
         `ARS_UPDATE_OPENAPI=1 cargo test -p ars-api --test openapi_snapshot` and regenerate \
         the web client",
        path.display()
    );
}

/// A merge patch removes a member with `null` at any depth the server merges (a context member,
/// a limit, a model field, an approval rule, a member of a script object), so the patch body's
/// schema admits `null` there; the write's schema does not.
#[test]
fn the_agent_patch_schema_admits_null_wherever_the_server_merges() {
    let doc = serde_json::to_value(ars_api::openapi_document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let text = schemas["AgentPatch"].to_string();
    assert!(
        text.contains("#/components/schemas/AgentConfigPatch"),
        "{text}"
    );
    let context = schemas["AgentConfigPatch"]["properties"]["context"].to_string();
    assert!(
        context.contains("#/components/schemas/AgentContextPatch"),
        "{context}"
    );
    let patch = &schemas["AgentContextPatch"]["properties"];
    for (member, twin) in [
        ("approvals", "ApprovalRulesPatch"),
        ("limits", "LimitsPatch"),
        ("model", "ModelConfigPatch"),
    ] {
        let text = patch[member].to_string();
        assert!(
            text.contains(&format!("#/components/schemas/{twin}")),
            "{member}: {text}"
        );
        assert!(text.contains(r#"{"type":"null"}"#), "{member}: {text}");
    }
    let rule = schemas["ApprovalRulesPatch"]["additionalProperties"].to_string();
    assert!(rule.contains(r#"{"type":"null"}"#), "{rule}");
    let write_rule = schemas["ApprovalRules"]["additionalProperties"].to_string();
    assert!(
        !write_rule.contains("null"),
        "a write's rule is never null: {write_rule}"
    );
    for limit in ["max_steps", "max_total_tokens"] {
        let text = schemas["LimitsPatch"]["properties"][limit].to_string();
        assert!(text.contains("null"), "{limit}: {text}");
    }
    // A model's provider and name are required in a patch as in a write: a model without
    // them is never whole.
    let name = schemas["ModelConfigPatch"]["properties"]["name"].to_string();
    assert!(!name.contains("null"), "{name}");
    assert_eq!(
        schemas["ModelConfigPatch"]["required"],
        serde_json::json!(["provider", "name"])
    );
    let max_tokens = schemas["ModelConfigPatch"]["properties"]["max_tokens"].to_string();
    assert!(max_tokens.contains("null"), "{max_tokens}");
    let forms = schemas["ModelConfigPatch"]["properties"]["script"]["oneOf"]
        .as_array()
        .unwrap();
    let object = forms.iter().find(|f| f["type"] == "object").unwrap();
    assert_eq!(
        object["additionalProperties"],
        serde_json::json!({"type": "null"})
    );
    // `when: null` removes a script's branches; `turns: null` leaves no script, so never.
    let when = object["properties"]["when"].to_string();
    assert!(when.contains(r#"{"type":"null"}"#), "{when}");
    let turns = object["properties"]["turns"].to_string();
    assert!(!turns.contains(r#"{"type":"null"}"#), "{turns}");
    // `null` is never admitted twice over (a `oneOf` would then refuse it).
    assert!(
        !schemas
            .to_string()
            .contains(r#"{"oneOf":[{"type":"null"},{"oneOf":[{"type":"null"}"#)
    );
}

/// The JSON pointers at which `a` and `b` differ (the first few), for a readable failure.
fn diff(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    const SHOWN: usize = 10;
    match (a, b) {
        _ if out.len() >= SHOWN => {}
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<_> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let pointer = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (x.get(key), y.get(key)) {
                    (Some(u), Some(v)) => diff(u, v, pointer, out),
                    _ => out.push(pointer),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff(u, v, format!("{at}/{i}"), out);
            }
        }
        _ if a != b => out.push(if at.is_empty() { "/".into() } else { at }),
        _ => {}
    }
}
