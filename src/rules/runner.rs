//! Programs that run named recipes from a file in the project (`[[runner]]`, built in from
//! `rules/runners.toml`, more from `--rules`): where the file is and which words name
//! recipes, as each runner has it. Read only when a program of one of these names runs.

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runner {
    pub names: Vec<String>,
    /// `cargo make`: the runner is the program with this first operand.
    #[serde(default)]
    pub subcommand: Option<String>,
    pub format: Format,
    pub files: Vec<String>,
    #[serde(default)]
    pub upward: bool,
    #[serde(default)]
    pub file_options: Vec<String>,
    #[serde(default)]
    pub directory_options: Vec<String>,
    #[serde(default)]
    pub value_options: Vec<String>,
    #[serde(default)]
    pub unknown_options: Vec<String>,
    #[serde(default)]
    pub run: Vec<String>,
    #[serde(default)]
    pub own: Vec<String>,
    #[serde(default)]
    pub bare: bool,
    #[serde(default)]
    pub many: bool,
    #[serde(default)]
    pub recipe_options: Vec<String>,
    #[serde(default)]
    pub hooks: Vec<String>,
    /// `[subcommand, recipes…]`.
    #[serde(default)]
    pub lifecycle: Vec<Vec<String>>,
    #[serde(default)]
    pub arguments: bool,
    #[serde(default)]
    pub inert: Vec<String>,
    /// Subcommands of the runner's own, never a recipe by a bare name (`pnpm deploy`).
    #[serde(default)]
    pub builtins: Vec<String>,
    /// `pdm run ssh db`: a first operand that names no recipe is a command it runs.
    #[serde(default)]
    pub runs_commands: bool,
    /// After the first recipe every word is a recipe or an argument, never the runner's
    /// option (clap's trailing arguments: `just deploy -n`, `cargo make deploy -h`).
    #[serde(default)]
    pub trailing: bool,
    /// A recipe word `DIR/NAME` runs NAME of the file found from DIR (`just svc/deploy`;
    /// `DIR/` alone, its default).
    #[serde(default)]
    pub dir_recipe: bool,
}

/// How a runner's file is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    #[default]
    PackageJson,
    Justfile,
    Taskfile,
    CargoMake,
    Pdm,
    Poetry,
    Tox,
    Nox,
}
