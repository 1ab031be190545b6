//! API keys, kept out of `Debug` output, logs and error messages.

use std::fmt;

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
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
