//! The `ars` binary: parse arguments, load configuration, start logging, dispatch.

mod cli;
mod commands;
mod config;

use clap::Parser;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    let config = config::Config::load(cli.config.as_deref())?;
    config::init_tracing(&config);
    commands::run(cli.command, config).await
}
