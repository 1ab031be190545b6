//! The statements of model providers and the model settings, written once for both
//! databases (`$N` placeholders: see the crate docs).

/// The provider columns, in [`super::rows::ModelProviderRow`] order; unqualified so they also
/// serve `RETURNING` clauses.
macro_rules! provider_columns {
    () => {
        "id, name, kind, base_url, api_key, headers, models, models_refreshed_at, created_by, \
         created_at, updated_at, prices"
    };
}

/// `$8`: prices; `$9`: the creator; `$10`: now, both timestamps.
pub(crate) const INSERT_MODEL_PROVIDER: &str = concat!(
    "INSERT INTO model_providers (id, name, kind, base_url, api_key, headers, models, \
     prices, created_by, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ",
    provider_columns!()
);

pub(crate) const MODEL_PROVIDER_BY_ID: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM model_providers WHERE id = $1"
);

/// By name, in byte order in both databases (the PostgreSQL column uses the "C" collation).
pub(crate) const LIST_MODEL_PROVIDERS: &str = concat!(
    "SELECT ",
    provider_columns!(),
    " FROM model_providers ORDER BY name"
);

/// Replaces every writable column of provider `$1`; `$8`: prices; `$9`: now. `models_refreshed_at` is kept
/// while the models are unchanged, since they are then still the fetched ones.
pub(crate) const UPDATE_MODEL_PROVIDER: &str = concat!(
    "UPDATE model_providers SET name = $2, kind = $3, base_url = $4, api_key = $5, \
     headers = $6, \
     models_refreshed_at = CASE WHEN models = $7 THEN models_refreshed_at ELSE NULL END, \
     models = $7, prices = $8, updated_at = $9 WHERE id = $1 RETURNING ",
    provider_columns!()
);

/// `$1`: the provider; `$2`: its models, as fetched; `$3`: now.
pub(crate) const SET_MODEL_PROVIDER_MODELS: &str = concat!(
    "UPDATE model_providers SET models = $2, models_refreshed_at = $3, updated_at = $3 \
     WHERE id = $1 RETURNING ",
    provider_columns!()
);

pub(crate) const MODEL_PROVIDER_NAME: &str = "SELECT name FROM model_providers WHERE id = $1";

pub(crate) const DELETE_MODEL_PROVIDER: &str = "DELETE FROM model_providers WHERE id = $1";

pub(crate) const MODEL_SETTINGS: &str =
    "SELECT version, default_model, updated_at FROM model_settings WHERE id = 1";

pub(crate) const MODEL_SETTINGS_VERSION: &str = "SELECT version FROM model_settings WHERE id = 1";

/// Raises the version: every change to the providers or settings runs it in its transaction.
/// On PostgreSQL it also takes the row's lock, so such changes queue. `$1`: now.
pub(crate) const BUMP_MODEL_SETTINGS: &str =
    "UPDATE model_settings SET version = version + 1, updated_at = $1 WHERE id = 1";

/// `$1`: the default model (`provider/model`) or NULL; `$2`: now.
pub(crate) const SET_DEFAULT_MODEL: &str = "UPDATE model_settings SET default_model = $1, \
     version = version + 1, updated_at = $2 WHERE id = 1 \
     RETURNING version, default_model, updated_at";

/// A default model of provider `$1` becomes one of provider `$2` (a rename).
pub(crate) const RENAME_DEFAULT_MODEL_PROVIDER: &str = "UPDATE model_settings \
     SET default_model = $2 || substr(default_model, length($1) + 1) \
     WHERE id = 1 AND substr(default_model, 1, length($1) + 1) = $1 || '/'";

/// Clears a default model of provider `$1` (deleted).
pub(crate) const CLEAR_DEFAULT_MODEL_OF: &str = "UPDATE model_settings SET default_model = NULL \
     WHERE id = 1 AND substr(default_model, 1, length($1) + 1) = $1 || '/'";
