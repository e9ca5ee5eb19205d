//! Which recipes a task runner's words ask for (`npm --prefix site run deploy -- --prod`,
//! `just -f j deploy web`, `tox -e a,b`), read by the runner's rules in
//! `rules/runners.toml`: the file and directory options, the recipe names, the words after.

use crate::rules::runner::Runner;

/// What a runner's words ask for.
#[derive(Debug, Default, PartialEq)]
pub(in crate::decide) struct Invocation<'a> {
    pub(in crate::decide) file: Option<&'a str>,
    pub(in crate::decide) dir: Option<&'a str>,
    /// Recipe names as given (each may take the operands after it as arguments).
    pub(in crate::decide) operands: Vec<&'a str>,
    /// Recipes named by option (`tox -e a,b`).
    pub(in crate::decide) named: Vec<String>,
    /// Recipes the subcommand runs itself (`npm install`).
    pub(in crate::decide) lifecycle: Option<&'a [String]>,
    /// No recipe named: the file's default runs.
    pub(in crate::decide) default: bool,
    /// Words after `--`.
    pub(in crate::decide) extra: Vec<String>,
    /// An option makes the file or the recipes unknown (`--workspace`).
    pub(in crate::decide) unknown: bool,
    /// The recipe was named after the runner's `run` (`pdm run X`), where X may be a command.
    pub(in crate::decide) after_run: bool,
}

/// Each way the runner may read `args`: an option its rules do not know may be a flag or take
/// the next word (`npm --color false run deploy`), so both readings are walked (decision
/// 0053's rule for unknown options); one reading when every option is known.
pub(in crate::decide) fn invocations<'a>(
    runner: &'a Runner,
    args: &'a [String],
) -> Vec<Invocation<'a>> {
    let as_flag = invocation(runner, args, false);
    let with_value = invocation(runner, args, true);
    let mut readings: Vec<Invocation<'a>> = as_flag.into_iter().collect();
    if let Some(other) = with_value.filter(|w| !readings.contains(w)) {
        readings.push(other);
    }
    readings
}

/// `args` as the runner's option parser splits its short options (getopt, argparse, clap,
/// pflag alike): a group of them in one word (`-qe deploy`) and a value attached to the last
/// (`-edeploy`, `-fjustfile`), read by the option engine over the runner's own lists. A word
/// a list names whole (`-ws`, `-db`) stays one option; a word with no letter the runner knows
/// stays as written, one unknown option.
pub(in crate::decide) fn split_groups(runner: &Runner, args: &[String]) -> Vec<String> {
    let lists = [
        &runner.unknown_options,
        &runner.file_options,
        &runner.directory_options,
        &runner.recipe_options,
        &runner.value_options,
        &runner.inert,
    ];
    let listed = |word: &str| lists.iter().any(|list| list.iter().any(|o| o == word));
    let letter = |word: &String| {
        let mut chars = word.strip_prefix('-')?.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c != '-' => Some(c),
            _ => None,
        }
    };
    let valued: String = lists[..5]
        .iter()
        .flat_map(|list| list.iter())
        .filter(|o| !runner.inert.contains(o))
        .filter_map(letter)
        .collect();
    let known: String = lists
        .iter()
        .flat_map(|l| l.iter())
        .filter_map(letter)
        .collect();
    let syntax = crate::rules::Syntax {
        short_value: valued,
        ..Default::default()
    };
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            out.push(word.clone());
            out.extend(words.by_ref().cloned());
            break;
        }
        let group = word.len() > 2 && word.starts_with('-') && !word.starts_with("--");
        if !group || listed(word) || !word[1..].chars().any(|c| known.contains(c)) {
            out.push(word.clone());
            continue;
        }
        for arg in crate::argv::scan(&syntax, std::slice::from_ref(word)) {
            match arg {
                crate::argv::Arg::Option { name, value } => {
                    out.push(name);
                    out.extend(value);
                }
                crate::argv::Arg::Operand(operand) => out.push(operand),
            }
        }
    }
    out
}

/// `args` read with every option the runner's rules do not know taken as a flag, or, with
/// `unknown_takes_value`, as taking the next word.
fn invocation<'a>(
    runner: &'a Runner,
    args: &'a [String],
    unknown_takes_value: bool,
) -> Option<Invocation<'a>> {
    let mut call = Invocation::default();
    let mut operands: Vec<&str> = Vec::new();
    let mut words = args.iter().enumerate();
    let takes = |list: &[String], word: &str| list.iter().any(|o| o == word);
    while let Some((at, word)) = words.next() {
        if word == "--" {
            call.extra = args[at + 1..].to_vec();
            break;
        }
        // `just deploy -n`: past the recipe the words are the recipe's.
        let sub = runner.subcommand.is_some() as usize;
        if runner.trailing && operands.len() > sub {
            operands.push(word);
            continue;
        }
        // `cargo +nightly make`: rustup's toolchain, before the subcommand.
        if runner.subcommand.is_some() && operands.is_empty() && word.starts_with('+') {
            continue;
        }
        // `just --list`, `task --dry`, `tox list`: nothing runs.
        let subcommand = !word.starts_with('-') && operands.is_empty();
        if (word.starts_with('-') || subcommand) && takes(&runner.inert, word) {
            return None;
        }
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        let runners_own = [
            &runner.unknown_options,
            &runner.file_options,
            &runner.directory_options,
            &runner.recipe_options,
            &runner.value_options,
        ]
        .iter()
        .any(|list| takes(list, name));
        // Other options before the recipe are the runner's flags; after it, where the
        // runner hands its words on, they are the recipe's.
        let flag =
            name.len() > 1 && name.starts_with('-') && (operands.is_empty() || !runner.arguments);
        if runners_own || flag {
            let mut value = || inline.or_else(|| words.next().map(|(_, v)| v.as_str()));
            if takes(&runner.unknown_options, name) {
                call.unknown = true;
                if takes(&runner.value_options, name) {
                    value();
                }
            } else if takes(&runner.file_options, name) {
                call.file = value();
            } else if takes(&runner.directory_options, name) {
                call.dir = value();
            } else if takes(&runner.recipe_options, name) {
                let names = value().unwrap_or_default();
                call.named.extend(names.split(',').map(str::to_string));
            } else if takes(&runner.value_options, name) || !runners_own && unknown_takes_value {
                value();
            }
            continue;
        }
        operands.push(word);
    }
    if let Some(sub) = &runner.subcommand {
        if operands.first() != Some(&sub.as_str()) {
            return None;
        }
        operands.remove(0);
    }
    // `just svc/deploy`: the file found from `svc`, its `deploy`; `just svc/`, its default.
    if runner.dir_recipe
        && call.dir.is_none()
        && call.file.is_none()
        && let Some((dir, name)) = operands
            .first()
            .copied()
            .and_then(|first| first.rsplit_once('/'))
    {
        call.dir = Some(if dir.is_empty() { "/" } else { dir });
        if name.is_empty() {
            operands.remove(0);
        } else {
            operands[0] = name;
        }
    }
    // `tox`, `tox run`, `nox`: with no environment named by option, the default ones run.
    if !runner.recipe_options.is_empty() {
        call.default = call.named.is_empty();
        return Some(call);
    }
    match operands.first().copied() {
        None if runner.bare => call.default = true,
        None => return None,
        Some(first) if takes(&runner.run, first) => {
            if operands.len() < 2 {
                return None;
            }
            call.operands = operands[1..].to_vec();
            call.after_run = true;
        }
        Some(first) if runner.lifecycle.iter().any(|l| l[0] == first) => {
            call.lifecycle = runner
                .lifecycle
                .iter()
                .find(|l| l[0] == first)
                .map(|l| &l[1..]);
        }
        Some(first)
            if takes(&runner.own, first) || runner.bare && !takes(&runner.builtins, first) =>
        {
            call.operands = operands
        }
        Some(_) => return None,
    }
    Some(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn groups_and_attached_values_split_as_the_runners_parser_does() {
        let tox = Runner {
            recipe_options: s(&["-e"]),
            value_options: s(&["-p", "--parallel"]),
            inert: s(&["-l", "-h"]),
            ..Runner::default()
        };
        assert_eq!(split_groups(&tox, &s(&["-edeploy"])), s(&["-e", "deploy"]));
        assert_eq!(
            split_groups(&tox, &s(&["-qe", "deploy"])),
            s(&["-q", "-e", "deploy"])
        );
        // `-pe` is `-p` taking `e`: the value ends the group.
        assert_eq!(split_groups(&tox, &s(&["-pe", "x"])), s(&["-p", "e", "x"]));
        // A word the lists name whole, or with no letter they know, stays as written.
        let npm = Runner {
            unknown_options: s(&["-ws"]),
            ..Runner::default()
        };
        assert_eq!(split_groups(&npm, &s(&["-ws", "-zq"])), s(&["-ws", "-zq"]));
        // After `--`, nothing is split.
        assert_eq!(
            split_groups(&tox, &s(&["--", "-edeploy"])),
            s(&["--", "-edeploy"])
        );
    }
}
