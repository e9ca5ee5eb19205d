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

const BUILT_IN: &str = include_str!("../../rules/runners.toml");

/// The `[[runner]]` entries of the file, as text: every command's program is asked, so the
/// one entry a name needs is found by its `names` line and only it is parsed (the whole
/// file's parse costs a pass more than its decision).
fn entries() -> impl Iterator<Item = &'static str> {
    BUILT_IN.split("[[runner]]").skip(1)
}

/// The values of one `key = [...]` or `key = "..."` line of an entry, as text.
fn values<'a>(entry: &'a str, key: &str) -> Vec<&'a str> {
    entry
        .lines()
        .filter_map(|line| line.strip_prefix(key)?.trim_start().strip_prefix('='))
        .flat_map(|value| value.trim().trim_matches(['[', ']']).split(','))
        .map(|v| v.trim().trim_matches('"'))
        .filter(|v| !v.is_empty())
        .collect()
}

/// The runner `program` is when its arguments are `args` (`cargo make …`), if any.
pub fn runner(program: &str, args: &[String]) -> Option<Runner> {
    // Where the subcommand stands is for the runner's words to say (`cargo --color never
    // make`): here it need only be among them.
    let entry = entries().find(|entry| {
        values(entry, "names").contains(&program)
            && values(entry, "subcommand")
                .first()
                .is_none_or(|sub| args.iter().any(|a| a == sub))
    })?;
    // The file is the crate's own and its test reads every entry: it parses.
    toml::from_str::<Runner>(entry).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // The look by text finds every runner by each of its names, and nothing else.
        for runner in &file.runner {
            for name in &runner.names {
                let args: Vec<String> = runner.subcommand.iter().cloned().collect();
                let found = super::runner(name, &args).expect(name);
                assert_eq!(found.names, runner.names, "{name}");
                assert_eq!(found.format, runner.format, "{name}");
            }
        }
        for other in ["test", "run", "--prefix", "make_", "np"] {
            assert!(super::runner(other, &[]).is_none(), "{other}");
        }
    }
}
