//! Programs that run their arguments, named in no rule: any program's argument words are
//! read for a guarded program followed by its target (`pkexec ssh atlas`, `perf stat --
//! ssh atlas`) and for words that parse as shell code (`hyperfine 'ssh atlas uptime'`).
//! What is found is walked as *speculative*: it is refused only where it reaches the mesh,
//! never for what it leaves unknown, so a word that was only data costs nothing.

use crate::argv::base_name;
use crate::decide::*;
use crate::rules::Program;
use crate::shell::Stdin;

/// Suffixes and shell-code words walked in one decision, and the words they hold, at
/// most: past either the command cannot be checked (a command of thousands of program
/// words is not an agent's) and is refused as unverifiable, never passed unread.
const MAX_SUFFIXES: usize = 64;
const MAX_SUFFIX_WORDS: usize = 8192;

impl Guard<'_> {
    /// The argument words of a command that runs (wrappers off), read for what they could run.
    pub(in crate::decide) fn arguments_run(&self, command: &Command, walk: &mut Walk) {
        // A suffix already found is not searched again: every position of the outer
        // command is tried, so this finds nothing new and would grow with the words' square.
        if command.depth > MAX_PAYLOAD_DEPTH || walk.in_suffix {
            return;
        }
        let Some(first) = command.words.first() else {
            return;
        };
        let program = base_name(first);
        // Shells, interpreters and wrappers are read by their own rules (`find -exec grep
        // 'ssh x' {} +` runs grep, whose pattern is data); a guarded program that runs a
        // command of its operands (`ssh host CMD`, `docker exec c CMD`) already walks it.
        if self.rules.shell(program).is_some()
            || self.rules.interpreter(program).is_some()
            || self.rules.wrapper(program).is_some()
            || self.rules.program(program).is_some_and(runs_a_command)
        {
            return;
        }
        let rules = self.rules.arguments(program);
        if let Some(rules) = rules
            && rules.stdin_code
            && let Stdin::Text(text) = &command.stdin
        {
            self.speculative_payload(text, command.depth + 1, walk);
        }
        if rules.is_some_and(|r| r.data) {
            return;
        }
        let data_options: &[String] = rules.map_or(&[], |r| r.data_options.as_slice());
        let args = &command.words[1..];
        let words = match rules.and_then(|r| data_subcommand(r, args)) {
            // `git grep -n 'ssh api'`: the pattern and paths are data, options still read.
            Some(at) => code_words(&args[at + 1..], data_options)
                .into_iter()
                .filter(|w| w.starts_with('-'))
                .collect(),
            None => code_words(args, data_options),
        };
        // As typed: `./mesh` is a file of the working directory, not the mesh's CLI.
        walk.runners.push(first.clone());
        self.read_words(command, &words, walk);
        walk.runners.pop();
    }

    /// Each argument word that is a program the rules know, or shell code, walked as what
    /// it would run.
    fn read_words(&self, command: &Command, words: &[&str], walk: &mut Walk) {
        for (at, word) in words.iter().enumerate() {
            let code = if self.is_program_word(word) {
                None
            } else {
                match self.shell_code(word) {
                    Some(code) => Some(code),
                    None => continue,
                }
            };
            walk.suffixes += 1;
            walk.suffix_words += code.map_or(words.len() - at, |c| c.len() / 2 + 1);
            if walk.suffixes > MAX_SUFFIXES || walk.suffix_words > MAX_SUFFIX_WORDS {
                walk.incomplete.get_or_insert_with(|| {
                    "its arguments hold more programs than can be checked".to_string()
                });
                return;
            }
            if code.is_none() {
                let nested = Command {
                    words: words[at..].iter().map(|w| w.to_string()).collect(),
                    depth: command.depth + 1,
                    ..command.clone()
                };
                walk.speculative += 1;
                walk.in_suffix = true;
                self.command(nested, walk);
                walk.in_suffix = false;
                walk.speculative -= 1;
            } else if let Some(source) = code {
                self.speculative_payload(source, command.depth + 1, walk);
            }
        }
    }

    fn speculative_payload(&self, source: &str, depth: usize, walk: &mut Walk) {
        walk.speculative += 1;
        self.payload(source, depth, &[], walk);
        walk.speculative -= 1;
    }

    /// A word naming a program the guard knows, as a program is typed (`ssh`, `/usr/bin/ssh`).
    fn is_program_word(&self, word: &str) -> bool {
        let name = base_name(word);
        (word == name || word.starts_with('/'))
            && (self.rules.program(name).is_some()
                || self.rules.wrapper(name).is_some()
                || self.rules.shell(name).is_some())
    }

    /// A word that may be shell code running a program the guard knows: `'ssh atlas make'`,
    /// `--exec='ssh atlas'`, vim's `:!ssh atlas` and git aliases' `!ssh atlas`.
    fn shell_code<'w>(&self, word: &'w str) -> Option<&'w str> {
        // `--exec=CODE`, `alias.x=!CODE`: the value after the first `=` of a first word.
        let code = match word.split_once('=') {
            Some((name, value)) if !name.contains(char::is_whitespace) => value,
            _ => word,
        };
        let code = code.trim_start_matches([':', '!']);
        code.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
            .any(|w| !w.is_empty() && w != code && self.is_program_word(w))
            .then_some(code)
    }
}

/// Where the program's subcommand is, when it is one whose operands are data.
fn data_subcommand(rules: &crate::rules::Arguments, args: &[String]) -> Option<usize> {
    if rules.data_subcommands.is_empty() {
        return None;
    }
    let stop = crate::rules::Syntax {
        stop_at_operand: true,
        ..rules.syntax.clone()
    };
    let scanned = crate::argv::scan(&stop, args);
    let first = crate::argv::operands(&scanned).next()?;
    if !rules.data_subcommands.iter().any(|s| s == first) {
        return None;
    }
    // Its place: the words before it are options and their values.
    let options: usize = scanned
        .iter()
        .take_while(|a| matches!(a, crate::argv::Arg::Option { .. }))
        .count();
    args.iter()
        .skip(options)
        .position(|a| a == first)
        .map(|p| p + options)
}

/// A group of short options holding a data option (`-am MSG`, `-qamMSG`): whether the
/// next word is its value (`Some(true)`) or the value is attached (`Some(false)`).
fn data_in_group(arg: &str, data_options: &[String]) -> Option<bool> {
    let group = arg.strip_prefix('-').filter(|g| !g.starts_with('-'))?;
    for (i, c) in group.char_indices() {
        if !c.is_ascii_alphanumeric() {
            return None;
        }
        if data_options.iter().any(|o| o.len() == 2 && o.ends_with(c)) {
            return Some(i + 1 == group.len());
        }
    }
    None
}

/// The words of an argument vector that may run, with data options' values left out.
fn code_words<'a>(args: &'a [String], data_options: &[String]) -> Vec<&'a str> {
    let mut words = Vec::new();
    let mut skip_next = false;
    for arg in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if data_options.iter().any(|o| o == arg) {
            skip_next = true;
            continue;
        }
        if let Some(next_is_value) = data_in_group(arg, data_options) {
            skip_next = next_is_value;
            continue;
        }
        let glued = data_options.iter().any(|o| {
            arg.strip_prefix(o.as_str())
                .is_some_and(|r| r.starts_with('=') || (!o.starts_with("--") && !r.is_empty()))
        });
        if !glued {
            words.push(arg.as_str());
        }
    }
    words
}

/// Whether a guarded program (or one of its subcommands) runs a command of its operands.
fn runs_a_command(spec: &Program) -> bool {
    spec.operands
        .iter()
        .any(|o| matches!(o.role, Role::Command | Role::RemoteCommand))
        || spec.subcommand.iter().any(runs_a_command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_data_option_in_a_group_takes_its_value_with_it() {
        let data = words(&["-m", "--message"]);
        let args = words(&[
            "commit",
            "-qam",
            "ssh web",
            "-mssh db",
            "--message=ssh x",
            "ssh y",
        ]);
        assert_eq!(code_words(&args, &data), ["commit", "ssh y"]);
        // A group without the data option is not data: `-xa ssh` keeps `ssh`.
        assert_eq!(code_words(&words(&["-xa", "ssh"]), &data), ["-xa", "ssh"]);
    }
}
