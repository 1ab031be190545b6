//! The agent-write rules that need the runtime: tools must be built-in, the model's provider
//! must exist (configured, built-in, or stored by an admin), and a scripted model's script
//! must parse. The domain's own rules ran
//! before these (see `agents::validated`), so the shapes here are already sound.

use ars_domain::AgentContext;
use ars_models::config::SCRIPTED;
use ars_runtime::Runtime;

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
            ));
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
            ));
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
