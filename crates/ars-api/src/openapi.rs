//! The OpenAPI document's frame: title, security scheme, shared schemas. Paths come from the
//! `#[utoipa::path]` attributes on the handlers, collected by the router.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::ErrorBody;
use crate::routes::{ThreadNotice, ThreadSnapshot};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "ARS",
        description = "Agent runtime server: agents, subagents, skills, threads and runs.",
    ),
    modifiers(&BearerAuth),
    // The thread event stream's payloads, which its one response cannot name.
    components(schemas(ErrorBody, ars_domain::Subject, ThreadSnapshot, ThreadNotice)),
    tags(
        (name = "auth", description = "Login and API tokens"),
        (name = "users", description = "User accounts"),
        (name = "agents", description = "Agents and subagents (one kind of row)"),
        (name = "skills", description = "Agent Skills: built-in, shared and personal"),
        (name = "threads", description = "Conversations with an agent and their messages"),
        (name = "files", description = "A thread's workdir, shared with its subagents: list, download, upload, delete"),
        (name = "runs", description = "Runs of an agent on a thread, and their live events (SSE)"),
        (name = "models", description = "Model providers and the server default model (admins)"),
        (name = "mcp", description = "MCP servers agents use (stdio: admins; Streamable HTTP: everyone)"),
        (name = "knowledge", description = "Knowledge bases: documents agents search and cite"),
        (name = "usage", description = "Tokens and cost of runs, per day, agent, subagent, model and user"),
        (name = "catalog", description = "The model providers and built-in tools agents can use"),
        (name = "system", description = "Health and metadata"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// axum names a catch-all segment `{*name}`; OpenAPI knows only `{name}` (whose value may
/// then hold `/`, percent-encoded). The route table uses axum's spelling, the document
/// OpenAPI's.
pub fn state_wildcard_paths(openapi: &mut utoipa::openapi::OpenApi) {
    let paths = std::mem::take(&mut openapi.paths.paths);
    openapi.paths.paths = paths
        .into_iter()
        .map(|(path, item)| (path.replace("{*", "{"), item))
        .collect();
}

/// The served document states the configured password minimum (the generated one, and the
/// snapshot of it, the default).
pub fn state_password_minimum(openapi: &mut utoipa::openapi::OpenApi, min_chars: usize) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for (schema, field) in [
        ("CreateUserRequest", "password"),
        ("ResetPasswordRequest", "new_password"),
        ("ChangePasswordRequest", "new_password"),
    ] {
        let Some(RefOr::T(Schema::Object(request))) = components.schemas.get_mut(schema) else {
            continue;
        };
        if let Some(RefOr::T(Schema::Object(password))) = request.properties.get_mut(field) {
            password.min_length = Some(min_chars);
        }
    }
}

/// The rules of the request bodies that the derived schemas cannot state, in the order they
/// build on each other: the merged objects' members first, then their patch twins (a JSON
/// round trip that keeps no extensions), then the rules that add extensions.
pub fn state_rules(openapi: &mut utoipa::openapi::OpenApi) {
    state_name_list_rules(openapi);
    state_script_grammar(openapi);
    state_patch_nulls(openapi);
    state_cross_field_rules(openapi);
    state_wildcard_paths(openapi);
    state_mcp_server_rules(openapi);
    state_name_rules(openapi);
}

/// The domain's rules for the name lists of an agent's context (tools, knowledge bases, MCP
/// servers, Skills, subagents): at most `MAX_LIST_LEN` entries, no duplicates, each 1-128
/// characters and not blank. Vec items take no attributes in utoipa, so they are set here.
pub fn state_name_list_rules(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::ArrayItems;
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let Some(RefOr::T(Schema::Object(context))) = components.schemas.get_mut("AgentContext") else {
        return;
    };
    for list in ars_domain::context::NAME_LISTS {
        let Some(RefOr::T(Schema::Array(array))) = context.properties.get_mut(list) else {
            continue;
        };
        array.max_items = Some(ars_domain::context::MAX_LIST_LEN);
        array.unique_items = true;
        if let ArrayItems::RefOrSchema(item) = &mut array.items
            && let RefOr::T(Schema::Object(item)) = item.as_mut()
        {
            item.min_length = Some(1);
            item.max_length = Some(ars_domain::context::MAX_NAME_CHARS);
            item.pattern = Some(NOT_BLANK.into());
        }
    }
}

/// The names people give agents and knowledge bases hold no control characters and no
/// bidirectional controls, and are not blank (`ars_domain::text`), as their patterns say.
pub fn state_name_rules(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let pattern = ars_domain::text::name_pattern();
    for schema_name in [
        "AgentWrite",
        "AgentPatch",
        "KnowledgeBaseWrite",
        "KnowledgeBasePatch",
    ] {
        let Some(RefOr::T(Schema::Object(schema))) = components.schemas.get_mut(schema_name) else {
            continue;
        };
        if let Some(RefOr::T(Schema::Object(name))) = schema.properties.get_mut("name") {
            name.pattern = Some(pattern.clone());
        }
    }
}

/// "Has a character that is not white space", as the name and title patterns say it.
const NOT_BLANK: &str =
    r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]";

/// Rules between two fields of an agent write that a plain property list cannot state, in
/// JSON Schema's own words (`if`/`then`): a `SubAgentBackend` agent is never the default and
/// names no subagents of its own.
/// utoipa has no attribute for these, so they are added to the generated schemas here.
pub fn state_cross_field_rules(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for name in ["AgentWrite", "AgentPatch"] {
        let Some(RefOr::T(Schema::Object(schema))) = components.schemas.get_mut(name) else {
            continue;
        };
        let extensions = schema.extensions.get_or_insert_with(Default::default);
        extensions.insert(
            "if".into(),
            serde_json::json!({
                "properties": {"backend_id": {"const": "SubAgentBackend"}},
                "required": ["backend_id"]
            }),
        );
        extensions.insert(
            "then".into(),
            serde_json::json!({"properties": {
                "is_default": {"not": {"const": true}},
                "config_json": {"properties": {"context": {"properties": {
                    "subagents": {"anyOf": [{"type": "null"}, {"maxItems": 0}]}
                }}}}
            }}),
        );
    }
}

/// The largest token count a script's usage states: what a 64-bit integer holds in JSON.
const TOKENS_MAX: i64 = i64::MAX;

/// The scripted model's script, as the parser reads it: an array of turns (or `{turns}`),
/// each turn an object of known fields. The generated schema knows it only as JSON.
pub fn state_script_grammar(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let Some(RefOr::T(Schema::Object(model))) = components.schemas.get_mut("ModelConfig") else {
        return;
    };
    let delay = serde_json::json!({"type": "integer", "minimum": 0, "maximum": 600_000});
    let turn = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "description": "One model turn: text, tool calls, an error, delays, usage.",
        "properties": {
            "text": {"type": ["string", "null"]},
            "tool_calls": {"type": "array", "items": {
                "type": "object",
                "additionalProperties": false,
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "pattern": NOT_BLANK},
                    "arguments": {"type": ["object", "string", "null"]},
                    "id": {"type": ["string", "null"]}
                }
            }},
            "delay_ms": delay,
            "chunk_delay_ms": delay,
            "error": {"type": ["string", "null"]},
            "usage": {
                "type": ["object", "null"],
                "additionalProperties": false,
                "required": ["prompt_tokens", "completion_tokens"],
                "properties": {
                    "prompt_tokens": {"type": "integer", "minimum": 0, "maximum": TOKENS_MAX},
                    "completion_tokens": {"type": "integer", "minimum": 0, "maximum": TOKENS_MAX}
                }
            }
        }
    });
    let turns = serde_json::json!({"type": "array", "minItems": 1, "items": turn});
    let branch = serde_json::json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["input_contains", "turns"],
        "properties": {"input_contains": {"type": "string"}, "turns": turns}
    });
    let script = serde_json::json!({
        "description": "Provider `scripted` only: the turns the test/demo model plays, in \
            order (the last one repeats); in the object form, `when` branches play instead \
            when the last user message contains their `input_contains`. Text may use the \
            placeholders {{input}}, {{last_tool_result}}, {{last_tool_result.<field>}}, \
            {{tool_result.<i>.<field>}}, {{user_turns}} and {{system_prompt}}.",
        "oneOf": [
            turns,
            {"type": "object", "additionalProperties": false, "required": ["turns"],
             "properties": {"turns": turns, "when": {"type": "array", "items": branch}}},
            {"type": "null"}
        ]
    });
    if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(script) {
        model.properties.insert("script".into(), schema);
    }
    let extensions = model.extensions.get_or_insert_with(Default::default);
    extensions.insert(
        "if".into(),
        serde_json::json!({
            "required": ["script"],
            "properties": {"script": {"not": {"type": "null"}}}
        }),
    );
    extensions.insert(
        "then".into(),
        serde_json::json!({"properties": {"provider": {"const": "scripted"}}}),
    );
}

/// What this server can run, in its served document: the built-in tools an agent may name
/// (agent writes naming anything else are refused). Model providers are stated per request
/// ([`state_model_providers`]): an admin adds and removes them at run time.
pub fn state_runtime_catalog(openapi: &mut utoipa::openapi::OpenApi, tools: &[String]) {
    use utoipa::openapi::schema::ArrayItems;
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for name in ["AgentContext", "AgentContextPatch"] {
        if let Some(RefOr::T(Schema::Object(context))) = components.schemas.get_mut(name)
            && let Some(RefOr::T(Schema::Array(array))) = context.properties.get_mut("tools")
            && let ArrayItems::RefOrSchema(item) = &mut array.items
            && let RefOr::T(Schema::Object(item)) = item.as_mut()
        {
            item.enum_values = Some(tools.iter().map(|n| n.as_str().into()).collect());
        }
    }
}

/// States the slugs an agent write may name for the caller in `context.<property>` (the MCP
/// servers or knowledge bases they can see; with none, only an empty list), so a write naming
/// any other is a schema violation, as the 422 it gets says.
pub fn state_visible_slugs(
    openapi: &mut utoipa::openapi::OpenApi,
    property: &str,
    slugs: &[String],
) {
    use utoipa::openapi::schema::ArrayItems;
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for name in ["AgentContext", "AgentContextPatch"] {
        if let Some(RefOr::T(Schema::Object(context))) = components.schemas.get_mut(name)
            && let Some(RefOr::T(Schema::Array(array))) = context.properties.get_mut(property)
        {
            if slugs.is_empty() {
                array.max_items = Some(0);
            } else if let ArrayItems::RefOrSchema(item) = &mut array.items
                && let RefOr::T(Schema::Object(item)) = item.as_mut()
            {
                item.enum_values = Some(slugs.iter().map(|n| n.as_str().into()).collect());
            }
        }
    }
}

/// The rules of an MCP server write that its derived schema cannot state: what a command,
/// its arguments, working directory, variable names and values, header names (the client's
/// own refused, in any case) and values, the URL, the name and the tool names may hold — the
/// same rules as `ars_domain::mcp_server`, a little stricter where a pattern cannot say it
/// exactly (an IPv6 host, a port over 9999 are left out).
pub fn state_mcp_server_rules(openapi: &mut utoipa::openapi::OpenApi) {
    use ars_domain::mcp_server as rules;
    use serde_json::{Value, json};
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    // Any character but NUL, CR and LF; at least one that is not white space (U+0085, NEXT
    // LINE, is white space to the server's trim but not to a pattern's `\s`: named too).
    const ONE_LINE: &str = r"^[^\u0000\r\n]*[^\s\u0000\u0085][^\u0000\r\n]*$";
    // Letters in either case, so a pattern can refuse a header name whatever its case.
    let any_case = |name: &str| -> String {
        name.chars()
            .map(|c| match c {
                c if c.is_ascii_alphabetic() => {
                    format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
                }
                c => c.to_string(),
            })
            .collect()
    };
    let reserved = rules::RESERVED_HEADERS
        .iter()
        .map(|h| any_case(h))
        .collect::<Vec<_>>()
        .join("|");
    let text =
        json!({"type": "string", "maxLength": rules::TEXT_MAX_CHARS, "pattern": r"^[^\u0000]*$"});
    let header_value = json!({"type": "string", "maxLength": rules::HEADER_VALUE_MAX_CHARS,
        "pattern": r"^[ \t]*[!-~][ -~\t]*$"});
    let values = |value: &Value, names: Value| {
        json!({
            "type": ["object", "null"],
            "maxProperties": rules::MAX_VARIABLES,
            "propertyNames": names,
            "additionalProperties": {"oneOf": [
                value,
                {"type": "object", "additionalProperties": false, "required": ["secret"],
                 "properties": {"secret": value}},
                {"type": "null"},
            ]},
        })
    };
    let stdio = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "command"],
        "properties": {
            "type": {"type": "string", "enum": ["stdio"]},
            "command": {"type": "string", "maxLength": rules::TEXT_MAX_CHARS, "pattern": ONE_LINE,
                "description": "The program, e.g. `npx` or `/usr/bin/node`."},
            "args": {"type": "array", "maxItems": rules::MAX_ARGS, "items": text},
            "env": values(&text, json!({"type": "string", "pattern": format!(
                "^[A-Za-z_][A-Za-z0-9_]{{0,{}}}$", rules::VARIABLE_NAME_MAX_CHARS - 1)})),
            "cwd": {"type": ["string", "null"], "maxLength": rules::TEXT_MAX_CHARS,
                "pattern": r"^/([^\u0000\r\n/.][^\u0000\r\n/]*/?)*$",
                "description": "An absolute path in the sandbox without `..`; absent: the conversation's workdir."},
            "network": {"type": "boolean"},
        },
        "description": "Admins only. The command runs inside the sandbox of the run that uses it.",
    });
    let http = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["type", "url"],
        "properties": {
            "type": {"type": "string", "enum": ["streamable_http"]},
            "url": {"type": "string", "maxLength": rules::URL_MAX_CHARS,
                "pattern": r#"^https?://[A-Za-z0-9._~-]+(:[1-9][0-9]{0,3})?([/?][!"$-~]*)?$"#,
                "description": "`http://` or `https://`, e.g. `http://127.0.0.1:3001/mcp`; no credentials."},
            "headers": values(&header_value, json!({
                "type": "string",
                "pattern": format!(
                    "^(?!({reserved})$)[A-Za-z0-9!#$%&'*+.^_`|~-]{{1,{}}}$",
                    rules::VARIABLE_NAME_MAX_CHARS
                ),
            })),
        },
        "description": "An endpoint over Streamable HTTP.",
    });
    if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(json!({"oneOf": [stdio, http]})) {
        components.schemas.insert("TransportWrite".into(), schema);
    }
    let name_pattern = ars_domain::text::name_pattern();
    for (schema_name, nullable) in [("McpServerWrite", false), ("McpServerPatch", true)] {
        let Some(RefOr::T(Schema::Object(schema))) = components.schemas.get_mut(schema_name) else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        let kind = |t: &str| {
            if nullable {
                json!([t, "null"])
            } else {
                json!(t)
            }
        };
        let properties = &mut value["properties"];
        properties["slug"] = json!({"type": kind("string"), "pattern": format!(
            "^[a-z0-9]([a-z0-9-]{{0,{}}}[a-z0-9])?$", rules::SLUG_MAX_CHARS - 2),
            "description": "Unique; it never changes once created (another one is a 409)."});
        properties["name"] = json!({"type": kind("string"), "maxLength": rules::NAME_MAX_CHARS, "pattern": name_pattern});
        properties["description"] =
            json!({"type": kind("string"), "maxLength": rules::DESCRIPTION_MAX_CHARS});
        properties["enabled_tools"] = json!({
            "type": ["array", "null"], "maxItems": rules::MAX_ENABLED_TOOLS, "uniqueItems": true,
            "items": {"type": "string", "pattern": format!("^[A-Za-z0-9_./-]{{1,{}}}$", rules::TOOL_NAME_MAX_CHARS)},
            "description": "Tool names offered to agents; `null` (or absent in a new server): all of the server's.",
        });
        if let Ok(Schema::Object(object)) = serde_json::from_value::<Schema>(value) {
            *schema = object;
        }
    }
}

/// The model providers agents may name right now, in a served document (agent writes naming
/// any other are refused). Served per request, since admins add and remove providers at run
/// time.
pub fn state_model_providers(openapi: &mut utoipa::openapi::OpenApi, names: &[String]) {
    use utoipa::openapi::{RefOr, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let names: Vec<serde_json::Value> = names.iter().map(|n| n.as_str().into()).collect();
    // The patch twin keeps `provider` as the write has it (it is required there too).
    for name in ["ModelConfig", "ModelConfigPatch"] {
        if let Some(RefOr::T(Schema::Object(model))) = components.schemas.get_mut(name)
            && let Some(RefOr::T(Schema::Object(provider))) = model.properties.get_mut("provider")
        {
            provider.enum_values = Some(names.clone());
        }
    }
}

/// In a JSON merge patch a nested `null` removes a member too, so `{"share_config":
/// {"user_ids": null}}`, `{"config_json": {"context": {"limits": {"max_steps": null}}}}` and
/// `{"config_json": {"context": {"approvals": {"execute": null}}}}` are sound patches (the
/// member or rule goes back to its default). The patch bodies therefore name a `…Patch` twin of
/// each object they merge into, with every member the write does not require (and every rule
/// of `ApprovalRules`) nullable. A scripted model's `script` merges as free JSON, so its object
/// form takes any member as `null` too. Run it after the rules that shape the merged objects'
/// members and before those that add extensions (`if`/`then`): its JSON round trip keeps none.
pub fn state_patch_nulls(openapi: &mut utoipa::openapi::OpenApi) {
    use serde_json::{Value, json};
    use utoipa::openapi::{RefOr, Schema};
    const TWINS: [(&str, &str); 6] = [
        ("ShareConfig", "ShareConfigPatch"),
        ("AgentConfig", "AgentConfigPatch"),
        ("AgentContext", "AgentContextPatch"),
        ("Limits", "LimitsPatch"),
        ("ModelConfig", "ModelConfigPatch"),
        ("ApprovalRules", "ApprovalRulesPatch"),
    ];
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let to_twins = |mut text: String| {
        for (name, patch_name) in TWINS {
            text = text.replace(
                &format!("\"#/components/schemas/{name}\""),
                &format!("\"#/components/schemas/{patch_name}\""),
            );
        }
        text
    };
    let nullable = |schema: &mut Value| {
        if !accepts_null(schema) {
            *schema = json!({"oneOf": [{"type": "null"}, schema.take()]});
        }
    };
    for (name, patch_name) in TWINS {
        let Some(mut patch) = components
            .schemas
            .get(name)
            .and_then(|s| serde_json::to_value(s).ok())
        else {
            continue;
        };
        // A member a write requires stays required and not nullable in a patch too: without
        // it the merged object is never whole (a model's provider and name).
        let required: Vec<String> = patch
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(properties) = patch.get_mut("properties").and_then(Value::as_object_mut) {
            properties
                .iter_mut()
                .filter(|(name, _)| !required.contains(name))
                .for_each(|(_, property)| nullable(property));
            if let Some(forms) = properties
                .get_mut("script")
                .and_then(|script| script.get_mut("oneOf"))
                .and_then(Value::as_array_mut)
            {
                // `when: null` removes the branches; `turns: null` would leave no script
                // (the server refuses it), so `turns` stays as the write has it.
                for form in forms.iter_mut().filter(|f| f["type"] == "object") {
                    form["additionalProperties"] = json!({"type": "null"});
                    if let Some(when) = form.pointer_mut("/properties/when") {
                        nullable(when);
                    }
                }
            }
        }
        if let Some(rules) = patch
            .get_mut("additionalProperties")
            .filter(|rules| rules.is_object())
        {
            nullable(rules);
        }
        if let Some(object) = patch.as_object_mut() {
            object.insert(
                "description".into(),
                json!(format!(
                    "`{name}` in a merge patch: `null` removes a member (back to its default)."
                )),
            );
        }
        let Ok(patch) = serde_json::from_str::<RefOr<Schema>>(&to_twins(patch.to_string())) else {
            continue;
        };
        components.schemas.insert(patch_name.into(), patch);
    }
    for body_name in ["AgentPatch", "SkillSharePatch"] {
        let Some(body) = components
            .schemas
            .get(body_name)
            .and_then(|s| serde_json::to_value(s).ok())
        else {
            continue;
        };
        if let Ok(schema) = serde_json::from_str::<RefOr<Schema>>(&to_twins(body.to_string())) {
            components.schemas.insert(body_name.into(), schema);
        }
    }
}

/// Whether a JSON schema (as JSON) already admits `null`: a `null` type, or a `oneOf`/`anyOf`
/// branch that does (so `null` is never wrapped into two `oneOf` branches at once).
fn accepts_null(schema: &serde_json::Value) -> bool {
    use serde_json::Value;
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "null"),
        _ => ["oneOf", "anyOf"].iter().any(|key| {
            schema
                .get(key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(accepts_null))
        }),
    }
}
