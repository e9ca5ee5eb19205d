//! Where `ssh DEST` goes, resolved from ssh's configuration as `ssh -G DEST` would resolve it,
//! without running ssh: `ssh -G` runs `Match exec` commands, which the hook must never do.
//! A block that `Match exec` (or any criterion that cannot be decided here) may enable makes
//! every key it sets unknown; first-obtained-value-wins does the rest.
//!
//! Sources, in order: `-o` options, then `-F FILE` alone, or else `~/.ssh/config` and
//! `/etc/ssh/ssh_config`. ssh takes `~` from the passwd entry, not `$HOME`: the caller
//! passes the home it trusts in [`Context::home`].

use super::Value;
use super::read::Files;
pub use dest::{Destination, parse_destination};
use dest::{percent, plain};
use lex::Line;
use std::collections::HashMap;

/// ssh's own bound on nested `Include`, which also ends an `Include` cycle.
pub const MAX_INCLUDE_DEPTH: usize = 16;
/// Jump hosts resolved within jump hosts before the rest is unknown.
pub const MAX_JUMP_DEPTH: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `-o Key=value` lines from the command line.
    Options(Vec<String>),
    /// A user configuration (`~/.ssh/config`, `-F FILE`): relative `Include`s are in `~/.ssh`.
    User(String),
    /// The system configuration: relative `Include`s are in `/etc/ssh`.
    System(String),
}

/// The standard sources: `-o` lines, then `-F` alone if given, else the user's and the system's.
pub fn sources(home: &str, options: Vec<String>, config_file: Option<String>) -> Vec<Source> {
    let mut sources = vec![Source::Options(options)];
    match config_file {
        Some(file) => sources.push(Source::User(file)),
        None => {
            sources.push(Source::User(format!("{home}/.ssh/config")));
            sources.push(Source::System("/etc/ssh/ssh_config".into()));
        }
    }
    sources
}

#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The passwd entry's home directory of the user ssh runs as.
    pub home: &'a str,
    /// The local user's name, when known (`Match localuser`, the default `User`).
    pub local_user: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proxy {
    None,
    /// Every hop in order, each resolved through the configuration in turn.
    Jumps(Vec<Resolved>),
    /// The command text, `%h`/`%p`/`%r`/`%n` substituted; a token that cannot be known is
    /// [`crate::shell::UNKNOWN`], so the caller can judge it as shell code.
    Command(String),
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub hostname: Value,
    pub user: Value,
    /// The user the configuration (or the destination's `user@`) names, not the local
    /// user ssh falls back to.
    pub configured_user: Option<String>,
    pub port: Value,
    pub proxy: Proxy,
    /// What a block that may or may not apply (`Match exec`) would set the host name or
    /// the jumps to: the words that can flow into an unknown host.
    pub possible: Vec<String>,
}

pub fn resolve(
    sources: &[Source],
    destination: &Destination,
    context: &Context,
    files: &mut dyn Files,
) -> Resolved {
    resolve_at(sources, destination, context, files, 0, None)
}

fn resolve_at(
    sources: &[Source],
    destination: &Destination,
    context: &Context,
    files: &mut dyn Files,
    jump_depth: usize,
    preset_proxy: Option<Line>,
) -> Resolved {
    let mut state = State {
        context,
        files,
        // The first pass matches `Host` patterns against the name as typed, case and all.
        host: destination.host.clone(),
        original: destination.host.clone(),
        options: HashMap::new(),
        poisoned: false,
        final_pass: false,
        want_final: false,
        possible: Vec::new(),
    };
    let seeds = [("user", &destination.user), ("port", &destination.port)];
    for (key, value) in seeds {
        if let Some(value) = value {
            state.set(key, Line::with(key, value), false);
        }
    }
    if let Some(line) = preset_proxy {
        state.set("proxy", line, false);
    }
    state.read_sources(sources);
    let canonicalize = match state.options.get("canonicalizehostname") {
        Some(Slot::Known(line)) => !line
            .args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case("no")),
        Some(Slot::Unknown) => true,
        None => false,
    };
    // ssh takes the name into use (lower-cased unless an address) before the final pass,
    // whose `Host` lines match it and whose `HostName` can no longer change it.
    let mut hostname = state.hostname(&destination.host).lowered();
    if state.want_final || canonicalize {
        match &hostname {
            Value::Known(name) => {
                state.host = name.clone();
                let escaped = name.replace('%', "%%");
                state.options.insert(
                    "hostname".into(),
                    Slot::Known(Line::with("hostname", &escaped)),
                );
            }
            Value::Unknown => state.poisoned = true,
        }
        state.final_pass = true;
        state.read_sources(sources);
    }
    // Canonicalization and CNAME following ask the DNS.
    if canonicalize || state.options.contains_key("canonicalizepermittedcnames") {
        hostname = Value::Unknown;
    }
    let configured_user = match state.options.get("user") {
        Some(Slot::Known(line)) => plain(line.args.first()).known().map(String::from),
        _ => None,
    };
    let user = match state.options.get("user") {
        Some(Slot::Known(line)) => plain(line.args.first()),
        Some(Slot::Unknown) => Value::Unknown,
        None if state.poisoned => Value::Unknown,
        None => context
            .local_user
            .map_or(Value::Unknown, |u| Value::Known(u.into())),
    };
    let port = match state.options.get("port") {
        Some(Slot::Known(line)) => plain(line.args.first()),
        Some(Slot::Unknown) => Value::Unknown,
        None if state.poisoned => Value::Unknown,
        None => Value::Known("22".into()),
    };
    let possible = std::mem::take(&mut state.possible);
    let proxy = match state.options.remove("proxy") {
        None if state.poisoned => Proxy::Unknown,
        None => Proxy::None,
        Some(Slot::Unknown) => Proxy::Unknown,
        Some(Slot::Known(line)) if line.keyword == "proxycommand" => {
            if line.rest.eq_ignore_ascii_case("none") {
                Proxy::None
            } else {
                let tokens = [
                    ('h', hostname.known()),
                    ('n', Some(destination.host.as_str())),
                    ('p', port.known()),
                    ('r', user.known()),
                ];
                Proxy::Command(percent(&line.rest, &tokens).0)
            }
        }
        Some(Slot::Known(line)) => {
            // ssh takes the rest of the line, up to a `#`.
            let jumps = line.rest.split('#').next().unwrap_or("").trim_end();
            drop(state);
            jump_chain(jumps, sources, context, files, jump_depth)
        }
    };
    Resolved {
        hostname,
        user,
        configured_user,
        port,
        proxy,
        possible,
    }
}

fn jump_chain(
    jumps: &str,
    sources: &[Source],
    context: &Context,
    files: &mut dyn Files,
    depth: usize,
) -> Proxy {
    if jumps.eq_ignore_ascii_case("none") {
        return Proxy::None;
    }
    if jumps.contains('%') || depth >= MAX_JUMP_DEPTH {
        return Proxy::Unknown;
    }
    // A jump's own ssh is given `-F` (when there was one), never the `-o` lines.
    let sources: Vec<Source> = sources
        .iter()
        .filter(|s| !matches!(s, Source::Options(_)))
        .cloned()
        .collect();
    let mut hops = Vec::new();
    for (index, hop) in jumps.split(',').enumerate() {
        let Some(destination) = parse_destination(hop, true) else {
            return Proxy::Unknown;
        };
        // ssh reaches hop N through `-J hop1..hopN-1`, which overrides hop N's own proxy.
        let preset = (index > 0).then(|| Line::with("proxyjump", "none"));
        hops.push(resolve_at(
            &sources,
            &destination,
            context,
            files,
            depth + 1,
            preset,
        ));
    }
    Proxy::Jumps(hops)
}

impl Line {
    fn with(keyword: &str, value: &str) -> Line {
        Line {
            keyword: keyword.into(),
            args: vec![value.into()],
            rest: value.into(),
        }
    }
}

enum Slot {
    Known(Line),
    Unknown,
}

/// Whether the lines under a `Host`/`Match` apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applies {
    Yes,
    Maybe,
    No,
}

impl Applies {
    fn and(self, other: Applies) -> Applies {
        match (self, other) {
            (Applies::No, _) | (_, Applies::No) => Applies::No,
            (Applies::Maybe, _) | (_, Applies::Maybe) => Applies::Maybe,
            _ => Applies::Yes,
        }
    }

    fn from(matched: bool) -> Applies {
        if matched { Applies::Yes } else { Applies::No }
    }
}

struct State<'a, 'f> {
    context: &'a Context<'a>,
    files: &'f mut dyn Files,
    /// What `Host` lines match: the destination, or in the final pass the resolved name.
    host: String,
    original: String,
    options: HashMap<String, Slot>,
    /// Set when part of the configuration could not be read or understood: from then on
    /// every value not yet obtained is unknown.
    poisoned: bool,
    final_pass: bool,
    want_final: bool,
    possible: Vec<String>,
}

mod apply;
mod dest;
mod lex;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_memory;
#[cfg(test)]
mod tests_proxy;
