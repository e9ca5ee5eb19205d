//! Which service `podman …` talks to (containers.conf(5), podman-system-connection(1)).
//!
//! podman is remote when asked: `--remote`/`--url`/`--connection`, `CONTAINER_HOST` or
//! `CONTAINER_CONNECTION` set, the `podman-remote` binary, `[engine] remote = true`, or a
//! remote-only build (macOS, Windows; on Linux, `podman-remote` installed as `podman`, which
//! only running it shows: then the default connection is [`Endpoint::IfRemoteBuild`]).
//! Remote, it takes `--connection`, `--url`, `CONTAINER_HOST`, `CONTAINER_CONNECTION`, then
//! the default connection (`Connection.Default` of `podman-connections.json`, else
//! `[engine] active_service`); a name is looked up in `podman-connections.json` first, then
//! in `[engine.service_destinations.NAME]`.

use super::Malformed;
use super::endpoint::{Env, var};
use super::read::{Files, Read};
use std::collections::HashMap;

/// What the command line says about podman's mode and destination.
#[derive(Debug, Clone, Default)]
pub struct Flags<'a> {
    /// `podman-remote`, or `--remote` given.
    pub remote: bool,
    pub url: Option<&'a str>,
    pub connection: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// podman's own engine on this machine (no service is contacted).
    Local,
    Url(String),
    /// The default connection's URL, used only if this `podman` is a remote-only build
    /// (`podman-remote` installed as `podman`): which it is, only running it shows.
    IfRemoteBuild(String),
    Unknown,
}

/// The merged `[engine]` settings of the containers.conf files podman reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineConf {
    pub remote: Option<bool>,
    pub active_service: Option<String>,
    pub destinations: HashMap<String, String>,
}

/// Merges containers.conf texts in reading order: a later file overrides an earlier one.
pub fn engine_conf(texts: &[String]) -> Result<EngineConf, Malformed> {
    let mut conf = EngineConf::default();
    for text in texts {
        let table: toml::Table = text.parse().map_err(|_| Malformed)?;
        let Some(engine) = table.get("engine") else {
            continue;
        };
        let engine = engine.as_table().ok_or(Malformed)?;
        if let Some(remote) = engine.get("remote") {
            conf.remote = Some(remote.as_bool().ok_or(Malformed)?);
        }
        if let Some(active) = engine.get("active_service") {
            conf.active_service = Some(active.as_str().ok_or(Malformed)?.to_string());
        }
        if let Some(destinations) = engine.get("service_destinations") {
            for (name, destination) in destinations.as_table().ok_or(Malformed)? {
                if let Some(uri) = destination.get("uri") {
                    conf.destinations
                        .insert(name.clone(), uri.as_str().ok_or(Malformed)?.to_string());
                }
            }
        }
    }
    Ok(conf)
}

/// `Connection.Default` and `Connection.Connections.NAME.URI` of `podman-connections.json`.
pub fn connections(json: &str) -> Result<(Option<String>, HashMap<String, String>), Malformed> {
    let root: serde_json::Value = serde_json::from_str(json).map_err(|_| Malformed)?;
    let Some(connection) = root.get("Connection") else {
        return Ok((None, HashMap::new()));
    };
    let default = match connection.get("Default") {
        Some(serde_json::Value::String(name)) if !name.is_empty() => Some(name.clone()),
        None | Some(serde_json::Value::String(_)) | Some(serde_json::Value::Null) => None,
        Some(_) => return Err(Malformed),
    };
    let mut uris = HashMap::new();
    if let Some(list) = connection.get("Connections").and_then(|c| c.as_object()) {
        for (name, entry) in list {
            let uri = entry.get("URI").and_then(|u| u.as_str()).ok_or(Malformed)?;
            uris.insert(name.clone(), uri.to_string());
        }
    }
    Ok((default, uris))
}

/// The containers.conf files podman reads, lowest precedence first (containers-config(5)).
pub fn conf_paths(env: Env, home: &str, uid: u32) -> Vec<String> {
    if let Some(only) = var(env, "CONTAINERS_CONF") {
        let mut paths = vec![only];
        paths.extend(var(env, "CONTAINERS_CONF_OVERRIDE"));
        return paths;
    }
    let user = var(env, "XDG_CONFIG_HOME").unwrap_or_else(|| format!("{home}/.config"));
    let mut paths = Vec::new();
    for base in ["/usr/share/containers", "/etc/containers"] {
        paths.push(format!("{base}/containers.conf"));
        paths.push(format!("{base}/containers.conf.d/*.conf"));
        if uid == 0 {
            paths.push(format!("{base}/containers.rootful.conf.d/*.conf"));
        } else {
            paths.push(format!("{base}/containers.rootless.conf.d/*.conf"));
            paths.push(format!("{base}/containers.rootless.conf.d/{uid}/*.conf"));
        }
    }
    paths.push(format!("{user}/containers/containers.conf"));
    paths.push(format!("{user}/containers/containers.conf.d/*.conf"));
    paths.extend(var(env, "CONTAINERS_CONF_OVERRIDE"));
    paths
}

/// The endpoint `podman` will use.
pub fn podman(env: Env, home: &str, uid: u32, flags: &Flags, files: &mut dyn Files) -> Endpoint {
    let host = var(env, "CONTAINER_HOST");
    let named = var(env, "CONTAINER_CONNECTION");
    let asked = flags.remote || flags.url.is_some() || flags.connection.is_some();
    let asked = asked || env("CONTAINER_HOST").is_some() || env("CONTAINER_CONNECTION").is_some();
    if let (None, Some(url)) = (flags.connection, flags.url) {
        return Endpoint::Url(url.into());
    }
    if let (None, Some(url)) = (flags.connection, &host) {
        return Endpoint::Url(url.clone());
    }
    let mut texts = Vec::new();
    for pattern in conf_paths(env, home, uid) {
        let paths = if pattern.contains('*') {
            files.glob(&pattern)
        } else {
            Some(vec![pattern])
        };
        let Some(paths) = paths else {
            return Endpoint::Unknown;
        };
        for path in paths {
            match files.read(&path) {
                Read::Text(text) => texts.push(text),
                Read::Absent => {}
                Read::Unreadable => return Endpoint::Unknown,
            }
        }
    }
    let Ok(conf) = engine_conf(&texts) else {
        return Endpoint::Unknown;
    };
    // macOS and Windows have only the remote client.
    let remote_only = cfg!(any(target_os = "macos", target_os = "windows"));
    let asked = asked || conf.remote == Some(true) || remote_only;
    let user = var(env, "XDG_CONFIG_HOME").unwrap_or_else(|| format!("{home}/.config"));
    let json_path = var(env, "PODMAN_CONNECTIONS_CONF")
        .unwrap_or_else(|| format!("{user}/containers/podman-connections.json"));
    let (default, uris) = match files.read(&json_path) {
        Read::Absent => (None, HashMap::new()),
        Read::Unreadable => return Endpoint::Unknown,
        Read::Text(text) => match connections(&text) {
            Ok(found) => found,
            Err(Malformed) => return Endpoint::Unknown,
        },
    };
    let name = flags.connection.map(String::from).or(named).or(default);
    let Some(name) = name.or(conf.active_service.clone()) else {
        // Remote with no connection configured: the local service socket.
        return Endpoint::Local;
    };
    match uris.get(&name).or(conf.destinations.get(&name)) {
        Some(uri) if asked => Endpoint::Url(uri.clone()),
        Some(uri) => Endpoint::IfRemoteBuild(uri.clone()),
        // podman fails on an unknown connection name; nothing to guess.
        None if asked => Endpoint::Unknown,
        None => Endpoint::Local,
    }
}

#[cfg(test)]
#[path = "podman_tests.rs"]
mod tests;
