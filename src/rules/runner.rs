//! Programs that run named recipes from a file in the project (`rules/runners.toml`): where
//! the file is and which words name recipes, as each runner has it. Read only when a
//! program of one of these names runs.

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

mod built {
    include!(concat!(env!("OUT_DIR"), "/runners.rs"));
}

/// The runner `program` is when its arguments are `args` (`cargo make …`), if any. Every
/// command's program is asked, and almost none is a runner: the names are build.rs's table,
/// and only the one entry found is read.
pub fn runner(program: &str, args: &[String]) -> Option<Runner> {
    // Where the subcommand stands is for the runner's words to say (`cargo --color never
    // make`): here it need only be among them.
    let (_, _, json) = built::RUNNERS.iter().find(|(names, subcommand, _)| {
        names.contains(&program) && subcommand.is_none_or(|sub| args.iter().any(|a| a == sub))
    })?;
    // The file is the crate's own and its test reads every entry: it parses.
    serde_json::from_str::<Runner>(json).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILT_IN: &str = include_str!("../../rules/runners.toml");

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        runner: Vec<Runner>,
    }

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
        // build.rs's table finds every runner by each of its names, and its JSON reads as
        // the TOML does, key for key.
        for runner in &file.runner {
            for name in &runner.names {
                let args: Vec<String> = runner.subcommand.iter().cloned().collect();
                let found = super::runner(name, &args).expect(name);
                assert_eq!(format!("{found:?}"), format!("{runner:?}"), "{name}");
            }
        }
        for other in ["test", "run", "--prefix", "make_", "np"] {
            assert!(super::runner(other, &[]).is_none(), "{other}");
        }
    }
}
