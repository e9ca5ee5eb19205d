//! A program that runs named recipes from a file in the project (`npm run deploy`, `just
//! deploy`, `task deploy`, `cargo make deploy`, `pdm run deploy`, `tox -e deploy`, `nox -s
//! deploy`): which recipes its words name (`npm --prefix site run deploy -- --prod`, `just -f
//! j deploy web`, `tox -e a,b`, read by the runner's rules in `rules/runners.toml`: the file
//! and directory options, the recipe names, the words after), what the file says they
//! run (asked through [`crate::world::Disk::recipes`]), and each recipe's commands
//! walked as the shell code they are, with the recipes they call, to a bound. A recipe
//! that cannot be read is unknown code; a file that is not there runs nothing.

use crate::decide::*;
use crate::ondisk::recipes::{Found, Lookup, Recipes, Step};
use crate::rules::runner::Runner;
use crate::shell::quote::requoted;
use std::collections::HashSet;

/// Recipes run for one command, at most; past it the command cannot be verified.
const MAX_RECIPES: usize = 256;

impl Guard<'_> {
    /// The recipes a task runner runs, walked as shell code (see the module's note).
    pub(in crate::decide) fn recipes(&self, command: &Command, walk: &mut Walk) {
        if self.world.disk.is_none() {
            return;
        }
        let Some(first) = command.words.first() else {
            return;
        };
        let args = &command.words[1..];
        let Some(runner) = self.rules.runner(base_name(first), args) else {
            return;
        };
        let words = split_groups(runner, args);
        for call in invocations(runner, &words) {
            self.recipes_of(command, runner, &call, walk);
        }
    }

    /// The recipes one reading of a runner's words runs, walked.
    fn recipes_of(&self, command: &Command, runner: &Runner, call: &Invocation, walk: &mut Walk) {
        let Some(disk) = self.world.disk.clone() else {
            return;
        };
        let typed = command.words.join(" ");
        let unknown = |walk: &mut Walk, what: String| {
            if walk.speculative == 0 {
                walk.unknown_code.push((command.words.clone(), what));
            }
        };
        let Some(cwd) = self.known_cwd(walk) else {
            return unknown(walk, format!("what `{typed}` runs"));
        };
        let known = |w: &Option<&str>| w.is_none_or(is_known);
        if call.unknown || !known(&call.file) || !known(&call.dir) {
            return unknown(walk, format!("what `{typed}` runs"));
        }
        let cwd = cwd.to_string_lossy();
        let lookup = Lookup {
            format: runner.format,
            files: &runner.files,
            upward: runner.upward,
            cwd: &cwd,
            file: call.file,
            dir: call.dir,
        };
        // `pdm run ssh db`, `poetry run python3 …`: a name that is no script is a command.
        let as_command = |walk: &mut Walk| {
            if runner.runs_commands && call.after_run {
                let words: Vec<String> = call.operands.iter().map(|w| w.to_string()).collect();
                let words: Vec<String> = words
                    .iter()
                    .chain(&call.extra)
                    .map(|w| requoted(w))
                    .collect();
                self.payload(&words.join(" "), command.depth + 1, &[], walk);
            }
        };
        let recipes = match disk.recipes(&lookup) {
            Found::Recipes(recipes) => recipes,
            Found::Absent => return as_command(walk),
            Found::Unreadable(file) => {
                as_command(walk);
                return unknown(walk, format!("what `{typed}` runs from {file}"));
            }
        };
        if call
            .operands
            .first()
            .is_some_and(|name| recipes.get(name).is_none())
        {
            as_command(walk);
        }
        let outer = (walk.cwd.clone(), walk.cwd_unknown);
        walk.cwd = Some(PathBuf::from(&recipes.dir));
        walk.cwd_unknown = false;
        for code in &recipes.parse_time {
            walk.reading
                .push((typed.clone(), format!("reading {}", recipes.shown)));
            self.payload(code, command.depth + 1, &[], walk);
            walk.reading.pop();
        }
        let wanted = self.wanted(runner, call, &recipes);
        self.run_recipes(runner, &recipes, wanted, &call.extra, command, walk);
        (walk.cwd, walk.cwd_unknown) = outer;
    }

    /// The recipes the words name, with their arguments, in order.
    fn wanted(
        &self,
        runner: &Runner,
        call: &Invocation,
        recipes: &Recipes,
    ) -> Vec<(String, Vec<String>, bool)> {
        if let Some(lifecycle) = call.lifecycle {
            return lifecycle
                .iter()
                .map(|n| (n.clone(), vec![], false))
                .collect();
        }
        let mut out: Vec<(String, Vec<String>, bool)> = Vec::new();
        if call.default {
            out.extend(recipes.default.iter().map(|n| (n.clone(), vec![], true)));
        }
        out.extend(call.named.iter().map(|n| (n.clone(), vec![], true)));
        // `make V=1 deploy`, `just host=db logs`: assignments, not recipes.
        let mut operands = call.operands.iter().filter(|o| !o.contains('='));
        while let Some(name) = operands.next() {
            let params = recipes.get(name).map_or(0, |r| r.params.len());
            let variadic = recipes.get(name).is_some_and(|r| r.variadic);
            let args: Vec<String> = if runner.many && !variadic {
                operands
                    .by_ref()
                    .take(params)
                    .map(|a| a.to_string())
                    .collect()
            } else {
                operands.by_ref().map(|a| a.to_string()).collect()
            };
            out.push((name.to_string(), args, true));
            if !runner.many {
                break;
            }
        }
        out
    }

    fn run_recipes(
        &self,
        runner: &Runner,
        recipes: &Recipes,
        wanted: Vec<(String, Vec<String>, bool)>,
        extra: &[String],
        command: &Command,
        walk: &mut Walk,
    ) {
        let typed = command.words.join(" ");
        let mut queue: std::collections::VecDeque<(String, Vec<String>, bool)> = wanted.into();
        let mut seen: HashSet<(String, Vec<String>)> = HashSet::new();
        let mut runs = 0;
        while let Some((name, args, top)) = queue.pop_front() {
            // A recipe runs once per invocation (just's and task's dependencies); a cycle
            // of calls ends here.
            if !seen.insert((name.clone(), args.clone())) {
                continue;
            }
            runs += 1;
            if runs > MAX_RECIPES {
                walk.incomplete.get_or_insert(format!(
                    "its recipes in {} run more than {MAX_RECIPES} recipes",
                    recipes.shown
                ));
                return;
            }
            // `predeploy` and `postdeploy` run around `deploy`; when does not change what
            // is judged.
            if top {
                for hook in &runner.hooks {
                    queue.push_back((format!("{hook}{name}"), vec![], false));
                }
            }
            let steps = match (recipes.get(&name), &recipes.fallback) {
                (Some(recipe), _) => {
                    let mut bound: Vec<(String, String)> = recipe
                        .params
                        .iter()
                        .cloned()
                        .zip(args.iter().cloned())
                        .collect();
                    bound.extend(recipes.variables.iter().cloned());
                    recipe
                        .steps
                        .iter()
                        .map(|s| (s.clone(), bound.clone()))
                        .collect()
                }
                (None, Some(fallback)) => fallback.iter().map(|s| (s.clone(), vec![])).collect(),
                (None, None) if recipes.partial => {
                    walk.unknown_code.push((
                        command.words.clone(),
                        format!("what `{name}` in {} runs", recipes.shown),
                    ));
                    continue;
                }
                (None, None) => Vec::new(),
            };
            let what = format!("`{name}` in {}", recipes.shown);
            for (step, bound) in steps {
                match step {
                    Step::Shell(code) => {
                        let mut code = if recipes.templated {
                            fill(&code, &bound)
                        } else {
                            code
                        };
                        if top && runner.arguments {
                            for word in args.iter().chain(extra) {
                                code.push(' ');
                                code.push_str(&requoted(word));
                            }
                        }
                        walk.reading.push((typed.clone(), what.clone()));
                        // Positional words after `--` are `$@` where the file says so.
                        let env: Vec<(String, String)> = vec![("@".to_string(), extra.join(" "))];
                        self.payload(&code, command.depth + 1, &env, walk);
                        walk.reading.pop();
                    }
                    Step::Recipe(other, other_args) => {
                        let other_args = other_args.iter().map(|a| fill(a, &bound)).collect();
                        queue.push_back((other, other_args, false));
                    }
                    Step::Python(paths) => {
                        self.python_file(&paths, &recipes.dir, command, &what, walk)
                    }
                    Step::Unknown => {
                        if walk.speculative == 0 {
                            walk.unknown_code
                                .push((command.words.clone(), format!("what {what} runs")));
                        }
                    }
                }
            }
        }
    }
}

impl Guard<'_> {
    /// An entry point's module, read as the Python code it is (its calls that run commands
    /// judged, as `python3 FILE` is); not found or not readable, unknown code.
    fn python_file(
        &self,
        paths: &[String],
        dir: &str,
        command: &Command,
        what: &str,
        walk: &mut Walk,
    ) {
        let (Some(disk), Some(python)) =
            (self.world.disk.clone(), self.rules.interpreter("python3"))
        else {
            return;
        };
        let dir = std::path::Path::new(dir);
        let Some((path, code)) = paths
            .iter()
            .find_map(|p| disk.script(p, dir).map(|code| (p, code)))
        else {
            if walk.speculative == 0 {
                walk.unknown_code
                    .push((command.words.clone(), format!("what {what} runs")));
            }
            return;
        };
        let mut steps = Vec::new();
        let runner = Command {
            words: vec!["python3".into(), path.clone()],
            ..command.clone()
        };
        crate::unwrap::code_steps(python, &runner, &code, &mut steps);
        walk.reading
            .push((command.words.join(" "), what.to_string()));
        for step in steps {
            if let crate::unwrap::Step::Shell { source, depth, env } = step {
                self.payload(&source, depth, &env, walk);
            }
        }
        walk.reading.pop();
    }
}

/// `{{name}}` filled with a parameter's argument; any other interpolation (`{{.VAR}}`,
/// a function call, a variable not known) is unknown; `{{{{` is a literal `{{`.
fn fill(text: &str, bound: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        if let Some(literal) = after.strip_prefix("{{") {
            out.push_str("{{");
            rest = literal;
            continue;
        }
        let Some(close) = after.find("}}") else {
            out.push(UNKNOWN);
            return out;
        };
        let expression = after[..close].trim();
        match bound.iter().find(|(name, _)| name == expression) {
            Some((_, value)) => out.push_str(value),
            None => out.push(UNKNOWN),
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    out
}

// What a runner's words ask for.
/// What a runner's words ask for.
#[derive(Debug, Default, PartialEq)]
struct Invocation<'a> {
    file: Option<&'a str>,
    dir: Option<&'a str>,
    /// Recipe names as given (each may take the operands after it as arguments).
    operands: Vec<&'a str>,
    /// Recipes named by option (`tox -e a,b`).
    named: Vec<String>,
    /// Recipes the subcommand runs itself (`npm install`).
    lifecycle: Option<&'a [String]>,
    /// No recipe named: the file's default runs.
    default: bool,
    /// Words after `--`.
    extra: Vec<String>,
    /// An option makes the file or the recipes unknown (`--workspace`).
    unknown: bool,
    /// The recipe was named after the runner's `run` (`pdm run X`), where X may be a command.
    after_run: bool,
}

/// Each way the runner may read `args`: an option its rules do not know may be a flag or take
/// the next word (`npm --color false run deploy`), so both readings are walked (decision
/// 0053's rule for unknown options); one reading when every option is known.
fn invocations<'a>(runner: &'a Runner, args: &'a [String]) -> Vec<Invocation<'a>> {
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
fn split_groups(runner: &Runner, args: &[String]) -> Vec<String> {
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
mod word_tests {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolations_are_filled_or_unknown() {
        let bound = vec![("host".to_string(), "cache".to_string())];
        assert_eq!(fill("ssh {{host}} x", &bound), "ssh cache x");
        assert_eq!(fill("ssh {{ host }}", &bound), "ssh cache");
        assert_eq!(fill("ssh {{.HOST}}", &bound), format!("ssh {UNKNOWN}"));
        assert_eq!(fill("echo {{{{x", &bound), "echo {{x");
        assert_eq!(fill("ssh {{host", &bound), format!("ssh {UNKNOWN}"));
    }
}
