//! The command line's destination and ssh's `%` tokens.

use super::super::Value;
use crate::shell::UNKNOWN;

/// What the command line gives: `[user@]host`, `-l`, `-p`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Destination {
    pub host: String,
    pub user: Option<String>,
    pub port: Option<String>,
}

/// Splits `[user@]host`, `ssh://[user@]host[:port]`, or with `with_port` (a `ProxyJump`
/// hop) `[user@]host[:port]`; `[v6]` brackets are removed.
pub fn parse_destination(text: &str, with_port: bool) -> Option<Destination> {
    let (text, with_port) = match text.strip_prefix("ssh://") {
        Some(rest) => (rest.trim_end_matches('/'), true),
        None => (text, with_port),
    };
    let (user, hostport) = match text.rsplit_once('@') {
        Some((user, rest)) => (Some(user.to_string()), rest),
        None => (None, text),
    };
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        match after.strip_prefix(':') {
            Some(port) if with_port => (host, Some(port.to_string())),
            None if after.is_empty() => (host, None),
            _ => return None,
        }
    } else {
        match hostport.split_once(':') {
            Some((host, port)) if with_port && !port.contains(':') => {
                (host, Some(port.to_string()))
            }
            _ => (hostport, None),
        }
    };
    if host.is_empty() || user.as_deref() == Some("") || port.as_deref() == Some("") {
        return None;
    }
    Some(Destination {
        host: host.to_string(),
        user,
        port,
    })
}

/// A value without tokens, or unknown: `User` and `Port` may take tokens that need the
/// local machine.
pub(super) fn plain(value: Option<&String>) -> Value {
    match value {
        Some(value) if !value.contains('%') => Value::Known(value.clone()),
        _ => Value::Unknown,
    }
}

/// Expands `%x` tokens; an unknown token becomes [`UNKNOWN`]. Returns whether all were known.
pub(super) fn percent(text: &str, tokens: &[(char, Option<&str>)]) -> (String, bool) {
    let mut out = String::new();
    let mut known = true;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some(token) => match tokens.iter().find(|(t, _)| *t == token) {
                Some((_, Some(value))) => out.push_str(value),
                _ => {
                    out.push(UNKNOWN);
                    known = false;
                }
            },
            None => {
                out.push(UNKNOWN);
                known = false;
            }
        }
    }
    (out, known)
}
