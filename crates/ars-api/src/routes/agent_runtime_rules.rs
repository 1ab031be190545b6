//! The agent-write rules that need the runtime: tools must be built-in, the model's provider
//! must exist (configured, built-in, or stored by an admin), and a scripted model's script
//! must parse. The domain's own rules ran
//! before these (see `agents::validated`), so the shapes here are already sound.

use ars_domain::{AgentContext, Caller};
use ars_models::config::SCRIPTED;
use ars_runtime::Runtime;
use ars_store::Store;

use ars_domain::{ErrorReason, Reason};

use crate::ApiError;

/// Checks `context` against what this server can actually run now.
pub async fn check(runtime: &Runtime, context: &AgentContext) -> Result<(), ApiError> {
    if let Some(tools) = &context.tools {
        let available = runtime.tool_names();
        if let Some(unknown) = tools.iter().find(|t| !available.contains(t)) {
            return Err(ApiError::unprocessable(
                "config_json.context.tools",
                format!(
                    "unknown tool `{unknown}`; available tools: {}",
                    available.join(", ")
                ),
            )
            .because(Reason::new(ErrorReason::Unknown).with("name", unknown.as_str())));
        }
    }
    if let Some(model) = &context.model {
        let snapshot = runtime.model_snapshot().await?;
        let models = &snapshot.registry;
        if !models.contains(&model.provider) {
            let configured: Vec<String> = models.list().into_iter().map(|p| p.name).collect();
            return Err(ApiError::unprocessable(
                "config_json.context.model.provider",
                format!(
                    "model provider `{}` is not configured on this server; configured providers: {}",
                    model.provider,
                    configured.join(", ")
                ),
            )
            .because(Reason::new(ErrorReason::Unknown).with("name", model.provider.as_str())));
        }
        if let Some(script) = &model.script {
            if model.provider != SCRIPTED {
                return Err(ApiError::unprocessable(
                    "config_json.context.model.script",
                    format!("only the `{SCRIPTED}` provider plays a script"),
                ));
            }
            ars_models::validate_script(script).map_err(|e| {
                ApiError::unprocessable(
                    "config_json.context.model.script",
                    format!("invalid script: {e}"),
                )
            })?;
        }
    }
    Ok(())
}

/// Checks that every MCP server `context` names is one `caller` can see. A slug the agent
/// already named is kept even when its server is gone or no longer visible (runs drop it with
/// a log line), so an agent stays editable; a new one must be visible.
pub async fn check_mcp_servers(
    store: &dyn Store,
    caller: &Caller,
    context: &AgentContext,
    existing: Option<&AgentContext>,
) -> Result<(), ApiError> {
    let Some(slugs) = &context.mcp_servers else {
        return Ok(());
    };
    let kept = existing.and_then(|c| c.mcp_servers.as_ref());
    for (i, slug) in slugs.iter().enumerate() {
        if kept.is_some_and(|kept| kept.contains(slug)) {
            continue;
        }
        let visible = store
            .mcp_server_by_slug(slug)
            .await?
            .is_some_and(|server| caller.can_view(&server));
        if !visible {
            return Err(ApiError::unprocessable(
                format!("config_json.context.mcp_servers[{i}]"),
                format!("no MCP server `{slug}` that you can use"),
            )
            .because(Reason::new(ErrorReason::Unknown).with("name", slug.as_str())));
        }
    }
    Ok(())
}

/// Checks that every knowledge base `context` names is one `caller` can see, with the same
/// leniency for names the agent already had as [`check_mcp_servers`].
pub async fn check_knowledge_bases(
    store: &dyn Store,
    caller: &Caller,
    context: &AgentContext,
    existing: Option<&AgentContext>,
) -> Result<(), ApiError> {
    let Some(slugs) = &context.knowledge_bases else {
        return Ok(());
    };
    let kept = existing.and_then(|c| c.knowledge_bases.as_ref());
    for (i, slug) in slugs.iter().enumerate() {
        if kept.is_some_and(|kept| kept.contains(slug)) {
            continue;
        }
        let visible = store
            .knowledge_base_by_slug(slug)
            .await?
            .is_some_and(|kb| caller.can_view(&kb));
        if !visible {
            return Err(ApiError::unprocessable(
                format!("config_json.context.knowledge_bases[{i}]"),
                format!("no knowledge base `{slug}` that you can use"),
            )
            .because(Reason::new(ErrorReason::Unknown).with("name", slug.as_str())));
        }
    }
    Ok(())
}
