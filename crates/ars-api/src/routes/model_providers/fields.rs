//! A provider write, from either body shape to the fields the store keeps: every rule checked
//! (the domain's, then those that need the server: names the configuration uses), and the
//! secrets merged over the stored ones and sealed with the server key.

use std::collections::BTreeMap;

use ars_domain::model_provider::{self as rules, MAX_HEADERS, TokenPrices};
use ars_domain::{
    ModelProvider, ModelProviderFields, ModelProviderId, ModelProviderKind, Sealed, SecretKey,
};

use super::{ModelProviderPatch, ModelProviderWrite};
use crate::routes::patch::{Patch, PatchOver};
use crate::{ApiError, AppState};

/// Everything a write asks for, before it is checked.
pub(crate) struct Changes {
    pub(crate) name: String,
    pub(crate) kind: ModelProviderKind,
    pub(crate) base_url: String,
    pub(crate) models: Vec<String>,
    pub(crate) prices: Option<TokenPrices>,
    /// Absent keeps the stored key, `null` removes it, a value sets it.
    pub(crate) api_key: Patch<String>,
    /// Remove every stored header before `headers` apply.
    pub(crate) clear_headers: bool,
    /// By name: a value sets the header, `None` removes it.
    pub(crate) headers: BTreeMap<String, Option<String>>,
}

impl Changes {
    pub(crate) fn from_write(write: ModelProviderWrite) -> Self {
        Self {
            name: write.name,
            kind: write.kind.unwrap_or(ModelProviderKind::OpenaiCompatible),
            base_url: write.base_url,
            models: write.models,
            prices: write.prices,
            api_key: write.api_key,
            clear_headers: false,
            headers: write.extra_headers.unwrap_or_default(),
        }
    }

    /// Checks every rule and answers the fields to store for provider `id`, merging secrets
    /// over `existing`'s.
    pub(crate) async fn apply(
        self,
        state: &AppState,
        id: ModelProviderId,
        existing: Option<&ModelProvider>,
    ) -> Result<ModelProviderFields, ApiError> {
        let key = state.runtime.model_source().key();
        let fields = self.checked(key, id, existing)?;
        check_name_is_free(state, &fields.name)?;
        Ok(fields)
    }

    /// The rules that need nothing but the request (and the stored secrets to merge over).
    pub(crate) fn checked(
        self,
        key: &SecretKey,
        id: ModelProviderId,
        existing: Option<&ModelProvider>,
    ) -> Result<ModelProviderFields, ApiError> {
        rules::validate_name(&self.name)?;
        let base_url = rules::normalize_base_url(&self.base_url)?;
        let models = rules::normalize_models(&self.models)?;
        if let Some(prices) = &self.prices {
            prices.validate()?;
        }
        let stored = existing.map(|p| &p.fields);
        let api_key = match self.api_key {
            Patch::Keep => stored.and_then(|s| s.api_key.clone()),
            Patch::Remove => None,
            Patch::Set(value) => {
                let value = rules::validate_api_key(&value)?;
                Some(key.seal(&rules::api_key_context(id), &value))
            }
        };
        let mut headers: BTreeMap<String, Sealed> = match (self.clear_headers, stored) {
            (false, Some(stored)) => stored.headers.clone(),
            _ => BTreeMap::new(),
        };
        let mut seen = Vec::with_capacity(self.headers.len());
        for (name, value) in self.headers {
            let lower = rules::normalize_header_name(&name)?;
            if seen.contains(&lower) {
                return Err(ApiError::unprocessable(
                    format!("extra_headers.{name}"),
                    "the header is named twice (header names ignore case)",
                ));
            }
            seen.push(lower.clone());
            match value {
                None => {
                    headers.remove(&lower);
                }
                Some(value) => {
                    let value = rules::validate_header_value(&name, &value)?;
                    let sealed = key.seal(&rules::header_context(id, &lower), &value);
                    headers.insert(lower, sealed);
                }
            }
        }
        if headers.len() > MAX_HEADERS {
            return Err(ApiError::unprocessable(
                "extra_headers",
                format!("at most {MAX_HEADERS} headers"),
            ));
        }
        Ok(ModelProviderFields {
            name: self.name,
            kind: self.kind,
            base_url,
            api_key,
            headers,
            models,
            prices: self.prices,
        })
    }
}

/// The patch over `stored`: absent fields keep their stored value; `null` resets `kind` and
/// `models`, removes the API key or every header, and is refused for what a provider cannot
/// lack (`name`, `base_url`).
impl PatchOver<ModelProvider> for ModelProviderPatch {
    type Write = Changes;

    fn over(self, stored: &ModelProvider) -> Result<Changes, ApiError> {
        let stored = &stored.fields;
        let required = |field: &str, value: Patch<String>, stored: &str| match value {
            Patch::Keep => Ok(stored.to_string()),
            Patch::Set(value) => Ok(value),
            Patch::Remove => Err(ApiError::unprocessable(
                field,
                "cannot be removed, only changed",
            )),
        };
        let (clear_headers, headers) = match self.extra_headers {
            Patch::Keep => (false, BTreeMap::new()),
            Patch::Remove => (true, BTreeMap::new()),
            Patch::Set(headers) => (false, headers),
        };
        Ok(Changes {
            name: required("name", self.name, &stored.name)?,
            kind: match self.kind {
                Patch::Keep => stored.kind,
                other => other.set().unwrap_or(ModelProviderKind::OpenaiCompatible),
            },
            base_url: required("base_url", self.base_url, &stored.base_url)?,
            models: self.models.or_default(stored.models.clone()),
            prices: match self.prices {
                Patch::Keep => stored.prices,
                Patch::Remove => None,
                Patch::Set(prices) => Some(prices),
            },
            api_key: self.api_key,
            clear_headers,
            headers,
        })
    }
}

/// A stored provider may not take the name of a configured or built-in one: agents name
/// providers by name, and the configuration's would win.
fn check_name_is_free(state: &AppState, name: &str) -> Result<(), ApiError> {
    if let Some(info) = state.runtime.config_models().info(name) {
        let source = match info.source {
            ars_models::ProviderSource::Builtin => "built into the server",
            _ => "defined in the server configuration",
        };
        return Err(ApiError::Conflict {
            message: format!("a provider named `{name}` is {source}; choose another name"),
            field: Some("name".into()),
        });
    }
    Ok(())
}
