//! Who may see, use, manage and delete a shared resource: an agent, a skill, an MCP server or a
//! knowledge base.
//!
//! **Invariant:** these functions are the only statement of the sharing rules. Every resource
//! that follows them implements [`Shared`], so agents and skills cannot drift apart. The store's
//! visibility filters for lists implement [`Caller::can_view`] in SQL; the conformance suite
//! checks the two agree.

use crate::{Agent, KnowledgeBase, McpServer, Role, ShareConfig, Skill, User, UserId, Visibility};

/// A resource under the sharing model: an owner (or none, for system-owned rows) and a
/// [`ShareConfig`].
pub trait Shared {
    /// `None` for system-owned rows, which only admins and managers manage.
    fn owner_id(&self) -> Option<UserId>;
    fn share_config(&self) -> &ShareConfig;
    /// Built-in rows are created by migrations: only admins edit them and nobody deletes them.
    fn is_builtin(&self) -> bool {
        false
    }
}

/// So `iter().filter(|a| caller.can_view(a))`, which hands out `&&Agent`, keeps working.
impl<T: Shared + ?Sized> Shared for &T {
    fn owner_id(&self) -> Option<UserId> {
        (**self).owner_id()
    }

    fn share_config(&self) -> &ShareConfig {
        (**self).share_config()
    }

    fn is_builtin(&self) -> bool {
        (**self).is_builtin()
    }
}

impl Shared for Agent {
    fn owner_id(&self) -> Option<UserId> {
        self.owner_id
    }

    fn share_config(&self) -> &ShareConfig {
        &self.share_config
    }

    fn is_builtin(&self) -> bool {
        self.is_builtin
    }
}

impl Shared for Skill {
    fn owner_id(&self) -> Option<UserId> {
        self.owner_id
    }

    fn share_config(&self) -> &ShareConfig {
        &self.share_config
    }
}

impl Shared for McpServer {
    fn owner_id(&self) -> Option<UserId> {
        self.owner_id
    }

    fn share_config(&self) -> &ShareConfig {
        &self.fields.share_config
    }
}

impl Shared for KnowledgeBase {
    fn owner_id(&self) -> Option<UserId> {
        self.owner_id
    }

    fn share_config(&self) -> &ShareConfig {
        &self.fields.share_config
    }
}

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
    pub fn can_view(&self, item: &(impl Shared + ?Sized)) -> bool {
        let share = item.share_config();
        self.is_admin()
            || item.owner_id() == Some(self.id)
            || share.manager_ids.contains(&self.id)
            || match share.visibility {
                Visibility::Public => true,
                Visibility::Users => share.user_ids.contains(&self.id),
                Visibility::Private => false,
            }
    }

    /// Edit (and share): admins, the owner and managers; built-in rows only admins.
    pub fn can_manage(&self, item: &(impl Shared + ?Sized)) -> bool {
        if item.is_builtin() {
            return self.is_admin();
        }
        self.is_admin()
            || item.owner_id() == Some(self.id)
            || item.share_config().manager_ids.contains(&self.id)
    }

    /// Delete: whoever manages it, except that built-in rows are never deleted.
    pub fn can_delete(&self, item: &(impl Shared + ?Sized)) -> bool {
        !item.is_builtin() && self.can_manage(item)
    }
}
