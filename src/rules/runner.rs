//! Programs that run named recipes from a file in the project (`rules/runners.toml`): where
//! the file is and which words name recipes, as each runner has it. Read only when a
//! program of one of these names runs.

use serde::Deserialize;
use std::sync::OnceLock;

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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    runner: Vec<Runner>,
}

const BUILT_IN: &str = include_str!("../../rules/runners.toml");

fn all() -> &'static [Runner] {
    static RUNNERS: OnceLock<Vec<Runner>> = OnceLock::new();
    // The file is the crate's own: `tests` read it, so a broken one fails them, and it
    // cannot change after the build.
    RUNNERS.get_or_init(|| {
        toml::from_str::<File>(BUILT_IN)
            .map(|f| f.runner)
            .unwrap_or_default()
    })
}

/// Whether a `names = [...]` line of the file holds `program`: every command's program is
/// asked, and this spares the parse for all but runners.
fn named(program: &str) -> bool {
    BUILT_IN
        .lines()
        .filter_map(|line| line.strip_prefix("names = ["))
        .flat_map(|names| names.split(','))
        .any(|name| name.trim().trim_end_matches(']').trim_matches('"') == program)
}

/// The runner `program` is when its arguments are `args` (`cargo make …`), if any.
pub fn runner(program: &str, args: &[String]) -> Option<&'static Runner> {
    if !named(program) {
        return None;
    }
    all().iter().find(|r| {
        r.names.iter().any(|n| n == program)
            && r.subcommand
                .as_ref()
                .is_none_or(|sub| args.iter().find(|a| !a.starts_with('-')) == Some(sub))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_runners_read() {
        let file: File = toml::from_str(BUILT_IN).expect("rules/runners.toml reads");
        assert!(file.runner.len() >= 10);
        assert_eq!(runner("npm", &[]).unwrap().format, Format::PackageJson);
        assert_eq!(
            runner("cargo", &["make".into()]).unwrap().format,
            Format::CargoMake
        );
        assert!(runner("cargo", &["build".into()]).is_none());
        assert!(runner("ls", &[]).is_none());
        // The quick look finds every runner's every name, and nothing else.
        for runner in &file.runner {
            for name in &runner.names {
                assert!(named(name), "{name}");
            }
        }
        assert!(!named("test") && !named("run") && !named("--prefix"));
    }
}
