//! The hook's own command lines, read without clap (decision 0030).
//!
//! Every command an agent runs starts `mesh-guard hook`, and clap builds the whole command
//! tree (every subcommand, every option, its help) before it reads one word: about a tenth
//! of a pass. The forms that the plugin and `install` write, and the options `hook`
//! accepts, are read here instead. Anything else (help, an unknown or repeated option, an
//! empty path, a value that looks like an option) is `None` and goes to clap, so its
//! answers and errors stay clap's. No variable is read: a hook's paths are its command
//! line's (decision 0059).

use super::{Args, Command};
use crate::hook::AgentChoice;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The global options that name the guard's files.
const PATHS: [&str; 3] = ["--catalog", "--db", "--rules"];

/// `args` (with the program's name) as clap would read them, when they are one of the
/// hook's plain forms: the paths before `hook` (as `install` writes a hardened hook's command
/// line: `BIN --catalog C --rules R hook`) or after it, `--agent` and `--mcp` after it.
pub(super) fn parse(args: &[OsString]) -> Option<Args> {
    let mut words = args.iter().skip(1);
    let mut paths: [Option<PathBuf>; 3] = Default::default();
    loop {
        let word = words.next()?;
        if word == "hook" {
            break;
        }
        let (name, value) = option(word, &mut words)?;
        path(&mut paths, name, value)?;
    }
    let mut agent = None;
    let mut mcp = false;
    while let Some(word) = words.next() {
        if word == "--mcp" && !mcp {
            mcp = true;
            continue;
        }
        let (name, value) = option(word, &mut words)?;
        if name == "--agent" && agent.is_none() {
            agent = Some(agent_choice(value.to_str()?)?);
            continue;
        }
        path(&mut paths, name, value)?;
    }
    let [catalog, db, rules] = paths;
    Some(Args {
        catalog,
        db,
        rules,
        command: Command::Hook {
            agent: agent.unwrap_or(AgentChoice::Auto),
            mcp,
        },
    })
}

/// An option and its value, inline (`--db=PATH`) or the next word; `None` for what clap
/// may read otherwise: an empty value, or one that starts with `-` (an option, to clap).
fn option<'a>(
    word: &'a OsString,
    words: &mut impl Iterator<Item = &'a OsString>,
) -> Option<(&'a str, &'a OsStr)> {
    let word = word.to_str()?;
    let (name, value) = match word.split_once('=') {
        Some((name, value)) => (name, OsStr::new(value)),
        None => (word, words.next()?.as_os_str()),
    };
    if value.is_empty() || value.as_encoded_bytes().starts_with(b"-") {
        return None;
    }
    Some((name, value))
}

/// One of the paths, given once; `None` for another option or a repeated one (clap's).
fn path(paths: &mut [Option<PathBuf>; 3], name: &str, value: &OsStr) -> Option<()> {
    let slot = PATHS.iter().position(|option| *option == name)?;
    if paths[slot].is_some() {
        return None;
    }
    paths[slot] = Some(PathBuf::from(value));
    Some(())
}

/// The `--agent` values, spelled exactly as clap's (case-sensitive) value names.
fn agent_choice(value: &str) -> Option<AgentChoice> {
    Some(match value {
        "auto" => AgentChoice::Auto,
        "claude" => AgentChoice::Claude,
        "codex" => AgentChoice::Codex,
        "gemini" => AgentChoice::Gemini,
        "copilot" => AgentChoice::Copilot,
        "cursor" => AgentChoice::Cursor,
        _ => return None,
    })
}

/// `args` read as a hook's command line, without the paths' variables; `None` when they are
/// not one. A hook's help lists no variable for the options it takes only from its command
/// line (decision 0059).
pub(super) fn read_as_hook(
    cmd: &clap::Command,
    args: &[std::ffi::OsString],
) -> Option<Result<super::Args, clap::Error>> {
    use clap::FromArgMatches;
    match without_env(cmd.clone()).try_get_matches_from(args) {
        Ok(matches) => super::Args::from_arg_matches(&matches)
            .ok()
            .filter(|a| a.command.is_hook())
            .map(Ok),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp && names_hook(args) => {
            Some(Err(e))
        }
        Err(_) => None,
    }
}

/// Whether `args` (with the program's name) name a hook's subcommand, directly or after
/// `help`: its first word that is no option or a global option's value.
pub(super) fn names_hook(args: &[std::ffi::OsString]) -> bool {
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    let mut positional = Vec::new();
    while let Some(word) = words.next() {
        if matches!(word.as_ref(), "--catalog" | "--db" | "--rules") {
            words.next();
        } else if !word.starts_with('-') {
            positional.push(word.into_owned());
            if positional.len() == 2 || positional[0] != "help" {
                break;
            }
        }
    }
    let sub = match positional.first().map(String::as_str) {
        Some("help") => positional.get(1).map(String::as_str),
        other => other,
    };
    matches!(sub, Some("hook" | "session-start"))
}

/// The command line without the paths' variables: how a hook's is read.
pub(super) fn without_env(command: clap::Command) -> clap::Command {
    let no_env = |arg: clap::Arg| arg.env(None);
    command
        .mut_arg("catalog", no_env)
        .mut_arg("db", no_env)
        .mut_arg("rules", no_env)
}

impl Command {
    /// Whether this is one of the hooks an agent runs, whose paths come from their command
    /// line and fixed places only: no environment variable steers them (decision 0059).
    pub fn is_hook(&self) -> bool {
        matches!(self, Command::Hook { .. } | Command::SessionStart { .. })
    }
}
