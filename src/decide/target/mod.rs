//! A target word in its role → the mesh object it names, if any. Host forms (`user@`,
//! `:port`, `ssh://`, `host:path`, `[v6]`) are taken apart here, once for every program.

mod dbus;
mod engine_api;
mod git;
mod hosts;
pub(crate) use engine_api::request as engine_request;
pub(crate) use git::*;

use crate::catalog::{Catalog, MeshObject, is_glob};
use crate::rule::Rule;
use crate::rules::Role;
use crate::shell::UNKNOWN;

pub(super) enum Resolved {
    Nothing,
    /// The target is (partly) a value the command does not give.
    Unknown,
    /// The forge's git account: passes.
    Forge(String),
    Mesh {
        object: MeshObject,
        rule: Rule,
        machine: Option<String>,
    },
}

/// `-o Key=Value` or `-o "Key Value"` → (lowercased key, value).
pub(super) fn ssh_option(text: &str) -> Option<(String, &str)> {
    let text = text.trim();
    let at = text.find(|c: char| c == '=' || c.is_whitespace())?;
    let value = text[at + 1..].trim_start_matches(|c: char| c == '=' || c.is_whitespace());
    Some((text[..at].to_ascii_lowercase(), value))
}

/// The command a value carries, if it is one: `rsync -e 'ssh -J x'`, `-o ProxyCommand=…`,
/// `-o LocalCommand=…`, `-o RemoteCommand=…`, socat's `EXEC:…`/`SYSTEM:…`.
pub(super) fn command_in(role: Role, value: &str) -> Option<String> {
    match role {
        Role::Rsh => Some(value.to_string()),
        Role::SshOption => match ssh_option(value) {
            Some((key, v))
                if matches!(
                    key.as_str(),
                    "proxycommand" | "localcommand" | "remotecommand"
                ) =>
            {
                Some(v.to_string())
            }
            _ => None,
        },
        Role::SocketAddress => {
            let (kind, rest) = value.split_once(':')?;
            matches!(kind.to_ascii_uppercase().as_str(), "EXEC" | "SYSTEM")
                .then(|| rest.split(',').next().unwrap_or(rest).to_string())
        }
        _ => None,
    }
}

/// The host a forwarding names: `-W host:port`, `-L [bind:]port:host:hostport`,
/// `-R [bind:]port:host:hostport`, with `[v6]` hosts.
fn forwarded_host(value: &str) -> Option<&str> {
    let mut fields = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']')?;
            fields.push(&inner[..end]);
            rest = inner[end + 1..].strip_prefix(':').unwrap_or("");
        } else {
            let end = rest.find(':').unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = rest.get(end + 1..).unwrap_or("");
        }
    }
    match fields.len() {
        2 => Some(fields[0]),
        n if n >= 3 => Some(fields[n - 2]),
        _ => None,
    }
}

/// The host of a socat address: `TCP:host:port`, `TCP4-CONNECT:host:port`, `OPENSSL:…`.
fn socket_host(value: &str) -> Option<&str> {
    let (kind, rest) = value.split_once(':')?;
    let kind = kind.to_ascii_uppercase();
    let connects = [
        "TCP",
        "TCP4",
        "TCP6",
        "TCP-CONNECT",
        "TCP4-CONNECT",
        "TCP6-CONNECT",
        "OPENSSL",
        "OPENSSL-CONNECT",
        "SSL",
        "UDP",
        "UDP4",
        "UDP6",
        "UDP-CONNECT",
        "SCTP",
        "SCTP-CONNECT",
        "SOCKS4",
        "SOCKS4A",
        "SOCKS5",
        "PROXY",
    ];
    if !connects.contains(&kind.as_str()) {
        return None;
    }
    let address = rest.split(',').next().unwrap_or(rest);
    forwarded_host(address).or(Some(address))
}

/// `[user@]host[:port]`, `ssh://[user@]host[:port]/…`, `[v6addr]:port` → (user, host).
fn split_host(word: &str) -> (Option<&str>, &str) {
    let rest = word.split_once("://").map_or(word, |(_, r)| r);
    let rest = rest.split('/').next().unwrap_or(rest);
    let (user, host) = match rest.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, rest),
    };
    if let Some(v6) = host.strip_prefix('[') {
        return (user, v6.split(']').next().unwrap_or(v6));
    }
    // A bare IPv6 address has several colons; `host:port` has one.
    if host.matches(':').count() > 1 {
        return (user, host);
    }
    (user, host.split(':').next().unwrap_or(host))
}

/// The bare host a `[user@]host[:port]` or URL word names.
pub(super) fn host_word(word: &str) -> &str {
    split_host(word).1
}

/// The `[user@]host` a Host or HostPath word gives ssh as its destination, if any.
pub(super) fn ssh_destination(role: Role, value: &str) -> Option<&str> {
    match role {
        Role::Host if !value.contains("://") => {
            Some(value).filter(|v| !v.is_empty() && !v.starts_with('-'))
        }
        Role::Host => None,
        Role::HostPath => host_of_path(value).filter(|h| !h.contains("://")),
        _ => None,
    }
}

/// The host part of an scp/rsync operand, if it names one: `user@host:path`, `host::mod`,
/// `rsync://host/mod`. A local path (`./a:b`, `/x:y`) names none.
fn host_of_path(word: &str) -> Option<&str> {
    if let Some((scheme, _)) = word.split_once("://") {
        return matches!(scheme, "scp" | "sftp" | "ssh" | "rsync").then_some(word);
    }
    let start = match word.find('@') {
        Some(at) if !word[..at].contains(['/', ':']) => at + 1,
        _ => 0,
    };
    let rest = &word[start..];
    let end = if rest.starts_with('[') {
        rest.find("]:")? + 1
    } else {
        rest.find(':')?
    };
    let host = &rest[..end];
    if host.is_empty() || host.contains('/') {
        return None;
    }
    Some(&word[..start + end])
}

pub(super) fn resolve(catalog: &Catalog, role: Role, value: &str, user: Option<&str>) -> Resolved {
    match role {
        Role::Host | Role::DaemonHost => host(catalog, value, user, rule_for(role)),
        Role::HostPath => match host_of_path(value) {
            Some(h) => host(catalog, h, user, Rule::RemoteAccess),
            None if value.contains(UNKNOWN)
                && !value.starts_with('/')
                && !value.starts_with('.') =>
            {
                Resolved::Unknown
            }
            None => Resolved::Nothing,
        },
        Role::Jump => value
            .split(',')
            .map(|hop| host(catalog, hop, None, Rule::RemoteAccess))
            .find(|r| !matches!(r, Resolved::Nothing | Resolved::Forge(_)))
            .unwrap_or(Resolved::Nothing),
        Role::SshOption => match ssh_option(value) {
            Some((key, v)) if key == "proxyjump" => resolve(catalog, Role::Jump, v, None),
            Some((key, v)) if key == "hostname" => host(catalog, v, user, Rule::RemoteAccess),
            // `LocalForward 2222 atlas:22`: the forwarded-to host is the last word's.
            Some((key, v)) if key == "localforward" || key == "remoteforward" => resolve(
                catalog,
                Role::Forward,
                v.split_whitespace().last().unwrap_or(v),
                None,
            ),
            _ => Resolved::Nothing,
        },
        Role::Forward => match forwarded_host(value) {
            Some(h) => host(catalog, h, None, Rule::RemoteAccess),
            None => Resolved::Nothing,
        },
        Role::SocketAddress => match socket_host(value) {
            Some(h) => host(catalog, h, None, Rule::RemoteAccess),
            None => Resolved::Nothing,
        },
        Role::Context => named(
            catalog.host(value).map(MeshObject::Machine),
            value,
            Rule::RemoteDaemon,
        ),
        Role::Machine => {
            let (_, name) = split_host(value);
            named(
                catalog
                    .container(name)
                    .or_else(|| catalog.host(name).map(MeshObject::Machine)),
                value,
                Rule::RemoteDaemon,
            )
        }
        // `journalctl -u 'redis*'`: a glob reaches every unit it matches.
        Role::Unit if is_glob(value) && !value.contains(UNKNOWN) => {
            named(catalog.unit_glob(value), value, Rule::MeshUnit)
        }
        Role::Unit => named(catalog.unit(value), value, Rule::MeshUnit),
        // A mesh unit among the names wins; else a name not known makes the word unknown.
        Role::DbusWord => dbus::unit_names(value)
            .iter()
            .map(|name| resolve(catalog, Role::Unit, name, user))
            .fold(Resolved::Nothing, first_mesh),
        Role::Container if is_glob(value) && !value.contains(UNKNOWN) => {
            named(catalog.container_glob(value), value, Rule::MeshContainer)
        }
        Role::Container => named(catalog.container(value), value, Rule::MeshContainer),
        // A compose service named like a module is neither a container nor a unit: only
        // a container's name (the project's `container_name`, or unread) reaches one.
        Role::Service => named(catalog.container(value), value, Rule::MeshContainer),
        Role::CopyPath => match value.split_once(':') {
            Some((name, _)) if !name.contains('/') => {
                named(catalog.container(name), name, Rule::MeshContainer)
            }
            _ => Resolved::Nothing,
        },
        Role::JournalMatch => match value.split_once('=') {
            Some(("_SYSTEMD_UNIT" | "UNIT" | "USER_UNIT" | "_SYSTEMD_USER_UNIT", unit)) => {
                named(catalog.unit(unit), unit, Rule::MeshUnit)
            }
            Some(("SYSLOG_IDENTIFIER", id)) => identifier(catalog, id),
            Some(("CONTAINER_NAME" | "CONTAINER_TAG", name)) => {
                named(catalog.container(name), name, Rule::MeshContainer)
            }
            _ => Resolved::Nothing,
        },
        Role::HostList => hosts::host_list(catalog, value, user),
        // `curl scp://atlas/x`: only an ssh URL reaches a machine over ssh.
        Role::SshUrl => match value.split_once("://") {
            Some(("scp" | "sftp" | "ssh" | "fish", _)) => {
                resolve(catalog, Role::HostPath, value, user)
            }
            _ => Resolved::Nothing,
        },
        Role::Url => engine_api::resolve_url(catalog, value, user),
        Role::DaemonEndpoint => value
            .split(',')
            .find_map(|pair| pair.strip_prefix("host="))
            .map_or(Resolved::Nothing, |h| {
                host(catalog, h, None, Rule::RemoteDaemon)
            }),
        Role::ContainerFilter => match value.split_once('=') {
            Some(("container", name)) => named(catalog.container(name), name, Rule::MeshContainer),
            _ => Resolved::Nothing,
        },
        Role::Identifier => identifier(catalog, value),
        Role::GitUrl => match git_url(value) {
            GitUrl::Remote(url) => resolve(catalog, Role::HostPath, &url, user),
            GitUrl::Command(_) | GitUrl::Local => Resolved::Nothing,
        },
        Role::User
        | Role::Rsh
        | Role::GitConfig
        | Role::GitConfigList
        | Role::GitConfigCount
        | Role::RemoteCommand
        | Role::Command
        | Role::Entrypoint
        | Role::Verb
        | Role::Ignore => Resolved::Nothing,
    }
}

/// Of two resolutions of one word's parts: a mesh object first, then one not known.
fn first_mesh(found: Resolved, next: Resolved) -> Resolved {
    match (found, next) {
        (found @ Resolved::Mesh { .. }, _) => found,
        (_, next @ Resolved::Mesh { .. }) => next,
        (Resolved::Unknown, _) | (_, Resolved::Unknown) => Resolved::Unknown,
        (found, _) => found,
    }
}

/// A syslog identifier: a mesh container's, unit's (with or without `.service`) or module's.
fn identifier(catalog: &Catalog, id: &str) -> Resolved {
    match catalog.container(id) {
        Some(object) => named(Some(object), id, Rule::MeshContainer),
        None => named(
            catalog.unit(id).or_else(|| catalog.module(id)),
            id,
            Rule::MeshUnit,
        ),
    }
}

fn rule_for(role: Role) -> Rule {
    if role == Role::DaemonHost {
        Rule::RemoteDaemon
    } else {
        Rule::RemoteAccess
    }
}

fn named(object: Option<MeshObject>, value: &str, rule: Rule) -> Resolved {
    match object {
        Some(object) => Resolved::Mesh {
            machine: None,
            object,
            rule,
        },
        None if value.contains(UNKNOWN) => Resolved::Unknown,
        None => Resolved::Nothing,
    }
}

fn host(catalog: &Catalog, word: &str, option_user: Option<&str>, rule: Rule) -> Resolved {
    // A local socket or pipe reaches no machine.
    if word.starts_with("unix://") || word.starts_with("npipe://") {
        return Resolved::Nothing;
    }
    let (user, name) = split_host(word);
    if name.contains(UNKNOWN) {
        return Resolved::Unknown;
    }
    let Some(found) = catalog.host(name) else {
        return Resolved::Nothing;
    };
    // `ssh -l root git@forge`: which one ssh uses depends on their order; when they
    // disagree the command is not taken for the forge's git account.
    let disagree = matches!((user, option_user), (Some(a), Some(b)) if a != b);
    let user = user.or(option_user);
    if rule == Rule::RemoteAccess
        && !disagree
        && user.is_some_and(|u| !u.contains(UNKNOWN))
        && catalog.is_forge_account(user, &found.machine)
    {
        return Resolved::Forge(format!("{}@{}", user.unwrap_or_default(), found.machine));
    }
    let machine = Some(found.machine.clone());
    Resolved::Mesh {
        object: MeshObject::Machine(found),
        rule,
        machine,
    }
}

/// The mesh machine a word names in any host form, for `<machine>` in `replaces`.
pub fn machine_in(catalog: &Catalog, word: &str) -> Option<String> {
    let (_, name) = split_host(host_of_path(word).unwrap_or(word));
    catalog
        .host(name)
        .or_else(|| catalog.host(split_host(word).1))
        .map(|m| m.machine)
}

#[cfg(test)]
mod tests;
