//! Command-line arguments, as the contract fixes them.

use crate::hook::AgentChoice;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "mesh-guard",
    version,
    about = "Keeps AI coding agents on a mesh's own tools: a pre-tool hook that refuses ssh, docker, journalctl and kin aimed at the mesh, and names the tool to use instead."
)]
pub struct Args {
    /// The catalog: a TOML file, or a directory of *.toml files [default: catalog.toml in the config dir]
    #[arg(long, global = true, env = "MESH_GUARD_CATALOG", value_name = "PATH")]
    pub catalog: Option<PathBuf>,
    /// The audit database [default: audit.db in the data dir]
    #[arg(long, global = true, env = "MESH_GUARD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Extra rule files layered over the built-in rules
    #[arg(long, global = true, env = "MESH_GUARD_RULES", value_name = "DIR")]
    pub rules: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read one hook event on stdin and answer in the agent's protocol (exit 0 pass, 2 refuse)
    Hook {
        #[arg(long, value_enum, default_value = "auto")]
        agent: AgentChoice,
    },
    /// Decide one shell command by hand and explain (exit 0 pass, 1 refuse, 2 error)
    Check {
        /// Print one JSON object instead of text
        #[arg(long)]
        json: bool,
        /// The command: several words joined with spaces, or one quoted string
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// List recorded events, newest first
    Audit {
        #[command(subcommand)]
        action: Option<AuditAction>,
        /// Only events of this kind (refusal, override, override-attempt, session-start)
        #[arg(long)]
        kind: Option<String>,
        /// Only events since this time: 30m, 2h, 7d or RFC 3339
        #[arg(long)]
        since: Option<String>,
        /// Only events until this time: 30m, 2h, 7d or RFC 3339
        #[arg(long)]
        until: Option<String>,
        /// Only events of this session
        #[arg(long)]
        session: Option<String>,
        /// At most this many events
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Validate the catalog
    Catalog {
        #[command(subcommand)]
        action: CatalogAction,
    },
    /// Print the "instead of" table for an agent's instructions
    InsteadOf {
        #[arg(long, value_enum, default_value = "markdown")]
        format: TableFormat,
    },
    /// List the mesh tools that replace a shell command, best first (exit 1 when none)
    Search {
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// The SessionStart hook: records a session started with an override
    SessionStart {
        #[arg(long, value_enum, default_value = "auto")]
        agent: AgentChoice,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditAction {
    /// Check the record's hash chain and its anchor (exit 1 when broken)
    Verify {
        /// Also compare with the events forwarded to the system log: a syslog server's file
        /// (RFC 5424 or rsyslog's default format) or `journalctl -o json` output
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Stream rows, oldest first, for pipelines that read files
    Export {
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        /// Only rows with an id above this
        #[arg(long, value_name = "ID")]
        after: Option<i64>,
    },
    /// Remove rows older than a time, leaving a checkpoint row so `verify` still holds
    Prune {
        /// 30d, 12h or RFC 3339
        #[arg(long, value_name = "TIME")]
        before: String,
    },
    /// Refused command shapes that no tool replaces, most refused first
    Missing {
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
pub enum CatalogAction {
    /// Validate the catalog; errors name file and line (exit 1 when invalid)
    Check,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Jsonl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    Markdown,
    Json,
}
