//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

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
    /// Chat with an agent in the terminal, over a server's HTTP API.
    Chat(ChatArgs),
    /// Apply database migrations and exit.
    Migrate,
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// MCP tools for operators.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Knowledge bases.
    #[command(subcommand)]
    Kb(KbCommand),
}

#[derive(Debug, Subcommand)]
pub enum KbCommand {
    /// Rebuild knowledge bases' search indexes in this data dir from the chunks in the store
    /// (the index is derived data: nothing is lost). Run it with the server stopped; a running
    /// server rebuilds its own with `POST /api/knowledge-bases/{id}/reindex`.
    Reindex {
        /// Knowledge base slugs; none: every knowledge base.
        slugs: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect to an MCP server, initialise and list its tools, and print what the web UI's
    /// "Test connection" shows, as JSON (exit status 1 when it fails). The server is an
    /// `http(s)://` URL (Streamable HTTP) or a command and its arguments, run on this machine
    /// as it is (stdio), e.g. `ars mcp check -- npx -y @modelcontextprotocol/server-everything`.
    Check(McpCheckArgs),
}

#[derive(Debug, Args)]
pub struct McpCheckArgs {
    /// A header sent with every HTTP request, `NAME=VALUE` (repeatable), e.g.
    /// `Authorization=Bearer …`.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// Also call this tool after listing, and print its result.
    #[arg(long, value_name = "TOOL")]
    pub call: Option<String>,
    /// The call's arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}", requires = "call")]
    pub arguments: String,
    /// Seconds each step (start, handshake, listing, call) may take.
    #[arg(long, default_value_t = 30)]
    pub timeout_s: u64,
    /// The server: a URL, or a command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub target: Vec<String>,
}

/// `ars chat`: without `--url`, an embedded server on the configured store is started
/// in-process and the chat talks to it over HTTP exactly as it would to a remote one.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The agent to talk to: its slug (or id).
    pub agent: String,
    /// A running ARS server, e.g. `http://127.0.0.1:8080`. Default: start one in-process.
    #[arg(long)]
    pub url: Option<String>,
    /// The bearer token for `--url`.
    #[arg(long, env = "ARS_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Without `--url`: the user to chat as (a short-lived token is minted for them).
    #[arg(long, default_value = ars_domain::user::ADMIN_USERNAME)]
    pub user: String,
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
    /// List users (id, username, role, and `disabled` for disabled accounts).
    List,
    /// Disable an account: it cannot log in and its tokens are refused until it is enabled.
    Disable { username: String },
    /// Enable a disabled account again; its tokens work again unless revoked or expired.
    Enable { username: String },
    /// Set a user's password and revoke all their tokens. Without `--password-stdin`, one is
    /// generated and printed.
    Password {
        username: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
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
