//! The `Tool` seam: what an agent can call, and the context a call runs in.
//!
//! Tools take JSON arguments and answer text the model reads. Bad arguments are a
//! [`ToolError`] the model sees and can correct, never a crashed run.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use ars_domain::{RunId, ThreadId, UserId};
use ars_sandbox::{Sandbox, SandboxError, Scope};

/// Everything a tool call may use. Cheap to clone.
#[derive(Clone)]
pub struct ToolContext {
    pub user_id: UserId,
    pub thread_id: ThreadId,
    pub run_id: RunId,
    /// The id the model gave this call.
    pub call_id: String,
    /// The sandbox scope: the root conversation's runtime and workdir.
    pub scope: Scope,
    /// The sandbox, reached through [`ToolContext::sandbox`].
    pub sandbox: RunSandbox,
    /// Cancelled when the run is cancelled or times out.
    pub cancel: CancellationToken,
    /// Whether the agent's config lets the shell reach the network.
    pub allow_network: bool,
}

impl ToolContext {
    /// The sandbox, with the scope's directories (workspace, workdir) made: the run's first
    /// call makes them (concurrent calls wait for it; a failure is tried again by the next
    /// call), so a run that calls no file or shell tool makes none.
    pub async fn sandbox(&self) -> Result<&dyn Sandbox, SandboxError> {
        let RunSandbox { sandbox, prepared } = &self.sandbox;
        prepared
            .get_or_try_init(|| sandbox.prepare(&self.scope))
            .await?;
        Ok(sandbox.as_ref())
    }
}

/// The sandbox of one run's tool calls, and whether the run's scope is prepared yet. Clones
/// share both.
#[derive(Clone)]
pub struct RunSandbox {
    sandbox: Arc<dyn Sandbox>,
    prepared: Arc<tokio::sync::OnceCell<()>>,
}

impl RunSandbox {
    /// `sandbox`, with the run's scope not prepared yet.
    pub fn new(sandbox: Arc<dyn Sandbox>) -> Self {
        Self {
            sandbox,
            prepared: Arc::default(),
        }
    }
}

/// Why a tool call failed. The message is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
}

impl From<ars_sandbox::SandboxError> for ToolError {
    fn from(e: ars_sandbox::SandboxError) -> Self {
        Self::Failed(e.to_string())
    }
}

/// A capability an agent can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by; unique within a run.
    fn name(&self) -> &str;
    /// When to use it; models lean on this heavily.
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object, shared: a tool builds it once, not for every run
    /// that offers it (see [`tool_meta!`]).
    fn parameters(&self) -> Arc<Value>;
    /// Runs the call.
    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// A tool's fixed boilerplate — its name, description and argument schema — inside an
/// `impl Tool for …` block, so each tool states only what it is and what it does.
#[macro_export]
macro_rules! tool_meta {
    ($name:expr, $description:expr, $schema:expr) => {
        fn name(&self) -> &str {
            $name
        }
        fn description(&self) -> &str {
            $description
        }
        fn parameters(&self) -> ::std::sync::Arc<::serde_json::Value> {
            static SCHEMA: ::std::sync::LazyLock<::std::sync::Arc<::serde_json::Value>> =
                ::std::sync::LazyLock::new(|| ::std::sync::Arc::new($schema));
            ::std::sync::Arc::clone(&SCHEMA)
        }
    };
}

/// A tool's JSON answer as the text the model reads.
pub fn to_json<T: Serialize>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string(value).map_err(|e| ToolError::Failed(e.to_string()))
}

/// Parses arguments into a typed struct, naming the offending field on failure.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ToolError::InvalidArguments(inner.to_string())
        } else {
            ToolError::InvalidArguments(format!("{path}: {inner}"))
        }
    })
}

/// A tool's public description, for `GET /api/tools` and model requests.
#[derive(Clone, Debug, Serialize)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    pub parameters: Arc<Value>,
}

impl ToolInfo {
    pub fn of(tool: &dyn Tool) -> Self {
        Self {
            name: tool.name().to_string(),
            description: tool.description().to_string(),
            parameters: tool.parameters(),
        }
    }
}

/// The built-in tools by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
}

impl ToolRegistry {
    pub fn new(tools: impl IntoIterator<Item = Arc<dyn Tool>>) -> Self {
        Self {
            tools: tools
                .into_iter()
                .map(|t| (t.name().to_string(), t))
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.get(name).cloned()
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    pub fn infos(&self) -> Vec<ToolInfo> {
        self.tools
            .values()
            .map(|t| ToolInfo::of(t.as_ref()))
            .collect()
    }
}
