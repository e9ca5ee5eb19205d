//! Command-line arguments, as the contract fixes them.

use crate::hook::AgentChoice;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

mod hook_argv;
use hook_argv::without_env;
mod override_args;
pub use override_args::*;

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

impl Args {
    /// Parses `args` (without the program's name) for an in-process call (`crate::run`): the
    /// paths' variables are read from the environment `run` was given, not the process's,
    /// and never for a hook.
    pub fn parse_in(args: Vec<std::ffi::OsString>) -> Result<Args, clap::Error> {
        let mut args = Args::from_arg_matches(
            &without_env(Args::command())
                .try_get_matches_from(std::iter::once("mesh-guard".into()).chain(args))?,
        )?;
        if args.command.is_hook() {
            return Ok(args);
        }
        let var = |name| {
            crate::io::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        args.catalog = args.catalog.or_else(|| var("MESH_GUARD_CATALOG"));
        args.db = args.db.or_else(|| var("MESH_GUARD_DB"));
        args.rules = args.rules.or_else(|| var("MESH_GUARD_RULES"));
        Ok(args)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read one hook event on stdin and answer in the agent's protocol (exit 0 pass, 2 refuse)
    #[command(
        after_help = "The agent runs it, as its PreToolUse hook (`mesh-guard install` writes that).\n\nExample:\n  echo '{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ssh atlas uptime\"}}' | mesh-guard hook --agent claude"
    )]
    Hook {
        /// The agent whose event and protocol these are: auto (detected from the event), claude, gemini, codex, copilot or cursor
        #[arg(long, value_enum, default_value = "auto")]
        agent: AgentChoice,
        /// The agent has mesh-guard's MCP server: a refusal points at its `mesh_search` tool
        #[arg(long)]
        mcp: bool,
    },
    /// Decide one shell command by hand and explain (exit 0 pass, 1 refuse, 2 error)
    #[command(
        after_help = "Example:\n  mesh-guard check ssh atlas journalctl -u mesh-controller\n  mesh-guard check --json 'docker -H ssh://orion ps'"
    )]
    Check {
        /// Print one JSON object instead of text
        #[arg(long)]
        json: bool,
        /// The message as an agent with mesh-guard's MCP server reads it (as `hook --mcp`)
        #[arg(long)]
        mcp: bool,
        /// Preview this override grant, verified as the hook would [default: the one in force]
        #[arg(long = "override", value_name = "GRANT")]
        override_reason: Option<String>,
        /// Preview a grant of this scope (machine:NAME module:NAME rule:ID), unsigned
        #[arg(long, value_name = "TERMS")]
        scope: Option<String>,
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
    #[command(
        after_help = "Example:\n  mesh-guard audit --since 24h --kind refusal,override --target atlas\n  mesh-guard audit verify"
    )]
    Audit {
        #[command(subcommand)]
        action: Option<AuditAction>,
        #[arg(long, value_name = "KIND", value_delimiter = ',', help = kind_help())]
        kind: Vec<String>,
        #[arg(long, value_name = "RULE", value_parser = <crate::rule::Rule as std::str::FromStr>::from_str, help = rule_help())]
        rule: Option<crate::rule::Rule>,
        /// Only events whose target contains this (a machine, container or unit name)
        #[arg(long, value_name = "NAME")]
        target: Option<String>,
        /// Show each command whole, however wide (the default when stdout is not a terminal)
        #[arg(long)]
        wide: bool,
        /// Only events since this time: 30m, 2h, 7d or RFC 3339
        #[arg(long)]
        since: Option<String>,
        /// Only events until this time: 30m, 2h, 7d or RFC 3339
        #[arg(long)]
        until: Option<String>,
        /// Only events of this session
        #[arg(long)]
        session: Option<String>,
        /// Only events older than row ID (the listing is newest first): the last ID a page showed gives the next page
        #[arg(long, value_name = "ID")]
        after: Option<i64>,
        /// At most this many events; stderr says when more follow
        #[arg(long)]
        limit: Option<usize>,
        /// table: aligned columns for a terminal; json: every field, as an array; csv: every field, with a header row
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Validate or compile the catalog
    #[command(
        after_help = "Example:\n  mesh-guard --catalog /etc/mesh-guard/catalog.toml catalog check"
    )]
    Catalog {
        #[command(subcommand)]
        action: CatalogAction,
    },
    /// Print the "instead of" table for an agent's instructions
    #[command(after_help = "Example:\n  mesh-guard instead-of >> CLAUDE.md")]
    InsteadOf {
        /// markdown: a table for an instructions file; json: the same rows for tools
        #[arg(long, value_enum, default_value = "markdown")]
        format: TableFormat,
        /// The agent has mesh-guard's MCP server: the table points at `mesh_search`
        #[arg(long)]
        mcp: bool,
    },
    /// Decide every shell command in agents' session transcripts, record nothing, and report what would be refused
    #[command(
        after_help = "Without PATH: the agents' own transcripts (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.copilot/session-state).\n\nExample:\n  mesh-guard replay\n  mesh-guard replay ~/.claude/projects/-srv-app --format json"
    )]
    Replay {
        /// Transcript files, or directories of them (*.jsonl) [default: the agents' own]
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// table: a summary for a terminal; json: every figure; csv: one row per figure
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// List the mesh tools that replace a shell command, best first (exit 1 when none)
    #[command(
        after_help = "Example:\n  mesh-guard search ssh atlas systemctl status mesh-controller"
    )]
    Search {
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
    /// An MCP server on stdio with the tools `mesh_search` and `mesh_instead_of` (exit 0 when stdin closes)
    #[command(
        after_help = "The agent starts it, from its MCP configuration.\n\nExample:\n  claude mcp add mesh-guard -- mesh-guard mcp"
    )]
    Mcp,
    /// Run operator policy tests: each `[[case]]` of a TOML file is a command and what the guard must do with it (exit 0 all hold, 1 some fail, 2 bad file)
    #[command(after_help = "Each file holds cases such as:

  [[case]]
  command = \"ssh atlas journalctl -u mesh-controller\"
  expect  = \"refuse\"          # or \"pass\"
  instead = \"logs\"            # optional: the first tool the refusal names

Example:
  mesh-guard --catalog /etc/mesh-guard/catalog.toml test policy/*.toml")]
    Test {
        /// Policy files (TOML) to run
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// The SessionStart hook: records a session started with an override
    #[command(
        after_help = "The agent runs it when a session starts (`mesh-guard install` writes that).\n\nExample:\n  echo '{\"session_id\":\"s1\"}' | mesh-guard session-start --agent claude"
    )]
    SessionStart {
        /// The agent whose event and protocol these are: auto (detected from the event), claude, gemini, codex, copilot or cursor
        #[arg(long, value_enum, default_value = "auto")]
        agent: AgentChoice,
    },
    /// Write the guard's hooks into an agent's settings, merged, with a backup (exit 0 done, 2 error)
    ///
    /// The hooks name the --catalog, --rules and --db given here (a hook reads no variable for them).
    ///
    /// Example: sudo mesh-guard --catalog ./catalog.toml install codex --scope managed --bin /usr/local/bin/mesh-guard
    Install(InstallArgs),
    /// Remove the guard's hooks from an agent's settings, with a backup (exit 0 done, 2 error)
    #[command(after_help = "Example:\n  mesh-guard uninstall claude --scope user")]
    Uninstall(InstallArgs),
    /// The operator's override: sign a grant for the session to start with
    #[command(
        after_help = "Example:\n  eval \"$(mesh-guard override grant --reason 'incident 4711' --machine atlas --for 2h)\"\n  claude"
    )]
    Override {
        #[command(subcommand)]
        action: OverrideAction,
    },
    /// Check the setup an agent would run under; each finding says how to fix it (exit 1 when the guard cannot work)
    #[command(after_help = "Example:\n  sudo mesh-guard doctor --user alice")]
    Doctor {
        /// Print one JSON object instead of text
        #[arg(long)]
        json: bool,
        /// The agent's user, when run as root [default: SUDO_USER, else the current user]
        #[arg(long, value_name = "NAME")]
        user: Option<String>,
    },
}

/// `audit --kind`'s help: the record's kinds, as the record names them.
fn kind_help() -> String {
    let kinds = crate::record::Kind::ALL.map(crate::record::Kind::as_str);
    format!(
        "Only events of these kinds: {} (repeat it, or separate with commas)",
        kinds.join(", ")
    )
}

/// `audit --rule`'s help: every rule's id.
fn rule_help() -> String {
    let rules = crate::rule::Rule::ALL.map(crate::rule::Rule::id);
    format!("Only events of this rule: {}", rules.join(", "))
}

/// The global options each subcommand does nothing with: still accepted there (the
/// contract puts them on every subcommand), but not listed in its help.
const UNUSED_GLOBALS: [(&str, &[&str]); 5] = [
    ("audit", &["catalog", "rules"]),
    ("instead-of", &["db", "rules"]),
    ("search", &["db"]),
    ("mcp", &["db"]),
    ("catalog", &["db"]),
];

impl Args {
    /// The command line, with help that lists only the options each subcommand reads.
    pub fn parse_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Args {
        let args: Vec<std::ffi::OsString> = args.into_iter().collect();
        if let Some(hook) = Args::parse_hook(&args) {
            return hook;
        }
        Args::clap_or_exit(args)
    }

    /// Every command line but the hook's, read by clap (or its error printed, and the
    /// process ended). Not inlined: clap's locals would make the frame that stays on the
    /// stack under every hook's decision several pages deep.
    #[cold]
    #[inline(never)]
    fn clap_or_exit(args: Vec<std::ffi::OsString>) -> Args {
        Args::try_parse_args(args).unwrap_or_else(|e| e.exit())
    }

    /// The hook's plain command lines (`args` with the program's name), read as clap reads
    /// them but without building its command tree; `None` for anything else, which clap
    /// reads (decision 0030).
    pub fn parse_hook(args: &[std::ffi::OsString]) -> Option<Args> {
        hook_argv::parse(args)
    }

    /// The command line as clap reads it (`args` with the program's name), or its error.
    pub fn try_parse_args(
        args: impl IntoIterator<Item = std::ffi::OsString>,
    ) -> Result<Args, clap::Error> {
        let mut cmd = Args::command();
        for (sub, unused) in UNUSED_GLOBALS {
            for id in unused {
                let Some(global) = cmd.get_arguments().find(|a| a.get_id() == *id).cloned() else {
                    continue;
                };
                // A subcommand's own argument of the same id is not given the global one.
                cmd = cmd.mut_subcommand(sub, |s| s.arg(global.global(false).hide(true)));
            }
        }
        let args: Vec<std::ffi::OsString> = args.into_iter().collect();
        // A hook is read without the paths' variables; the operator's commands with them.
        if let Some(hook) = hook_argv::read_as_hook(&cmd, &args) {
            return hook;
        }
        let matches = cmd.try_get_matches_from(args)?;
        Args::from_arg_matches(&matches)
    }
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent: claude, codex, gemini, copilot or cursor
    pub agent: String,
    /// user: the user's settings; project: the current directory's; managed: the agent's machine-wide policy, root-owned (claude: /etc/claude-code/managed-settings.json, codex: /etc/codex/requirements.toml, gemini: /etc/gemini-cli/settings.json, copilot: /etc/github-copilot/policy.d/mesh-guard.json, cursor: /etc/cursor/hooks.json)
    #[arg(long, value_enum, default_value = "user")]
    pub scope: crate::install::Scope,
    /// The binary the hooks run [default: this executable]; in the managed scope it must be root-owned and writable only by root
    #[arg(long, value_name = "PATH")]
    pub bin: Option<PathBuf>,
    /// The settings file to write, instead of the agent's usual one for the scope
    #[arg(long, value_name = "PATH")]
    pub settings: Option<PathBuf>,
    /// Managed scope: where the catalog, rules and compiled index are installed
    #[arg(long, value_name = "DIR", default_value = crate::install::SYSTEM_DIR)]
    pub system_dir: PathBuf,
    /// Managed scope: also keep every user, project and plugin hook from running (claude: allowManagedHooksOnly, codex: allow_managed_hooks_only; the others have no such setting)
    #[arg(long)]
    pub managed_hooks_only: bool,
    /// Managed scope: write the system files under DIR as if it were / (a machine image, a test's scratch root); the hooks name them as the machine will see them, and nothing is checked for root ownership
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

impl InstallArgs {
    pub fn request(&self, given: crate::install::Given) -> crate::install::Request {
        crate::install::Request {
            root: self.root.clone(),
            given,
            agent: self.agent.clone(),
            scope: self.scope,
            settings: self.settings.clone(),
            bin: self.bin.clone(),
            system_dir: Some(self.system_dir.clone()),
            managed_hooks_only: self.managed_hooks_only,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum AuditAction {
    /// Check the record's hash chain and its anchor (exit 1 when broken)
    #[command(after_help = "Example:\n  mesh-guard audit verify --log /var/log/syslog")]
    Verify {
        /// Also compare with the events forwarded to the system log: a syslog server's file
        /// (RFC 5424 or rsyslog's default format) or `journalctl -o json` output
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Stream rows, oldest first, for pipelines that read files
    #[command(after_help = "Example:\n  mesh-guard audit export --after 1200 >> events.jsonl")]
    Export {
        /// jsonl: one JSON object a line
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        /// Only rows with an id above this
        #[arg(long, value_name = "ID")]
        after: Option<i64>,
    },
    /// Remove rows older than a time, leaving a checkpoint row so `verify` still holds
    #[command(after_help = "Example:\n  mesh-guard audit prune --before 90d")]
    Prune {
        /// 30d, 12h or RFC 3339
        #[arg(long, value_name = "TIME")]
        before: String,
    },
    /// Refused command shapes that no tool replaces, most refused first
    #[command(after_help = "Example:\n  mesh-guard audit missing --format csv > missing.csv")]
    Missing {
        /// table, json or csv
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

#[derive(Debug, Subcommand)]
pub enum CatalogAction {
    /// Validate the catalog; errors name file and line, warnings name entries that can never match (exit 1 when invalid; warnings keep 0)
    #[command(
        after_help = "Example:\n  mesh-guard --catalog /etc/mesh-guard/catalog.toml catalog check"
    )]
    Check,
    /// Write the compiled index beside the catalog (<catalog>.idx), so that a hook never writes it (exit 1 when invalid)
    #[command(
        after_help = "Example:\n  sudo mesh-guard --catalog /etc/mesh-guard/catalog.toml catalog compile"
    )]
    Compile,
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
