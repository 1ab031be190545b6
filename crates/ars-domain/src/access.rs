//! Who may see, use, manage and delete an agent.
//!
//! **Invariant:** these functions are the only statement of the sharing rules. The store's
//! visibility filter for lists implements [`Caller::can_view`] in SQL; the conformance suite
//! checks the two agree.

use crate::{Agent, Role, User, UserId, Visibility};

/// The authenticated user a request acts for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    pub id: UserId,
    pub role: Role,
}

impl From<&User> for Caller {
    fn from(user: &User) -> Self {
        Self {
            id: user.id,
            role: user.role,
        }
    }
}

impl Caller {
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// See and use: admins, the owner, managers, and whoever the visibility admits.
    pub fn can_view(&self, agent: &Agent) -> bool {
        let share = &agent.share_config;
        self.is_admin()
            || agent.owner_id == Some(self.id)
            || share.manager_ids.contains(&self.id)
            || match share.visibility {
                Visibility::Public => true,
                Visibility::Users => share.user_ids.contains(&self.id),
                Visibility::Private => false,
            }
    }

    /// Edit (and share): admins, the owner and managers; built-in rows only admins.
    pub fn can_manage(&self, agent: &Agent) -> bool {
        if agent.is_builtin {
            return self.is_admin();
        }
        self.is_admin()
            || agent.owner_id == Some(self.id)
            || agent.share_config.manager_ids.contains(&self.id)
    }

    /// Delete: whoever manages it, except that built-in rows are never deleted.
    pub fn can_delete(&self, agent: &Agent) -> bool {
        !agent.is_builtin && self.can_manage(agent)
    }
}
