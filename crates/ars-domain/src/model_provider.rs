//! Model providers an admin manages at run time (stored in the database, beside those of the
//! server configuration), and the rules every write of one obeys.
//!
//! A provider's API key and the values of its extra headers are secrets: they are stored only
//! [`Sealed`] (see [`crate::secret`]), each bound to its provider and field, and never read
//! back by the API. Everything else (name, kind, base URL, header names, models) is plain.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ids::{ModelProviderId, UserId};
use crate::secret::Sealed;
use crate::{FieldError, ValidationError};

/// The longest provider name.
pub const NAME_MAX_CHARS: usize = 64;
/// The longest base URL.
pub const BASE_URL_MAX_CHARS: usize = 2048;
/// The longest API key or header value.
pub const SECRET_MAX_CHARS: usize = 4096;
/// The most extra headers one provider sends.
pub const MAX_HEADERS: usize = 32;
/// The longest header name.
pub const HEADER_NAME_MAX_CHARS: usize = 128;
/// The most model names one provider lists (a provider's `/models` may hold hundreds).
pub const MAX_MODELS: usize = 2000;
/// The longest model name.
pub const MODEL_NAME_MAX_CHARS: usize = 256;

/// Names no stored provider may take: the built-in scripted model's.
pub const RESERVED_NAMES: [&str; 1] = ["scripted"];

/// Headers a provider entry may not set: the API key is the `Authorization` header, and the
/// others are the HTTP client's to write.
pub const RESERVED_HEADERS: [&str; 6] = [
    "authorization",
    "content-type",
    "content-length",
    "host",
    "transfer-encoding",
    "connection",
];

/// How a stored provider is spoken to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModelProviderKind {
    /// `POST {base_url}/chat/completions` and `GET {base_url}/models` in the OpenAI format:
    /// OpenAI, DeepSeek, vLLM, Ollama, llama.cpp server, LM Studio, …
    OpenaiCompatible,
}

impl ModelProviderKind {
    pub const ALL: [Self; 1] = [Self::OpenaiCompatible];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiCompatible => "openai-compatible",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// A provider as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProvider {
    pub id: ModelProviderId,
    pub fields: ModelProviderFields,
    /// When `models` was last filled from the provider's own list; `None` when typed.
    pub models_refreshed_at: Option<DateTime<Utc>>,
    /// The admin who created it; `None` once that account is gone.
    pub created_by: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Everything a write of a provider sets. Secrets arrive sealed.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelProviderFields {
    /// What agents write in `model.provider` (see [`validate_name`]).
    pub name: String,
    pub kind: ModelProviderKind,
    /// Normalised by [`normalize_base_url`].
    pub base_url: String,
    /// Sealed for [`api_key_context`].
    pub api_key: Option<Sealed>,
    /// Lower-case header names (see [`normalize_header_name`]) and their values, each sealed
    /// for [`header_context`].
    pub headers: BTreeMap<String, Sealed>,
    /// Model names offered, as typed or fetched (see [`normalize_models`]).
    pub models: Vec<String>,
    /// What its tokens cost, when an admin says so (see [`TokenPrices::validate`]).
    pub prices: Option<TokenPrices>,
}

/// What a provider's tokens cost, per million, in whatever currency the admin keeps accounts
/// in (the usage page shows the number as it is).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenPrices {
    /// Per million prompt (input) tokens.
    #[schema(minimum = 0, maximum = 1000000)]
    pub input: f64,
    /// Per million completion (output) tokens.
    #[schema(minimum = 0, maximum = 1000000)]
    pub output: f64,
}

impl TokenPrices {
    /// The most a price may be, per million tokens.
    pub const MAX: f64 = 1_000_000.0;

    /// Each price is a number from 0 to [`Self::MAX`].
    pub fn validate(&self) -> Result<(), ValidationError> {
        for (field, price) in [("prices.input", self.input), ("prices.output", self.output)] {
            if !(0.0..=Self::MAX).contains(&price) {
                return Err(ValidationError::invalid(
                    field,
                    format!("must be between 0 and {}", Self::MAX),
                )
                .because(
                    crate::Reason::new(crate::ErrorReason::OutOfRange)
                        .with("min", 0u64)
                        .with("max", Self::MAX as u64),
                ));
            }
        }
        Ok(())
    }

    /// What `prompt` and `completion` tokens cost.
    pub fn cost(&self, prompt: u64, completion: u64) -> f64 {
        (prompt as f64 * self.input + completion as f64 * self.output) / 1_000_000.0
    }
}

/// What the API key of provider `id` is sealed for.
pub fn api_key_context(id: ModelProviderId) -> String {
    format!("model_provider/{id}/api_key")
}

/// What the value of header `name` (lower case) of provider `id` is sealed for.
pub fn header_context(id: ModelProviderId, name: &str) -> String {
    format!("model_provider/{id}/header/{name}")
}

/// A name is 1-64 characters of `a-z`, `0-9`, `.`, `_` and `-`, starting with a letter or
/// digit (so `provider/model` references split cleanly), and not a built-in provider's.
pub fn validate_name(name: &str) -> Result<(), ValidationError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
    let ok_start = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.is_empty() || name.len() > NAME_MAX_CHARS || !ok_chars || !ok_start {
        return Err(ValidationError::invalid(
            "name",
            format!(
                "must be 1-{NAME_MAX_CHARS} characters of a-z, 0-9, '.', '_' or '-', starting \
                 with a letter or digit"
            ),
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(ValidationError::invalid(
            "name",
            format!("`{name}` is the built-in test model's name; choose another"),
        ));
    }
    Ok(())
}

/// Checks a base URL and answers it without trailing slashes: `http://` or `https://`, a host
/// (a name, an IPv4 address or a bracketed IPv6 address) and an optional port and path; no
/// credentials (they belong in the API key, which is never shown), no query or fragment (paths
/// such as `/chat/completions` are appended to it), ASCII only.
pub fn normalize_base_url(url: &str) -> Result<String, ValidationError> {
    let bad = |why: &str| {
        ValidationError::invalid("base_url", why.to_string()).because(crate::ErrorReason::BadUrl)
    };
    let url = url.trim();
    if url.chars().count() > BASE_URL_MAX_CHARS {
        return Err(bad(&format!(
            "must be at most {BASE_URL_MAX_CHARS} characters"
        )));
    }
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .ok_or_else(|| {
            bad("must start with http:// or https://, e.g. http://127.0.0.1:11434/v1")
        })?;
    if !url.chars().all(|c| c.is_ascii_graphic()) {
        return Err(bad(
            "must be ASCII without spaces (write an international host name in its xn-- form)",
        ));
    }
    if url.contains(['?', '#']) {
        return Err(bad(
            "must not have a query or fragment: paths are appended to it",
        ));
    }
    let (authority, _path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.contains('@') {
        return Err(bad(
            "must not hold credentials: put the key in api_key, which is kept secret",
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (address, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("has an unclosed `[` in its host"))?;
            if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
                return Err(bad("has an invalid IPv6 address"));
            }
            match after {
                "" => (address, None),
                _ => (
                    address,
                    Some(
                        after
                            .strip_prefix(':')
                            .ok_or_else(|| bad("has text after its IPv6 address"))?,
                    ),
                ),
            }
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let bracketed = authority.starts_with('[');
    let host_ok = bracketed
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            && !host.starts_with(['.', '-']));
    if !host_ok {
        return Err(bad("must name a host, e.g. https://api.openai.com/v1"));
    }
    if let Some(port) = port
        && !is_port(port)
    {
        return Err(bad("has an invalid port (1-65535)"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// A secret header value or API key: 1-4096 visible ASCII characters (spaces and tabs allowed
/// inside a header value, not in a key), without surrounding white space.
pub(crate) fn validate_secret(
    field: &str,
    value: &str,
    spaces: bool,
) -> Result<String, ValidationError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ValidationError::invalid(
            field,
            "must not be empty; send null to remove it",
        ));
    }
    if value.chars().count() > SECRET_MAX_CHARS {
        return Err(ValidationError::too_long(field, SECRET_MAX_CHARS));
    }
    let ok = value
        .chars()
        .all(|c| c.is_ascii_graphic() || (spaces && (c == ' ' || c == '\t')));
    if !ok {
        let what = if spaces {
            "visible ASCII characters, spaces and tabs"
        } else {
            "visible ASCII characters, without spaces"
        };
        return Err(ValidationError::invalid(
            field,
            format!("must consist of {what}"),
        ));
    }
    Ok(value.to_string())
}

/// A port as a URL writes it: 1-65535 in at most five digits.
pub(crate) fn is_port(port: &str) -> bool {
    !port.is_empty()
        && port.len() <= 5
        && port.chars().all(|c| c.is_ascii_digit())
        && port.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
}

/// An HTTP header name (a token): 1-`max` letters, digits and `!#$%&'*+-.^_`|~`.
pub(crate) fn is_header_token(name: &str, max: usize) -> bool {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    !name.is_empty() && name.len() <= max && name.chars().all(token)
}

/// Checks an API key and answers it trimmed.
pub fn validate_api_key(key: &str) -> Result<String, ValidationError> {
    validate_secret("api_key", key, false)
}

/// Checks a header name and answers it in lower case (HTTP names are case-insensitive, so
/// `X-Org` and `x-org` are one header). `field` is where the name appears in the payload.
pub fn normalize_header_name(name: &str) -> Result<String, ValidationError> {
    let field = format!("extra_headers.{name}");
    if !is_header_token(name, HEADER_NAME_MAX_CHARS) {
        return Err(ValidationError::invalid(
            field,
            format!(
                "a header name must be 1-{HEADER_NAME_MAX_CHARS} characters of letters, digits \
                 and !#$%&'*+-.^_`|~"
            ),
        ));
    }
    let lower = name.to_ascii_lowercase();
    if RESERVED_HEADERS.contains(&lower.as_str()) {
        let why = if lower == "authorization" {
            "is sent from api_key; set the key there".to_string()
        } else {
            format!("`{name}` is written by the server itself")
        };
        return Err(ValidationError::invalid(field, why));
    }
    Ok(lower)
}

/// Checks the value of header `name` and answers it trimmed.
pub fn validate_header_value(name: &str, value: &str) -> Result<String, ValidationError> {
    validate_secret(&format!("extra_headers.{name}"), value, true)
}

/// Checks a list of model names as typed: at most [`MAX_MODELS`], each 1-256 characters
/// without control characters or surrounding white space, none twice. Answers them trimmed,
/// in the order given.
pub fn normalize_models(models: &[String]) -> Result<Vec<String>, ValidationError> {
    if models.len() > MAX_MODELS {
        return Err(ValidationError::invalid(
            "models",
            format!("must list at most {MAX_MODELS} models"),
        )
        .because(crate::Reason::new(crate::ErrorReason::TooMany).with("max", MAX_MODELS)));
    }
    let mut out: Vec<String> = Vec::with_capacity(models.len());
    for (i, model) in models.iter().enumerate() {
        let model = model.trim();
        if let Err(why) = model_name_problem(model) {
            return Err(ValidationError::Invalid(FieldError::new(
                format!("models[{i}]"),
                why,
            )));
        }
        if out.iter().any(|m| m == model) {
            return Err(ValidationError::invalid(
                format!("models[{i}]"),
                format!("`{model}` is listed twice"),
            )
            .because(
                crate::Reason::new(crate::ErrorReason::Duplicate).with("name", model.to_string()),
            ));
        }
        out.push(model.to_string());
    }
    Ok(out)
}

/// The model names of a provider's own listing, cleaned: names that break the rules of
/// [`normalize_models`] are dropped, duplicates removed, the rest sorted and capped at
/// [`MAX_MODELS`].
pub fn models_from_listing(ids: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut models: Vec<String> = ids
        .into_iter()
        .map(|id| id.trim().to_string())
        .filter(|id| model_name_problem(id).is_ok())
        .collect();
    models.sort_unstable();
    models.dedup();
    models.truncate(MAX_MODELS);
    models
}

fn model_name_problem(model: &str) -> Result<(), String> {
    if model.is_empty() {
        return Err("a model name must not be empty".into());
    }
    if model.chars().count() > MODEL_NAME_MAX_CHARS {
        return Err(format!(
            "a model name must be at most {MODEL_NAME_MAX_CHARS} characters"
        ));
    }
    if model.chars().any(char::is_control) {
        return Err("a model name must not hold control characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_case_slugs_and_not_scripted() {
        for good in ["openai", "deep-seek", "local.vllm", "a", "0_x"] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        let too_long = "a".repeat(65);
        for bad in [
            "",
            "OpenAI",
            "-x",
            ".x",
            "a/b",
            "a b",
            "scripted",
            too_long.as_str(),
        ] {
            let error = validate_name(bad).err().unwrap();
            assert_eq!(error.field(), "name", "{bad}");
        }
    }

    #[test]
    fn base_urls_are_http_with_a_host_and_lose_trailing_slashes() {
        for (given, stored) in [
            ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
            ("https://api.openai.com/v1", "https://api.openai.com/v1"),
            ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
            ("http://localhost", "http://localhost"),
            (" https://h/v1 ", "https://h/v1"),
        ] {
            assert_eq!(normalize_base_url(given).unwrap(), stored, "{given}");
        }
        for bad in [
            "",
            "ftp://h/v1",
            "h/v1",
            "http://",
            "http:///v1",
            "http://user:pw@h/v1",
            "http://h/v1?x=1",
            "http://h/v1#x",
            "http://h:0/v1",
            "http://h:99999/v1",
            "http://h:x/v1",
            "http://h ost/v1",
            "http://hôte/v1",
            "http://[::1/v1",
            "http://-h/v1",
            "http://a:b:80/v1",
        ] {
            let error = normalize_base_url(bad).err().unwrap();
            assert_eq!(error.field(), "base_url", "{bad}");
        }
        let long = format!("http://h/{}", "a".repeat(BASE_URL_MAX_CHARS));
        assert!(normalize_base_url(&long).is_err());
    }

    #[test]
    fn secrets_and_headers_are_checked_without_echoing_values() {
        assert_eq!(validate_api_key(" sk-1 ").unwrap(), "sk-1");
        for bad in ["", "  ", "sk 1", "sk-\n1"] {
            let error = validate_api_key(bad).err().unwrap();
            assert_eq!(error.field(), "api_key");
            assert!(!error.to_string().contains("sk"), "{error}");
        }
        assert_eq!(normalize_header_name("X-Org").unwrap(), "x-org");
        for bad in ["", "bad name", "Authorization", "host", "x:y"] {
            assert!(normalize_header_name(bad).is_err(), "{bad}");
        }
        assert!(validate_header_value("x-org", "a b").is_ok());
        let error = validate_header_value("x-org", "a\r\nb").err().unwrap();
        assert_eq!(error.field(), "extra_headers.x-org");
    }

    #[test]
    fn typed_models_refuse_duplicates_and_listings_are_cleaned() {
        let typed = |names: &[&str]| {
            normalize_models(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(typed(&[" a ", "b"]).unwrap(), ["a", "b"]);
        assert_eq!(typed(&["a", "a"]).err().unwrap().field(), "models[1]");
        assert_eq!(typed(&["a", ""]).err().unwrap().field(), "models[1]");
        let listed = models_from_listing(["b".into(), "a".into(), "b".into(), "\u{7}".into()]);
        assert_eq!(listed, ["a", "b"]);
    }

    #[test]
    fn kinds_round_trip() {
        for kind in ModelProviderKind::ALL {
            assert_eq!(ModelProviderKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(ModelProviderKind::parse("scripted"), None);
    }
}
