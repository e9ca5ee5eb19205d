//! The self-protection tables that are no writers: agent CLIs, which must start with the
//! guard's hooks, and the guard's own command line. Data only.

use serde::Deserialize;

/// An agent CLI: started from inside a session, it must start with the guard's hooks.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Program names, and the package names launchers run it by (`npx @anthropic-ai/claude-code`).
    pub names: Vec<String>,
    /// The words that open its plugin commands (`claude plugin …`).
    #[serde(default)]
    pub plugin_commands: Vec<String>,
    /// The plugin commands that turn a plugin off.
    #[serde(default)]
    pub plugin_off: Vec<String>,
    /// Options whose value is settings JSON, or a settings file (`--settings`).
    #[serde(default)]
    pub settings_options: Vec<String>,
    /// Options whose value lists the settings sources loaded (`--setting-sources user,project`).
    #[serde(default)]
    pub setting_sources_options: Vec<String>,
    /// Options whose value overrides one configuration key (`codex -c key=value`): refused
    /// when the key is about hooks.
    #[serde(default)]
    pub config_options: Vec<String>,
    /// Variables that move where it reads its settings (`CLAUDE_CONFIG_DIR`, `HOME`).
    #[serde(default)]
    pub config_env: Vec<String>,
    /// Its subcommands that change its own settings, each as its words (`"config set"`;
    /// `*` any operand: `"config * *"`; a word with a dash, that option: `"config --rm"`):
    /// the settings that hold the guard's hooks are the operator's.
    #[serde(default)]
    pub settings_commands: Vec<String>,
}

/// The guard's own command line: the subcommands an agent may not run, because they
/// destroy or rewrite the record or change how the guard is installed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardCli {
    /// Its program names.
    pub names: Vec<String>,
    /// Options that take the next word as their value (`--db PATH`): skipped with it when
    /// the subcommand is read.
    #[serde(default)]
    pub value_options: Vec<String>,
    /// Subcommands an agent may not run, as words in order (`audit prune`): the first is
    /// the subcommand, the rest may have options between them.
    #[serde(default)]
    pub refused: Vec<String>,
}
