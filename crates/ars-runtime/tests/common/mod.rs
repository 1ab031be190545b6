//! A real runtime over a fresh SQLite store, in-process events, scripted models and the local
//! sandbox; and helpers to make agents, threads and runs.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod delegation;
pub mod wire_server;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use ars_domain::{
    Agent, AgentConfig, AgentContext, AgentDraft, Backend, Caller, ContextDefaults, Limits,
    ModelConfig, Role, Run, ShareConfig, Thread,
};
use ars_events::InProcessBus;
use ars_models::{ModelRegistry, ModelsConfig};
use ars_runtime::{
    Runtime, RuntimeConfig, RuntimeParts, StartRun, SubagentMiddlewareFactory, Tool, ToolContext,
    ToolError, ToolRegistry, Waited,
};
use ars_sandbox::{LocalSandbox, Sandbox, SandboxConfig};
use ars_store::{NewUser, Store};

/// A tool that sleeps, to observe concurrency and cancellation mid-tool.
pub struct Sleep;

#[async_trait]
impl Tool for Sleep {
    fn name(&self) -> &str {
        "sleep"
    }
    fn description(&self) -> &str {
        "Sleeps for ms milliseconds."
    }
    fn parameters(&self) -> std::sync::Arc<Value> {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]})
            .into()
    }
    async fn call(&self, args: Value, _ctx: &ToolContext) -> Result<String, ToolError> {
        let ms = args["ms"]
            .as_u64()
            .ok_or_else(|| ToolError::InvalidArguments("ms must be an integer".into()))?;
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(format!("slept {ms} ms"))
    }
}

pub struct Harness {
    pub runtime: Runtime,
    pub store: Arc<dyn Store>,
    pub sandbox: Arc<dyn Sandbox>,
    /// The first user, `alice`.
    pub caller: Caller,
    pub data: tempfile::TempDir,
    _db: tempfile::TempDir,
}

pub fn scripted(script: Value) -> ModelConfig {
    ModelConfig {
        provider: "scripted".into(),
        name: "test".into(),
        temperature: None,
        max_tokens: None,
        top_p: None,
        script: Some(script),
    }
}

pub async fn harness() -> Harness {
    harness_with(ContextDefaults::default()).await
}

pub async fn harness_with(defaults: ContextDefaults) -> Harness {
    harness_config(RuntimeConfig {
        defaults,
        ..RuntimeConfig::default()
    })
    .await
}

pub async fn harness_config(config: RuntimeConfig) -> Harness {
    harness_parts(config, |_, _| {
        vec![Arc::new(SubagentMiddlewareFactory::new())]
    })
    .await
}

/// The plug-ins of a harness's runtime, built over its store and sandbox.
pub type Plugins = Vec<Arc<dyn ars_runtime::MiddlewareFactory>>;

/// A harness whose runtime has exactly the plug-ins `plugins` builds.
pub async fn harness_parts(
    config: RuntimeConfig,
    plugins: impl FnOnce(&Arc<dyn Store>, &Arc<dyn Sandbox>) -> Plugins,
) -> Harness {
    harness_models(config, ModelsConfig::default(), plugins).await
}

/// A harness whose model registry serves `models` besides the scripted provider.
///
/// Its `[defaults.base]` leave background results as notes (`subagent_results = "note"`):
/// these tests follow their children themselves. Wakes are tested with agents that ask for
/// them (`tests/background_results.rs`).
pub async fn harness_models(
    mut config: RuntimeConfig,
    models: ModelsConfig,
    plugins: impl FnOnce(&Arc<dyn Store>, &Arc<dyn Sandbox>) -> Plugins,
) -> Harness {
    config.defaults.base.subagent_results = Some(ars_domain::SubagentResults::Note);
    let (store, db) = ars_store::test_support::sqlite_fresh().await;
    let store: Arc<dyn Store> = Arc::new(store);
    let data = tempfile::tempdir().unwrap();
    let builtin = ars_runtime::builtin_tools();
    let mut tools: Vec<Arc<dyn Tool>> = builtin
        .names()
        .iter()
        .filter_map(|n| builtin.get(n))
        .collect();
    tools.push(Arc::new(Sleep));
    let sandbox: Arc<dyn Sandbox> = Arc::new(LocalSandbox::new(SandboxConfig::new(
        data.path().to_path_buf(),
    )));
    let plugins = plugins(&store, &sandbox);
    let runtime = Runtime::new(RuntimeParts {
        store: Arc::clone(&store),
        events: Arc::new(InProcessBus::new(Default::default())),
        models: Arc::new(ModelRegistry::new(&models, |_| None).unwrap()),
        secret_key: ars_domain::SecretKey::generate(),
        sandbox: Arc::clone(&sandbox),
        tools: ToolRegistry::new(tools),
        config,
        plugins,
        control: Arc::new(ars_events::LocalChannel::new()),
    });
    let mut h = Harness {
        runtime,
        store,
        sandbox,
        caller: Caller {
            id: ars_domain::UserId::new(),
            role: Role::User,
        },
        data,
        _db: db,
    };
    h.caller = h.user("alice").await;
    h
}

impl Harness {
    pub async fn user(&self, name: &str) -> Caller {
        let user = self
            .store
            .create_user(NewUser {
                username: name.into(),
                password_hash: "x".into(),
                role: Role::User,
            })
            .await
            .unwrap();
        Caller::from(&user)
    }

    /// Stores an agent owned by `owner` as given (no API validation: tests may store what the
    /// API would refuse, to prove the runtime holds the rule too).
    pub async fn agent_of(
        &self,
        owner: &Caller,
        slug: &str,
        backend: Backend,
        context: AgentContext,
        share: ShareConfig,
    ) -> Agent {
        let draft = AgentDraft {
            slug: slug.into(),
            name: slug.into(),
            description: format!("{slug} does things"),
            backend,
            config: AgentConfig { context },
            share_config: share,
            is_default: false,
        };
        self.store
            .create_agent(&draft, Some(owner.id))
            .await
            .unwrap()
    }

    pub async fn agent(&self, slug: &str, backend: Backend, context: AgentContext) -> Agent {
        let caller = self.caller;
        self.agent_of(&caller, slug, backend, context, ShareConfig::default())
            .await
    }

    /// A normal agent playing `script` with `tools`, on a new thread.
    pub async fn thread(&self, script: Value, tools: &[&str], limits: Limits) -> Thread {
        let slug = format!(
            "a{}",
            &ars_domain::RunId::new().to_string().replace('-', "")[20..]
        );
        let context = AgentContext {
            model: Some(scripted(script)),
            tools: Some(tools.iter().map(|t| t.to_string()).collect()),
            limits: Some(limits),
            ..AgentContext::default()
        };
        let agent = self.agent(&slug, Backend::Default, context).await;
        self.thread_of(&agent, &self.caller.clone()).await
    }

    pub async fn thread_of(&self, agent: &Agent, caller: &Caller) -> Thread {
        let thread = Thread::new_root(caller.id, agent.id, "t".into());
        self.store.create_thread(&thread).await.unwrap()
    }

    pub async fn start_as(&self, caller: Caller, thread: &Thread, input: &str) -> Run {
        self.runtime
            .start_run(StartRun {
                thread: thread.clone(),
                caller,
                input: ars_domain::RunInput::new(input).unwrap(),
                parent: None,
                replace_from: None,
                woken_by: None,
            })
            .await
            .unwrap()
    }

    pub async fn start(&self, thread: &Thread, input: &str) -> Run {
        self.start_as(self.caller, thread, input).await
    }

    pub async fn wait(&self, run: &Run) -> Run {
        match self
            .runtime
            .wait(run.id, Duration::from_secs(20))
            .await
            .unwrap()
        {
            Waited::Finished(run) => run,
            Waited::StillRunning(run) => panic!("run did not finish: {run:?}"),
        }
    }

    pub async fn finish(&self, thread: &Thread, input: &str) -> Run {
        let run = self.start(thread, input).await;
        self.wait(&run).await
    }

    /// The messages of `thread` in `role`, in order.
    pub async fn messages_in(
        &self,
        thread: &Thread,
        role: ars_domain::MessageRole,
    ) -> Vec<ars_domain::Message> {
        self.store
            .messages(&thread.id)
            .await
            .unwrap()
            .into_iter()
            .filter(|m| m.role == role)
            .collect()
    }

    /// The content of every tool message on `thread`, parsed as JSON where it is JSON.
    pub async fn tool_results(&self, thread: &Thread) -> Vec<Value> {
        self.messages_in(thread, ars_domain::MessageRole::Tool)
            .await
            .into_iter()
            .map(|m| serde_json::from_str(&m.content).unwrap_or(Value::String(m.content)))
            .collect()
    }

    /// The tool names offered to the model of `thread`'s next run, read back from what the
    /// scripted model saw in its system prompt is not possible; instead the loop's tool list
    /// is observed through a tool call to a name that does not exist.
    pub async fn offered_tools(&self, thread: &Thread) -> String {
        let run = self.finish(thread, "list").await;
        run.output.unwrap_or_default()
    }
}

impl Harness {
    /// A second runtime over this harness's store and sandbox, as another instance would be:
    /// its own id, bus and `plugins`, and `config`'s timing.
    pub fn other_runtime(&self, config: RuntimeConfig, plugins: Plugins) -> Runtime {
        Runtime::new(RuntimeParts {
            store: Arc::clone(&self.store),
            events: Arc::new(InProcessBus::new(Default::default())),
            models: Arc::new(ModelRegistry::new(&ModelsConfig::default(), |_| None).unwrap()),
            secret_key: ars_domain::SecretKey::generate(),
            sandbox: Arc::clone(&self.sandbox),
            tools: ars_runtime::builtin_tools(),
            config: RuntimeConfig {
                instance_id: "other".into(),
                ..config
            },
            plugins,
            control: Arc::new(ars_events::LocalChannel::new()),
        })
    }
}
