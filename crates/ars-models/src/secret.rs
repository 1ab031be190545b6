//! API keys, kept out of `Debug` output, logs and error messages.

use std::fmt;
use std::sync::Arc;

/// An API key. It has no `Display`, and its `Debug` prints a placeholder, so it cannot reach a
/// log line or an error message by accident; the crate-private `expose` is the one way out,
/// used only to build the `Authorization` header.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; `None` for an empty one, which no provider accepts anyway.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into();
        let key = key.trim();
        (!key.is_empty()).then(|| Self(key.to_string()))
    }

    /// The key itself, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text`, for messages a server echoed back.
    #[cfg(test)]
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Header values shorter than this are not blanked out of texts: a value such as `1` or `true`
/// is no secret, and replacing it everywhere would garble the message.
const REDACT_MIN_CHARS: usize = 6;

/// Every secret one provider sends — its API key and its header values — to blank out of any
/// text the server echoed back (error bodies sometimes quote the request). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Redactor(Arc<[String]>);

impl Redactor {
    pub(crate) fn new<'a>(key: Option<&ApiKey>, headers: impl Iterator<Item = &'a str>) -> Self {
        let mut secrets: Vec<String> = headers
            .filter(|value| value.chars().count() >= REDACT_MIN_CHARS)
            .map(str::to_string)
            .collect();
        secrets.extend(key.map(|key| key.0.clone()));
        // Longest first, so a secret that contains another is blanked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self(secrets.into())
    }

    /// `text` with every secret replaced by `***`.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.0
            .iter()
            .fold(text.to_string(), |text, secret| text.replace(secret, "***"))
    }
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redactor({} secrets)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redactor_blanks_the_key_and_long_header_values() {
        let key = ApiKey::new("sk-secret").unwrap();
        let redactor = Redactor::new(Some(&key), ["org-1234567", "1"].into_iter());
        assert_eq!(
            redactor.redact("key sk-secret, org org-1234567, n 1"),
            "key ***, org ***, n 1"
        );
        assert_eq!(format!("{redactor:?}"), "Redactor(2 secrets)");
    }

    #[test]
    fn debug_never_prints_the_key() {
        let key = ApiKey::new("sk-secret").unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(key.redact("bad key sk-secret!"), "bad key ***!");
    }

    #[test]
    fn empty_keys_are_no_keys() {
        assert!(ApiKey::new("  ").is_none());
    }
}
