//! What the shared resources — agents, skills, MCP servers and knowledge bases — have in common
//! at the boundary: which rows a caller lists, the 404 for what they cannot see and the 403 for
//! what they see but may not change, the check that a `share_config` names users who exist,
//! and a `share_config` in a merge patch.
//!
//! The rules themselves are `ars_domain::access` ([`Caller::can_view`] and the rest); this
//! module only turns them into answers, once for all four resources.

use serde::Deserialize;

use ars_domain::{Caller, ShareConfig, Shared, UserId, Visibility};

use super::patch::{MergeInto, Patch};
use crate::{ApiError, AppState};

/// The owner whose visibility a store listing filters by: the caller, or nobody for admins,
/// who see every row.
pub(super) fn visible_to(caller: &Caller) -> Option<UserId> {
    (!caller.is_admin()).then_some(caller.id)
}

/// `found` if `caller` may see it; anything else is a 404 naming `what`, so a row the caller
/// cannot see is indistinguishable from one that is not there.
pub(super) fn visible<T: Shared>(
    found: Option<T>,
    caller: &Caller,
    what: ars_domain::Subject,
) -> Result<T, ApiError> {
    found
        .filter(|resource| caller.can_view(resource))
        .ok_or_else(|| ApiError::not_found(what))
}

/// `resource` (one the caller sees) if they may change it; otherwise a 403 saying `refusal`
/// (for a client: the caller may use the `what` but not change it).
pub(super) fn managed<T: Shared>(
    resource: T,
    caller: &Caller,
    what: ars_domain::Subject,
    refusal: &str,
) -> Result<T, ApiError> {
    if caller.can_manage(&resource) {
        Ok(resource)
    } else {
        Err(ApiError::forbidden(refusal).because(
            ars_domain::Reason::new(ars_domain::ErrorReason::CannotChange).with("subject", what),
        ))
    }
}

/// Checks that every user a `share_config` names exists.
pub(super) async fn check_share_users(
    state: &AppState,
    share: &ShareConfig,
) -> Result<(), ApiError> {
    let named: Vec<_> = share.referenced_users().collect();
    if named.is_empty() {
        return Ok(());
    }
    let found = state.store.existing_users(&named).await?;
    for (field, ids) in [
        ("share_config.user_ids", &share.user_ids),
        ("share_config.manager_ids", &share.manager_ids),
    ] {
        // Well-formed but naming no stored user: a conflict with the stored state, which no
        // schema can state (so 409, not 422).
        if let Some(missing) = ids.iter().find(|id| !found.contains(id)) {
            return Err(ApiError::Conflict {
                message: format!("no user has id {missing}"),
                field: Some(field.into()),
            });
        }
    }
    Ok(())
}

/// A `share_config` in a merge patch: each member sent replaces the stored one, `null` puts it
/// back to its default (private, nobody named).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShareConfigPatch {
    #[serde(default)]
    visibility: Patch<Visibility>,
    #[serde(default)]
    user_ids: Patch<Vec<UserId>>,
    #[serde(default)]
    manager_ids: Patch<Vec<UserId>>,
}

impl MergeInto<ShareConfig> for ShareConfigPatch {
    fn merge_into(self, stored: Option<ShareConfig>, _at: &str) -> Result<ShareConfig, ApiError> {
        let stored = stored.unwrap_or_default();
        Ok(ShareConfig {
            visibility: self.visibility.or_default(stored.visibility),
            user_ids: self.user_ids.or_default(stored.user_ids),
            manager_ids: self.manager_ids.or_default(stored.manager_ids),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_share_patch_merges_member_by_member() {
        let stored = ShareConfig {
            visibility: Visibility::Users,
            user_ids: vec![UserId::new()],
            manager_ids: vec![UserId::new()],
        };
        let patch: ShareConfigPatch =
            serde_json::from_value(json!({"visibility": "public", "manager_ids": null})).unwrap();
        let merged = patch.merge_into(Some(stored.clone()), "").unwrap();
        assert_eq!(merged.visibility, Visibility::Public);
        assert_eq!(merged.user_ids, stored.user_ids);
        assert!(merged.manager_ids.is_empty());
        assert!(serde_json::from_value::<ShareConfigPatch>(json!({"extra": null})).is_err());
    }
}
