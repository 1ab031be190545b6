//! The `ars` binary: parse arguments, load configuration, start logging (and, for `serve`,
//! trace export), dispatch, and export the last spans on the way out.

mod chat;
mod cli;
mod commands;
mod config;
mod mcp_check;
mod metrics;
mod secret_key;
mod server;
mod telemetry;

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    let config = config::Config::load(cli.config.as_deref())?;
    // A terminal chat shows the conversation; the server's request logs would drown it.
    let quiet = matches!(
        cli.command,
        cli::Command::Chat(_) | cli::Command::Mcp(_) | cli::Command::Kb(_)
    );
    let serve = matches!(cli.command, cli::Command::Serve);
    let telemetry = telemetry::init(&config, quiet, serve)?;
    let result = commands::run(cli.command, config).await;
    telemetry.shutdown().await;
    result
}
