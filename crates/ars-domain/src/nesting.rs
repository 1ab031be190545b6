//! How deep untrusted JSON nests, measured without recursion, so every reader of it can
//! refuse too-deep input with the same clear words before anything walks it.
//!
//! `serde_json` itself stops at 128 levels (with a message about its "recursion limit");
//! [`check_json_depth`] reads the text once, byte by byte, and says "nested deeper than N
//! levels" instead, for any N. Code that walks a parsed value recursively may rely on the
//! bound it was parsed under.

/// The deepest JSON ARS reads from anyone: `serde_json`'s own bound.
pub const MAX_JSON_DEPTH: usize = 128;

/// Input nested deeper than a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("nested deeper than {limit} levels")]
pub struct TooDeep {
    pub limit: usize,
}

/// Refuses JSON text whose arrays and objects nest deeper than `limit`, in one pass over its
/// bytes (strings, escapes included, are skipped). Text that is not JSON at all passes: the
/// parser says what is wrong with it.
pub fn check_json_depth(text: &[u8], limit: usize) -> Result<(), TooDeep> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in text {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(TooDeep { limit });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// How deep `value` nests (a scalar is 1), without recursion.
pub fn value_depth(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match value {
            serde_json::Value::Array(items) => {
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            serde_json::Value::Object(map) => {
                stack.extend(map.values().map(|item| (item, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_counted_outside_strings_only() {
        assert!(check_json_depth(br#"{"a": [1, {"b": "[[[["}]}"#, 3).is_ok());
        assert_eq!(
            check_json_depth(br#"{"a": [1, {"b": [2]}]}"#, 3),
            Err(TooDeep { limit: 3 })
        );
        assert!(check_json_depth(br#"["\"[[[[", "\\", []]"#, 2).is_ok());
        assert_eq!(
            TooDeep { limit: 128 }.to_string(),
            "nested deeper than 128 levels"
        );
    }

    #[test]
    fn a_million_levels_are_refused_in_one_pass() {
        let deep = "[".repeat(1_000_000);
        assert_eq!(
            check_json_depth(deep.as_bytes(), MAX_JSON_DEPTH),
            Err(TooDeep { limit: 128 })
        );
        let fine = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(check_json_depth(fine.as_bytes(), MAX_JSON_DEPTH).is_ok());
    }

    #[test]
    fn value_depth_counts_levels() {
        assert_eq!(value_depth(&serde_json::json!(1)), 1);
        assert_eq!(value_depth(&serde_json::json!({"a": [1, {"b": []}]})), 4);
    }
}
