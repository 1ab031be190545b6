//! Shared set-up for the sandbox integration tests: a temp data dir, a `LocalSandbox` over it
//! and a prepared scope.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use std::path::PathBuf;

use ars_domain::UserId;
use ars_sandbox::{LocalSandbox, Sandbox, SandboxConfig, SandboxError, Scope};
use tempfile::TempDir;

/// One sandbox over a fresh data dir, with one prepared scope.
pub struct Fixture {
    pub dir: TempDir,
    pub sandbox: LocalSandbox,
    pub scope: Scope,
}

/// A fixture with default configuration.
pub async fn fixture() -> Fixture {
    fixture_with(|_| {}).await
}

/// A fixture whose configuration `tweak` may change first.
pub async fn fixture_with(tweak: impl FnOnce(&mut SandboxConfig)) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let mut config = SandboxConfig::new(dir.path().join("data"));
    tweak(&mut config);
    let sandbox = LocalSandbox::new(config);
    let scope = Scope::new(UserId::new(), "root-thread", "conversations/t1").unwrap();
    sandbox.prepare(&scope).await.unwrap();
    Fixture {
        dir,
        sandbox,
        scope,
    }
}

impl Fixture {
    /// The data dir on the host.
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Host path of a user's workspace.
    pub fn user_data(&self, user: UserId) -> PathBuf {
        self.data()
            .join("users")
            .join(user.to_string())
            .join("user-data")
    }

    /// Host path of the fixture scope's workdir.
    pub fn workdir(&self) -> PathBuf {
        self.user_data(self.scope.user_id)
            .join(&self.scope.workdir_path)
    }

    /// Host path of the fixture user's Skills projection.
    pub fn skills(&self) -> PathBuf {
        self.skills_of(self.scope.user_id)
    }

    /// Host path of a user's Skills projection.
    pub fn skills_of(&self, user: UserId) -> PathBuf {
        self.data()
            .join("users")
            .join(user.to_string())
            .join("skills")
    }

    /// A directory outside the data dir, with a secret file in it.
    pub fn outside(&self) -> PathBuf {
        let outside = self.dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "top secret\n").unwrap();
        outside
    }

    /// Another prepared scope of a new user.
    pub async fn other_user(&self) -> Scope {
        let scope = Scope::new(UserId::new(), "other-root", "conversations/t9").unwrap();
        self.sandbox.prepare(&scope).await.unwrap();
        scope
    }

    /// Another prepared scope of a new user, whose workspace holds `diary.txt` ("private").
    pub async fn other_user_with_a_diary(&self) -> Scope {
        let scope = self.other_user().await;
        self.sandbox
            .write(&scope, "/home/gem/user-data/diary.txt", "private\n")
            .await
            .unwrap();
        scope
    }

    /// Writes `content` at `path` in the fixture scope.
    pub async fn write(&self, path: &str, content: &str) {
        self.sandbox
            .write(&self.scope, path, content)
            .await
            .unwrap();
    }

    /// Reads all of `path` in the fixture scope, without line numbers.
    pub async fn read_text(&self, scope: &Scope, path: &str) -> Result<String, SandboxError> {
        let outcome = self.sandbox.read(scope, path, 1, None).await?;
        Ok(outcome
            .content
            .lines()
            .map(|line| line.split_once('\t').map_or("", |(_, text)| text))
            .map(|text| format!("{text}\n"))
            .collect())
    }
}
