//! Self-protection: the guard's own subcommands that destroy or rewrite its record or change
//! its install are the operator's (`rules/self.toml`'s `[[guard_cli]]`).

use crate::argv::base_name;
use crate::decide::{Guard, Refusal, Walk, Why};
use crate::rule::Rule;
use crate::rules::GuardCli;
use crate::shell::{Command, UNKNOWN, is_known};

impl Guard<'_> {
    /// The refused subcommand `words` (program first) run of the guard's own command line.
    pub(in crate::decide) fn guard_subcommand(&self, words: &[String]) -> Option<Why> {
        let (program, args) = words.split_first()?;
        let cli = self.rules.guard_cli(base_name(program))?;
        refused_subcommand(cli, args, true).map(Why::GuardSubcommand)
    }

    /// A copy of the guard's binary under another name (`cp "$(command -v mesh-guard)" x`,
    /// then `./x audit prune`): a program whose words spell a refused subcommand is compared
    /// with the running guard's own executable, file against file, as it is when the hook
    /// runs. A copy the same command makes is not there yet to compare.
    pub(in crate::decide) fn copied_guard_subcommand(
        &self,
        command: &Command,
        walk: &Walk,
    ) -> Option<Why> {
        let (program, args) = command.words.split_first()?;
        if !is_known(program) || self.rules.guard_cli(base_name(program)).is_some() {
            return None;
        }
        let subcommand = self
            .rules
            .guard_clis()
            .into_iter()
            .find_map(|cli| refused_subcommand(cli, args, false))?;
        let disk = self.world.disk.clone()?;
        let cwd = self.known_cwd(walk);
        let relative = program.contains('/') && !program.starts_with('/');
        let cwd = match cwd {
            Some(cwd) => cwd,
            None if relative => return None,
            None => std::path::PathBuf::from("/"),
        };
        // `PATH=/tmp/x:$PATH mg audit prune`: each search path the command may run it with
        // (its own, or any the script assigns), else the session's.
        let searches: Vec<String> = walk.env_values(command, "PATH").cloned().collect();
        let found = match searches.is_empty() {
            true => disk.is_guard_binary(program, &cwd, None),
            false => searches
                .iter()
                .any(|search| disk.is_guard_binary(program, &cwd, Some(search))),
        };
        found.then_some(Why::GuardSubcommand(subcommand))
    }

    /// A program word that cannot be known may be the guard's binary (`"$G" audit prune`):
    /// its arguments are read as the guard's would be.
    pub(in crate::decide) fn unknown_guard_subcommand(&self, command: &Command) -> Option<Refusal> {
        let args = command.words.get(1..)?;
        let subcommand = self
            .rules
            .guard_clis()
            .into_iter()
            .find_map(|cli| refused_subcommand(cli, args, false))?;
        Some(Refusal {
            target: "mesh-guard".into(),
            ..Refusal::plain(
                Rule::SelfProtection,
                &self.shown(command),
                Why::GuardSubcommand(subcommand),
            )
        })
    }
}

/// The refused subcommand `args` name, as written in the rules: its first word is the
/// first operand, its other words follow in order. Where the program is the guard's, an
/// operand that cannot be known may be any subcommand (`unknown_counts`); where the program
/// itself is unknown, only words that spell a refused subcommand count (`"$EDITOR" "$F"`
/// is no guard command).
fn refused_subcommand(cli: &GuardCli, args: &[String], unknown_counts: bool) -> Option<String> {
    let mut words = args.iter();
    let mut operands = std::iter::from_fn(|| {
        while let Some(word) = words.next() {
            if word.starts_with('-') && !word.contains(UNKNOWN) {
                if cli.value_options.contains(word) {
                    words.next();
                }
                continue;
            }
            return Some(word.as_str());
        }
        None
    });
    let first = operands.next()?;
    // Most commands' first operand starts no refused shape: known without reading further.
    let starts_one = |shape: &String| shape.split_whitespace().next() == Some(first);
    if is_known(first) && !cli.refused.iter().any(starts_one) {
        return None;
    }
    let operands: Vec<&str> = std::iter::once(first).chain(operands).collect();
    if !is_known(first) {
        return unknown_counts
            .then(|| cli.refused.first().cloned())
            .flatten();
    }
    cli.refused
        .iter()
        .find(|shape| {
            let mut shape = shape.split_whitespace();
            shape.next() == Some(first) && {
                let mut rest = operands[1..].iter();
                shape.all(|w| rest.any(|o| o == &w || (unknown_counts && !is_known(o))))
            }
        })
        .cloned()
}
