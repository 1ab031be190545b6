//! The scope a sandbox call runs in: whose workspace, which runtime, which project workdir.

use ars_domain::UserId;
use serde::{Deserialize, Serialize};

use crate::error::{SandboxError, display_path};
use crate::layout::{MAX_COMPONENT_BYTES, USER_DATA_ROOT};

/// Longest accepted `workdir_path`; leaves room under the 4096-byte path limit for the files.
const MAX_WORKDIR_BYTES: usize = 1024;
/// Longest accepted `runtime_scope_id`.
const MAX_RUNTIME_SCOPE_BYTES: usize = 255;

/// Who is calling and where: the user's workspace, the execution tree's runtime and the
/// conversation's project workdir.
///
/// A parent agent and every subagent it starts pass the *same* scope (SPEC §6), which is what
/// makes them see the same live bytes. The fields are public so the runtime can build scopes
/// from stored rows; every sandbox operation validates the scope before touching anything.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scope {
    /// Owner of the workspace mounted at `/home/gem/user-data`.
    pub user_id: UserId,
    /// The root conversation's runtime scope, shared by the whole execution tree. The local
    /// sandbox keys nothing on disk by it; a remote sandbox would key its container on it.
    pub runtime_scope_id: String,
    /// The project workdir, relative to the user workspace, e.g. `conversations/<thread id>`.
    pub workdir_path: String,
}

impl Scope {
    /// Builds a scope, refusing malformed ids and workdir paths.
    pub fn new(
        user_id: UserId,
        runtime_scope_id: impl Into<String>,
        workdir_path: impl Into<String>,
    ) -> Result<Self, SandboxError> {
        let scope = Self {
            user_id,
            runtime_scope_id: runtime_scope_id.into(),
            workdir_path: workdir_path.into(),
        };
        scope.validate()?;
        Ok(scope)
    }

    /// Checks the invariants `new` enforces, for scopes built with a struct literal.
    pub fn validate(&self) -> Result<(), SandboxError> {
        validate_runtime_scope_id(&self.runtime_scope_id)?;
        validate_workdir_path(&self.workdir_path)
    }

    /// The workdir as the agent sees it: `/home/gem/user-data/<workdir_path>`.
    pub fn virtual_workdir(&self) -> String {
        format!("{USER_DATA_ROOT}/{}", self.workdir_path)
    }

    /// The workdir's components below the user workspace.
    pub(crate) fn workdir_components(&self) -> impl Iterator<Item = &str> {
        self.workdir_path.split('/')
    }
}

fn validate_runtime_scope_id(id: &str) -> Result<(), SandboxError> {
    if id.is_empty() {
        return Err(SandboxError::InvalidScope(
            "runtime_scope_id must not be empty".into(),
        ));
    }
    if id.len() > MAX_RUNTIME_SCOPE_BYTES {
        return Err(SandboxError::InvalidScope(format!(
            "runtime_scope_id is longer than {MAX_RUNTIME_SCOPE_BYTES} bytes"
        )));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':');
    if !id.chars().all(allowed) {
        return Err(SandboxError::InvalidScope(format!(
            "runtime_scope_id `{}` may contain only ASCII letters, digits, '-', '_', '.' and ':'",
            display_path(id)
        )));
    }
    Ok(())
}

fn validate_workdir_path(path: &str) -> Result<(), SandboxError> {
    let refuse = |why: &str| {
        Err(SandboxError::InvalidScope(format!(
            "workdir_path `{}` {why}",
            display_path(path)
        )))
    };
    if path.is_empty() {
        return refuse("must not be empty");
    }
    if path.len() > MAX_WORKDIR_BYTES {
        return refuse(&format!("is longer than {MAX_WORKDIR_BYTES} bytes"));
    }
    if path.starts_with('/') {
        return refuse("must be relative to the user workspace");
    }
    if path.chars().any(char::is_control) {
        return refuse("contains a control character");
    }
    for component in path.split('/') {
        if component.is_empty() {
            return refuse("has an empty component (`//` or a trailing `/`)");
        }
        if component == "." || component == ".." {
            return refuse("must not contain `.` or `..` components");
        }
        if component.len() > MAX_COMPONENT_BYTES {
            return refuse(&format!(
                "has a component longer than {MAX_COMPONENT_BYTES} bytes"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(runtime: &str, workdir: &str) -> Result<Scope, SandboxError> {
        Scope::new(UserId::new(), runtime, workdir)
    }

    #[test]
    fn accepts_conversation_workdirs_and_thread_like_runtime_ids() {
        let id = "0190c3a1-7b2c-7d4e-8f00-123456789abc_sub_general-purpose_1a2b3c4d";
        let scope = scope(id, "conversations/0190c3a1").unwrap();
        assert_eq!(
            scope.virtual_workdir(),
            "/home/gem/user-data/conversations/0190c3a1"
        );
    }

    #[test]
    fn refuses_malformed_workdirs() {
        for bad in [
            "", "/abs", "a/../b", "..", "./a", "a//b", "a/", "a\0b", "a\nb",
        ] {
            assert!(
                matches!(scope("r", bad), Err(SandboxError::InvalidScope(_))),
                "{bad:?}"
            );
        }
        assert!(scope("r", &"x".repeat(256)).is_err());
        assert!(scope("r", &"abc/".repeat(300)).is_err());
    }

    #[test]
    fn refuses_malformed_runtime_scope_ids() {
        for bad in ["", "a/b", "a b", "../x", &"r".repeat(256)] {
            assert!(scope(bad, "w").is_err(), "{bad:?}");
        }
    }
}
