//! `LocalSandbox`: the embedded [`Sandbox`] over directories under the server's data dir.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use cap_std::fs::Dir;
use tokio_util::sync::CancellationToken;

use crate::config::{SandboxConfig, ShellMode};
use crate::error::SandboxError;
use crate::exec::{CgroupKind, Cgroups};
use ars_domain::UserId;

use crate::exec::SandboxedProcess;
use crate::layout::{PERSONAL_SKILLS_DIR, SKILLS_ROOT, USER_DATA_ROOT};
use crate::paths::{Access, Layout, Root};
use crate::quota::watch::Watcher;
use crate::quota::{Budget, Quotas, notes};
use crate::sandbox::{
    EditOutcome, ExecOutcome, ExecRequest, FileWritten, GlobOutcome, GrepOutcome, ListOutcome,
    OpenFile, ProcessRequest, ProjectedSkill, ReadOutcome, RemoveOutcome, Sandbox, TreeLimits,
    WorkspaceUsage, WriteMode, WriteOutcome,
};
use crate::scope::Scope;
use crate::{exec, files, skills};

/// The embedded sandbox: file tools on the local data dir, shell commands under bubblewrap.
///
/// A cheap `Clone` handle; all clones share one configuration.
#[derive(Clone, Debug)]
pub struct LocalSandbox {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: SandboxConfig,
    layout: Layout,
    /// Where command cgroups are made; found once, `None` where the server may not.
    cgroups: Option<Cgroups>,
    /// The workspace quota and what each workspace holds.
    quotas: Quotas,
    /// One lock per user, so two runs of one user starting together do not project Skills
    /// (or install personal skills) over each other. The map is a std `Mutex`, held only to
    /// fetch a user's lock, never across an `.await`; it keeps one entry per user seen.
    skill_locks: Mutex<HashMap<UserId, Arc<tokio::sync::Mutex<()>>>>,
}

impl LocalSandbox {
    /// A sandbox over `config.data_dir`. Touches nothing on disk until a call needs it.
    pub fn new(config: SandboxConfig) -> Self {
        if let Err(err) = config.check() {
            // The server refuses such a configuration when it loads it; a sandbox built
            // otherwise leaves the bind out of every command (see `exec::bwrap`).
            tracing::warn!(%err, "a sandbox setting is left out");
        }
        let layout = Layout::new(config.data_dir.clone());
        let cgroups = Cgroups::detect();
        let quotas = Quotas::new(config.limits.workspace_quota_bytes);
        Self {
            inner: Arc::new(Inner {
                config,
                layout,
                cgroups,
                quotas,
                skill_locks: Mutex::default(),
            }),
        }
    }

    /// Which cgroups hold each command's process tree to the process and memory limits;
    /// `None` when the server cannot create cgroups and the limits rest on rlimits alone
    /// (which do not bound the process count of commands run as root).
    pub fn cgroups(&self) -> Option<CgroupKind> {
        self.inner.cgroups.as_ref().map(Cgroups::kind)
    }

    /// Whether a command's process count is really bounded: by its cgroup, or by the rlimit,
    /// which the kernel applies to every user but root.
    pub fn process_limit_holds(&self) -> bool {
        self.inner.cgroups.is_some() || !nix::unistd::geteuid().is_root()
    }

    /// The configuration this sandbox runs with.
    pub fn config(&self) -> &SandboxConfig {
        &self.inner.config
    }

    /// Checks at start-up that `execute` can work, so the server can log the shell mode (and
    /// warn loudly about [`ShellMode::Host`]) before the first agent needs it. Returns the
    /// `bwrap` path in isolated mode, `None` in host mode.
    pub fn check_shell(&self) -> Result<Option<PathBuf>, SandboxError> {
        match self.inner.config.shell {
            ShellMode::Bubblewrap => exec::find_bwrap(&self.inner.config).map(Some),
            ShellMode::Host => Ok(None),
        }
    }

    /// Runs a blocking Skills job for `user` while holding the user's skill lock. The guard
    /// moves into the job, so the lock is held until the job ends even if the caller stops
    /// waiting for it.
    async fn locked<T, F>(&self, user: UserId, job: F) -> Result<T, SandboxError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, SandboxError> + Send + 'static,
    {
        let lock = {
            let mut locks = self
                .inner
                .skill_locks
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            Arc::clone(locks.entry(user).or_default())
        };
        let guard = lock.lock_owned().await;
        self.blocking(move |inner| {
            let _guard = guard;
            job(inner)
        })
        .await
    }

    /// Runs a blocking file-system job on tokio's blocking pool.
    async fn blocking<T, F>(&self, job: F) -> Result<T, SandboxError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, SandboxError> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || job(&inner))
            .await
            .map_err(|err| SandboxError::Io {
                path: USER_DATA_ROOT.to_owned(),
                message: format!("the sandbox worker failed: {err}"),
            })?
    }
}

impl LocalSandbox {
    /// Prepares the scope (its workdir becomes the cwd, so it must exist; preparing is
    /// idempotent) and plans the shell command `command` in it, within what the workspace
    /// quota leaves it: answers the plan, that budget and the workspace's handle.
    async fn planned_command(
        &self,
        scope: Scope,
        command: String,
        allow_network: bool,
    ) -> Result<(exec::Planned, Budget, Arc<Dir>), SandboxError> {
        let user = scope.user_id;
        self.blocking(move |inner| {
            inner.prepare(&scope)?;
            let workspace = inner.layout.open_root(user, Root::UserData)?;
            let budget = inner.quotas.budget(user, &workspace);
            let job = exec::Job::Shell {
                command,
                quota_file_size: budget.file_size(),
            };
            let config = &inner.config;
            let mut planned = exec::plan(
                config,
                &inner.layout,
                &scope,
                &job,
                allow_network,
                inner.cgroups.as_ref(),
            )?;
            planned.file_size_note = notes::file_size_note(&budget, config.limits.file_size_bytes);
            Ok((planned, budget, Arc::new(workspace)))
        })
        .await
    }

    /// Prepares the scope like [`LocalSandbox::planned_command`], refuses a workspace over its
    /// quota, and plans `job` in it.
    async fn planned(
        &self,
        scope: Scope,
        job: exec::Job,
        allow_network: bool,
    ) -> Result<exec::Planned, SandboxError> {
        let user = scope.user_id;
        self.blocking(move |inner| {
            inner.prepare(&scope)?;
            let workspace = inner.layout.open_root(user, Root::UserData)?;
            inner.quotas.ensure_not_over(user, &workspace)?;
            exec::plan(
                &inner.config,
                &inner.layout,
                &scope,
                &job,
                allow_network,
                inner.cgroups.as_ref(),
            )
        })
        .await
    }
}

impl Inner {
    /// Creates the workspace, personal Skills dir, the user's (possibly empty) Skills
    /// projection and the workdir.
    fn prepare(&self, scope: &Scope) -> Result<(), SandboxError> {
        scope.validate()?;
        for (dir, shown) in [
            (self.layout.user_data(scope.user_id), USER_DATA_ROOT),
            (self.layout.skills(scope.user_id), SKILLS_ROOT),
        ] {
            fs::create_dir_all(&dir).map_err(|err| SandboxError::io(shown, &err))?;
        }
        // These two are created through the workspace's handle: the workspace is writable by
        // the shell, so a component on the way could be a symlink planted to make us create
        // directories elsewhere.
        for dir in [PERSONAL_SKILLS_DIR.to_owned(), scope.virtual_workdir()] {
            let resolved = self.layout.resolve(scope, &dir, Access::Write)?;
            resolved
                .root
                .create_dir_all(&resolved.rel)
                .map_err(|err| resolved.err(&err))?;
        }
        Ok(())
    }
}

#[async_trait]
impl Sandbox for LocalSandbox {
    async fn prepare(&self, scope: &Scope) -> Result<(), SandboxError> {
        let scope = scope.clone();
        self.blocking(move |inner| inner.prepare(&scope)).await
    }

    async fn list(&self, scope: &Scope, path: &str) -> Result<ListOutcome, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| {
            files::list(&inner.layout, &scope, &path, inner.config.max_results)
        })
        .await
    }

    async fn read(
        &self,
        scope: &Scope,
        path: &str,
        offset_line: usize,
        limit_lines: Option<usize>,
    ) -> Result<ReadOutcome, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| {
            let max_bytes = inner.config.max_read_bytes;
            files::read(
                &inner.layout,
                &scope,
                &path,
                offset_line,
                limit_lines,
                max_bytes,
            )
        })
        .await
    }

    async fn write(
        &self,
        scope: &Scope,
        path: &str,
        content: &str,
    ) -> Result<WriteOutcome, SandboxError> {
        let (scope, path, content) = (scope.clone(), path.to_owned(), content.to_owned());
        self.blocking(move |inner| {
            files::write(&inner.layout, &scope, &path, &content, &inner.quotas)
        })
        .await
    }

    async fn edit(
        &self,
        scope: &Scope,
        path: &str,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<EditOutcome, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        let (old, new) = (old.to_owned(), new.to_owned());
        self.blocking(move |inner| {
            let quotas = &inner.quotas;
            files::edit(
                &inner.layout,
                &scope,
                &path,
                &old,
                &new,
                replace_all,
                quotas,
            )
        })
        .await
    }

    async fn glob(
        &self,
        scope: &Scope,
        pattern: &str,
        base: Option<&str>,
    ) -> Result<GlobOutcome, SandboxError> {
        let (scope, pattern) = (scope.clone(), pattern.to_owned());
        let base = base.map(str::to_owned);
        self.blocking(move |inner| {
            let max = inner.config.max_results;
            files::glob(&inner.layout, &scope, &pattern, base.as_deref(), max)
        })
        .await
    }

    async fn grep(
        &self,
        scope: &Scope,
        pattern: &str,
        path: Option<&str>,
        glob: Option<&str>,
    ) -> Result<GrepOutcome, SandboxError> {
        let (scope, pattern) = (scope.clone(), pattern.to_owned());
        let (path, glob) = (path.map(str::to_owned), glob.map(str::to_owned));
        self.blocking(move |inner| {
            let max = inner.config.max_results;
            files::grep(
                &inner.layout,
                &scope,
                &pattern,
                path.as_deref(),
                glob.as_deref(),
                max,
            )
        })
        .await
    }

    async fn execute(
        &self,
        scope: &Scope,
        request: ExecRequest,
        cancel: CancellationToken,
    ) -> Result<ExecOutcome, SandboxError> {
        let scope = scope.clone();
        let ExecRequest {
            command,
            timeout,
            allow_network,
        } = request;
        let user = scope.user_id;
        let (planned, budget, workspace) =
            self.planned_command(scope, command, allow_network).await?;
        let config = &self.inner.config;
        let timeout = timeout.min(Duration::from_secs(config.max_timeout_secs));
        tracing::debug!(?timeout, allow_network, shell = ?config.shell, "sandbox execute");
        // What a command writes is bounded per file by its rlimit; the watcher bounds the sum.
        let watcher = budget
            .limited()
            .then(|| Watcher::start(Arc::clone(&workspace), budget));
        let reached = watcher
            .as_ref()
            .map_or_else(CancellationToken::new, Watcher::reached);
        let max_output = config.max_output_bytes;
        let mut outcome = exec::run(planned, timeout, cancel, reached, max_output).await?;
        let stopped_at = watcher.and_then(Watcher::finish);
        // Measured again whatever happened: what the command left is the new usage.
        let used = self
            .blocking(move |inner| Ok(inner.quotas.measure(user, &workspace)))
            .await?;
        notes::after_command(&mut outcome, &budget, stopped_at, used);
        Ok(outcome)
    }

    async fn spawn(
        &self,
        scope: &Scope,
        request: ProcessRequest,
    ) -> Result<SandboxedProcess, SandboxError> {
        let network = request.allow_network;
        let planned = self
            .planned(scope.clone(), exec::Job::Process(request), network)
            .await?;
        tracing::debug!(network, shell = ?self.inner.config.shell, "sandbox spawn");
        // Spawned here, on the runtime's thread, never a blocking-pool one: bwrap's parent-death
        // signal fires when the spawning thread exits (see `exec::supervise`).
        exec::spawn(planned)
    }

    async fn workspace_usage(&self, user: UserId) -> Result<WorkspaceUsage, SandboxError> {
        self.blocking(move |inner| {
            let used = match inner.layout.open_root(user, Root::UserData) {
                Ok(workspace) => inner.quotas.used(user, &workspace),
                // A workspace never prepared holds nothing yet.
                Err(_) => 0,
            };
            Ok(WorkspaceUsage {
                used_bytes: used,
                quota_bytes: inner.quotas.limit(),
            })
        })
        .await
    }

    async fn projected_skills(
        &self,
        user: UserId,
    ) -> Result<BTreeMap<String, String>, SandboxError> {
        self.blocking(move |inner| skills::projected(&inner.layout, user))
            .await
    }

    async fn project_skills(
        &self,
        user: UserId,
        skills: Vec<ProjectedSkill>,
    ) -> Result<(), SandboxError> {
        self.locked(user, move |inner| {
            skills::project(&inner.layout, user, &skills)
        })
        .await
    }

    async fn install_personal_skill(
        &self,
        user: UserId,
        name: &str,
        files: Vec<(String, Vec<u8>)>,
        replace: bool,
    ) -> Result<(), SandboxError> {
        let name = name.to_owned();
        self.locked(user, move |inner| {
            let (layout, quotas) = (&inner.layout, &inner.quotas);
            skills::install(layout, quotas, user, &name, &files, replace)
        })
        .await
    }

    async fn remove_personal_skill(&self, user: UserId, name: &str) -> Result<bool, SandboxError> {
        let name = name.to_owned();
        self.locked(user, move |inner| {
            skills::remove(&inner.layout, &inner.quotas, user, &name)
        })
        .await
    }

    async fn read_bytes(
        &self,
        scope: &Scope,
        path: &str,
        max_bytes: u64,
    ) -> Result<Vec<u8>, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| files::read_bytes(&inner.layout, &scope, &path, max_bytes))
            .await
    }

    async fn read_tree(
        &self,
        scope: &Scope,
        dir: &str,
        max_files: usize,
        max_bytes: u64,
    ) -> Result<Vec<(String, Vec<u8>)>, SandboxError> {
        let (scope, dir) = (scope.clone(), dir.to_owned());
        self.blocking(move |inner| {
            files::read_tree(&inner.layout, &scope, &dir, max_files, max_bytes)
        })
        .await
    }

    async fn tree(
        &self,
        scope: &Scope,
        path: &str,
        limits: TreeLimits,
    ) -> Result<ListOutcome, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| files::tree(&inner.layout, &scope, &path, limits))
            .await
    }

    async fn open_file(&self, scope: &Scope, path: &str) -> Result<OpenFile, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        let (file, entry) = self
            .blocking(move |inner| files::open_file(&inner.layout, &scope, &path))
            .await?;
        Ok(OpenFile {
            entry,
            reader: Box::new(tokio::fs::File::from_std(file)),
        })
    }

    async fn write_bytes(
        &self,
        scope: &Scope,
        path: &str,
        bytes: Vec<u8>,
        mode: WriteMode,
    ) -> Result<FileWritten, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| {
            let quotas = &inner.quotas;
            files::write_bytes(&inner.layout, &scope, &path, &bytes, mode, quotas)
        })
        .await
    }

    async fn remove(
        &self,
        scope: &Scope,
        path: &str,
        recursive: bool,
    ) -> Result<RemoveOutcome, SandboxError> {
        let (scope, path) = (scope.clone(), path.to_owned());
        self.blocking(move |inner| {
            files::remove(&inner.layout, &scope, &path, recursive, &inner.quotas)
        })
        .await
    }

    async fn remove_workdir(&self, scope: &Scope) -> Result<bool, SandboxError> {
        let scope = scope.clone();
        self.blocking(move |inner| files::remove_workdir(&inner.layout, &scope, &inner.quotas))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_sandbox_is_usable_as_a_trait_object() {
        // The runtime holds `Arc<dyn Sandbox>`; this stops the trait from losing object safety.
        let sandbox: Arc<dyn Sandbox> = Arc::new(LocalSandbox::new(SandboxConfig::new("data")));
        let _clone = Arc::clone(&sandbox);
    }

    #[test]
    fn check_shell_reports_the_mode() {
        let mut config = SandboxConfig::new("data");
        config.shell = ShellMode::Host;
        assert_eq!(LocalSandbox::new(config.clone()).check_shell(), Ok(None));
        config.shell = ShellMode::Bubblewrap;
        config.bwrap_path = Some("/nonexistent/bwrap".into());
        let err = LocalSandbox::new(config).check_shell().unwrap_err();
        assert!(
            err.to_string().contains("apt-get install bubblewrap"),
            "{err}"
        );
    }
}
