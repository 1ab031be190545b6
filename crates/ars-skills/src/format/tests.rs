//! Tests of SKILL.md parsing, one per rule.

use super::*;

fn skill(frontmatter: &str) -> String {
    format!("---\n{frontmatter}\n---\n# Body\n\nDo the thing.\n")
}

fn parse(frontmatter: &str) -> Result<SkillManifest, SkillError> {
    parse_skill_md(&skill(frontmatter))
}

/// Asserts the error is about `field` and its message mentions `words`.
fn check_field_error(frontmatter: &str, field: &str, words: &str) {
    match parse(frontmatter) {
        Err(err @ SkillError::Field { .. }) => {
            let message = err.to_string();
            assert!(message.contains(&format!("`{field}`")), "{message}");
            assert!(message.contains(words), "{message}");
        }
        other => panic!("expected a `{field}` error, got {other:?}"),
    }
}

#[test]
fn minimal_skill_parses() {
    let manifest = parse("name: pdf-tools\ndescription: Work with PDF files.").unwrap();
    assert_eq!(manifest.name, "pdf-tools");
    assert_eq!(manifest.description, "Work with PDF files.");
    assert_eq!(manifest.body, "# Body\n\nDo the thing.\n");
    assert_eq!(manifest.license, None);
    assert!(manifest.metadata.is_empty() && manifest.allowed_tools.is_empty());
}

#[test]
fn all_fields_are_read() {
    let manifest = parse(
        "name: a1\ndescription: >\n  Folded\n  text.\nlicense: Apache-2.0\n\
         compatibility: needs python3\nmetadata:\n  author: ars\n  version: 1.0\n  beta: true\n\
         allowed-tools: Bash(git:*) Read\nx-custom: [1, 2]",
    )
    .unwrap();
    assert_eq!(manifest.description, "Folded text.");
    assert_eq!(manifest.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(manifest.compatibility.as_deref(), Some("needs python3"));
    assert_eq!(manifest.metadata["author"], "ars");
    assert_eq!(manifest.metadata["version"], "1.0");
    assert_eq!(manifest.metadata["beta"], "true");
    assert_eq!(manifest.allowed_tools, ["Bash(git:*)", "Read"]);
    assert_eq!(manifest.extra["x-custom"], serde_json::json!([1, 2]));
}

#[test]
fn allowed_tools_may_be_a_list() {
    let manifest = parse("name: a\ndescription: d\nallowed-tools: [read_file, execute]").unwrap();
    assert_eq!(manifest.allowed_tools, ["read_file", "execute"]);
}

#[test]
fn allowed_tools_of_numbers_is_refused() {
    check_field_error(
        "name: a\ndescription: d\nallowed-tools: [1]",
        "allowed-tools",
        "list",
    );
    check_field_error(
        "name: a\ndescription: d\nallowed-tools: {a: b}",
        "allowed-tools",
        "list",
    );
}

#[test]
fn crlf_and_bom_are_tolerated() {
    let text = "\u{feff}---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n";
    let manifest = parse_skill_md(text).unwrap();
    assert_eq!(manifest.name, "a");
    assert_eq!(manifest.body, "body\n");
}

#[test]
fn empty_body_is_fine() {
    let manifest = parse_skill_md("---\nname: a\ndescription: d\n---").unwrap();
    assert_eq!(manifest.body, "");
}

#[test]
fn missing_frontmatter_is_refused() {
    assert_eq!(
        parse_skill_md("# Just markdown\n"),
        Err(SkillError::MissingFrontmatter)
    );
    assert_eq!(
        parse_skill_md("\n---\nname: a\n---\n"),
        Err(SkillError::MissingFrontmatter)
    );
    assert_eq!(parse_skill_md(""), Err(SkillError::MissingFrontmatter));
}

#[test]
fn unterminated_frontmatter_is_refused() {
    assert_eq!(
        parse_skill_md("---\nname: a\ndescription: d\n"),
        Err(SkillError::UnterminatedFrontmatter)
    );
}

#[test]
fn oversized_frontmatter_is_refused() {
    let big = format!("name: a\ndescription: d\nx: \"{}\"", "y".repeat(70 * 1024));
    assert_eq!(
        parse(&big),
        Err(SkillError::FrontmatterTooLarge {
            limit: MAX_FRONTMATTER_BYTES
        })
    );
}

#[test]
fn non_mapping_frontmatter_is_refused() {
    for (yaml, found) in [
        ("- a\n- b", "a list"),
        ("just text", "a string"),
        ("", "empty"),
    ] {
        assert_eq!(
            parse(yaml),
            Err(SkillError::FrontmatterNotMapping { found }),
            "{yaml}"
        );
    }
}

#[test]
fn yaml_syntax_error_is_refused_with_a_short_message() {
    let yaml = format!("name: a\ndescription: [unclosed {}", "z ".repeat(5000));
    match parse(&yaml) {
        Err(SkillError::FrontmatterSyntax(message)) => {
            assert!(message.chars().count() <= 301, "{message}");
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn missing_name_is_refused() {
    check_field_error("description: d", "name", "is required");
}

#[test]
fn non_string_name_is_refused() {
    check_field_error("name: 12\ndescription: d", "name", "must be a string");
}

#[test]
fn empty_name_is_refused() {
    check_field_error("name: ''\ndescription: d", "name", "1–64 characters");
}

#[test]
fn name_longer_than_64_characters_is_refused() {
    let ok = "a".repeat(64);
    assert!(parse(&format!("name: {ok}\ndescription: d")).is_ok());
    check_field_error(
        &format!("name: {}\ndescription: d", "a".repeat(65)),
        "name",
        "1–64 characters",
    );
}

#[test]
fn name_with_capitals_spaces_or_underscores_is_refused() {
    for name in ["Pdf", "pdf tools", "pdf_tools", "pdf.tools", "数据"] {
        check_field_error(
            &format!("name: '{name}'\ndescription: d"),
            "name",
            "lowercase letters, digits and `-`",
        );
    }
}

#[test]
fn name_with_leading_or_trailing_hyphen_is_refused() {
    check_field_error(
        "name: -pdf\ndescription: d",
        "name",
        "start or end with `-`",
    );
    check_field_error(
        "name: pdf-\ndescription: d",
        "name",
        "start or end with `-`",
    );
}

#[test]
fn name_with_double_hyphen_is_refused() {
    check_field_error("name: pdf--tools\ndescription: d", "name", "`--`");
}

#[test]
fn validate_name_accepts_digits_and_single_hyphens() {
    assert_eq!(validate_name("csv-data-2"), Ok(()));
    assert!(matches!(
        validate_name("a--b"),
        Err(SkillError::InvalidName { .. })
    ));
}

#[test]
fn missing_description_is_refused() {
    check_field_error("name: a", "description", "is required");
}

#[test]
fn blank_description_is_refused() {
    check_field_error(
        "name: a\ndescription: '   '",
        "description",
        "must not be empty",
    );
}

#[test]
fn non_string_description_is_refused() {
    check_field_error(
        "name: a\ndescription: [x]",
        "description",
        "must be a string",
    );
}

#[test]
fn description_over_1024_characters_is_refused() {
    check_field_error(
        &format!("name: a\ndescription: {}", "d".repeat(1025)),
        "description",
        "at most 1024 characters",
    );
}

#[test]
fn description_length_counts_characters_not_bytes() {
    // 1024 Chinese characters are 3072 bytes of UTF-8 but within the limit.
    let manifest = parse(&format!("name: a\ndescription: {}", "数".repeat(1024))).unwrap();
    assert_eq!(manifest.description.chars().count(), 1024);
    check_field_error(
        &format!("name: a\ndescription: {}", "数".repeat(1025)),
        "description",
        "at most 1024",
    );
}

#[test]
fn compatibility_over_500_characters_is_refused() {
    check_field_error(
        &format!(
            "name: a\ndescription: d\ncompatibility: {}",
            "c".repeat(501)
        ),
        "compatibility",
        "1–500 characters",
    );
    check_field_error(
        "name: a\ndescription: d\ncompatibility: ''",
        "compatibility",
        "1–500",
    );
}

#[test]
fn non_string_license_is_refused() {
    check_field_error(
        "name: a\ndescription: d\nlicense: 3",
        "license",
        "must be a string",
    );
}

#[test]
fn metadata_that_is_not_a_mapping_is_refused() {
    check_field_error(
        "name: a\ndescription: d\nmetadata: [a]",
        "metadata",
        "mapping",
    );
}

#[test]
fn nested_metadata_value_is_refused() {
    check_field_error(
        "name: a\ndescription: d\nmetadata:\n  tags: [a, b]",
        "metadata.tags",
        "must be a string",
    );
    check_field_error(
        "name: a\ndescription: d\nmetadata:\n  owner: ~",
        "metadata.owner",
        "must be a string",
    );
}

#[test]
fn unknown_keys_are_kept_in_extra() {
    let manifest = parse("name: a\ndescription: d\nversion: 2\nallowed_tools: x").unwrap();
    assert_eq!(manifest.extra["version"], serde_json::json!(2));
    assert_eq!(manifest.extra["allowed_tools"], serde_json::json!("x"));
    assert!(manifest.allowed_tools.is_empty());
}

#[test]
fn non_text_top_level_key_is_refused() {
    check_field_error("name: a\ndescription: d\n1: x", "1", "text key");
}

#[test]
fn yaml_alias_bomb_is_refused() {
    let mut yaml = String::from("name: a\ndescription: d\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n");
    for n in 1..12 {
        let prev = n - 1;
        yaml.push_str(&format!(
            "l{n}: &l{n} [*l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}, *l{prev}]\n"
        ));
    }
    let started = std::time::Instant::now();
    assert!(matches!(
        parse(&yaml),
        Err(SkillError::FrontmatterSyntax(_))
    ));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn absurdly_nested_frontmatter_is_refused_with_a_clear_reason() {
    // A million levels: past the frontmatter's size bound before any parsing.
    let deep = format!(
        "---\nname: a\ndescription: d\nx: {}\n---\n",
        "[".repeat(1_000_000)
    );
    assert!(
        matches!(
            parse_skill_md(&deep),
            Err(SkillError::FrontmatterTooLarge { .. })
        ),
        "{:?}",
        parse_skill_md(&deep)
    );
    // Within the size bound, YAML's own depth bound answers.
    for nested in [
        format!("x: {}", "[".repeat(60_000)),
        format!("x: {}", "{a: ".repeat(10_000)),
        // Block sequences nest on one line only where a value begins at a line's start.
        format!("x:\n{}1", "- ".repeat(20_000)),
    ] {
        let text = format!("---\nname: a\ndescription: d\n{nested}\n---\n");
        let error = parse_skill_md(&text).unwrap_err();
        assert!(error.to_string().contains("nested deeper than"), "{error}");
    }
}

#[test]
fn aliases_that_multiply_are_refused() {
    // "Billion laughs": each line refers nine times to the one before.
    let mut yaml = String::from("name: a\ndescription: d\nl0: &l0 [x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*l{}", i - 1);
        yaml.push_str(&format!("l{i}: &l{i} [{}]\n", vec![prev; 9].join(", ")));
    }
    let error = parse(&yaml).unwrap_err();
    assert!(
        matches!(error, SkillError::FrontmatterSyntax(_)),
        "{error:?}"
    );
}
