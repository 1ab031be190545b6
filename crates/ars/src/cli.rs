//! Command-line arguments.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// ARS, the agent runtime server.
#[derive(Debug, Parser)]
#[command(name = "ars", version, about)]
pub struct Cli {
    /// Configuration file (TOML). Default: `ars.toml` in the working directory, if present.
    /// Every setting can also be given as an `ARS_*` environment variable.
    #[arg(long, global = true, env = "ARS_CONFIG")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (migrates the database first).
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user. Without a password option, one is generated and printed.
    Add {
        username: String,
        /// Give the user the admin role.
        #[arg(long)]
        admin: bool,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users.
    List,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create an API token for a user and print it (shown once).
    Create {
        username: String,
        /// A label for the token.
        #[arg(long, default_value = "cli")]
        name: String,
        /// Days until it expires; default: never.
        #[arg(long)]
        expires_in_days: Option<u32>,
    },
}
