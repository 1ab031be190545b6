//! Which characters a name may hold.
//!
//! Names are shown to other people (a shared agent, a knowledge base, a document in a
//! citation): besides control characters, the invisible characters that reorder or hide text
//! — bidirectional controls such as U+202E, which make `exe.txt` read as `txt.exe`, and the
//! line and paragraph separators — are refused in every one of them.

/// The characters no name may hold, as a regular-expression class body (for the OpenAPI
/// document's patterns; ECMA-262 syntax).
pub const FORBIDDEN_IN_NAMES_CLASS: &str =
    r"\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028\u2029\u202A-\u202E\u2066-\u2069";

/// Whether `c` may not appear in a name: a control character, a bidirectional control, or a
/// line or paragraph separator.
pub fn forbidden_in_name(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// A JSON Schema pattern for a name: none of [`forbidden_in_name`]'s characters, and not
/// blank.
pub fn name_pattern() -> String {
    let bad = FORBIDDEN_IN_NAMES_CLASS;
    format!(r"^[^{bad}]*[^\s{bad}][^{bad}]*$")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidirectional_controls_and_control_characters_are_forbidden() {
        for c in [
            '\u{0}', '\u{7}', '\n', '\u{85}', '\u{202E}', '\u{2066}', '\u{200F}', '\u{61C}',
        ] {
            assert!(forbidden_in_name(c), "{c:?}");
        }
        for c in ['a', '中', ' ', 'é', '\u{200D}', '🙂'] {
            assert!(!forbidden_in_name(c), "{c:?}");
        }
    }
}
