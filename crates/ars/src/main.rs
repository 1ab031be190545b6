//! The `ars` binary: parse arguments, load configuration, start logging, dispatch.

mod chat;
mod cli;
mod commands;
mod config;
mod metrics;
mod server;

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    let config = config::Config::load(cli.config.as_deref())?;
    // A terminal chat shows the conversation; the server's request logs would drown it.
    let quiet = matches!(cli.command, cli::Command::Chat(_));
    config::init_tracing(&config, quiet);
    commands::run(cli.command, config).await
}
