//! Which service `podman …` talks to (containers.conf(5), podman-system-connection(1)).
//!
//! podman is remote only when asked: `--remote`/`--url`/`--connection`, `CONTAINER_HOST` or
//! `CONTAINER_CONNECTION` set, the `podman-remote` binary, or `[engine] remote = true`.
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
    if !asked && conf.remote != Some(true) {
        return Endpoint::Local;
    }
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
        Some(uri) => Endpoint::Url(uri.clone()),
        // podman fails on an unknown connection name; nothing to guess.
        None => Endpoint::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ondisk::ssh::tests_memory::Memory;

    const HOME: &str = "/home/me";

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn home_with(conf: &str, json: Option<&str>) -> Memory {
        let mut memory = Memory::default();
        let user = format!("{HOME}/.config/containers");
        memory
            .files
            .insert(format!("{user}/containers.conf"), conf.into());
        if let Some(json) = json {
            memory
                .files
                .insert(format!("{user}/podman-connections.json"), json.into());
        }
        memory
    }

    const CONF: &str = "[engine]\nactive_service = \"grid\"\n\n[engine.service_destinations.grid]\n\
                        uri = \"ssh://core@build:22/run/podman/podman.sock\"\nidentity = \"~/.ssh/id\"\n\n\
                        [engine.service_destinations.lab]\nuri = \"tcp://10.0.0.9:8080\"\n";
    const JSON: &str = r#"{"Connection":{"Default":"desk","Connections":{
        "desk":{"URI":"ssh://me@desk.example.com/run/user/1000/podman/podman.sock","Identity":"/k"},
        "grid":{"URI":"ssh://json@orion:22/run/podman/podman.sock"}}},"Farm":{}}"#;

    fn go(env: &dyn Fn(&str) -> Option<String>, flags: &Flags, memory: &mut Memory) -> Endpoint {
        podman(env, HOME, 1000, flags, memory)
    }

    #[test]
    fn plain_podman_is_local_unless_asked_to_be_remote() {
        let none = env_of(&[]);
        let mut memory = home_with(CONF, None);
        assert_eq!(go(&none, &Flags::default(), &mut memory), Endpoint::Local);
        let remote = Flags {
            remote: true,
            ..Flags::default()
        };
        let grid = Endpoint::Url("ssh://core@build:22/run/podman/podman.sock".into());
        assert_eq!(go(&none, &remote, &mut memory), grid);
        let mut always = home_with(&format!("[engine]\nremote = true\n{}", &CONF[9..]), None);
        assert_eq!(go(&none, &Flags::default(), &mut always), grid);
    }

    #[test]
    fn precedence_of_flags_environment_and_defaults() {
        let mut memory = home_with(CONF, Some(JSON));
        let remote = Flags {
            remote: true,
            ..Flags::default()
        };
        let none = env_of(&[]);
        let desk = "ssh://me@desk.example.com/run/user/1000/podman/podman.sock";
        // The JSON default beats active_service, and the JSON entry beats containers.conf's.
        assert_eq!(go(&none, &remote, &mut memory), Endpoint::Url(desk.into()));
        let by_env = env_of(&[("CONTAINER_CONNECTION", "grid")]);
        let json_grid = Endpoint::Url("ssh://json@orion:22/run/podman/podman.sock".into());
        assert_eq!(go(&by_env, &Flags::default(), &mut memory), json_grid);
        let host = env_of(&[
            ("CONTAINER_HOST", "tcp://1.2.3.4:1"),
            ("CONTAINER_CONNECTION", "grid"),
        ]);
        assert_eq!(
            go(&host, &Flags::default(), &mut memory),
            Endpoint::Url("tcp://1.2.3.4:1".into())
        );
        let lab = Flags {
            connection: Some("lab"),
            ..Flags::default()
        };
        assert_eq!(
            go(&host, &lab, &mut memory),
            Endpoint::Url("tcp://10.0.0.9:8080".into())
        );
        let url = Flags {
            url: Some("unix:///tmp/s"),
            ..Flags::default()
        };
        assert_eq!(
            go(&none, &url, &mut memory),
            Endpoint::Url("unix:///tmp/s".into())
        );
    }

    #[test]
    fn what_cannot_be_known_is_unknown() {
        let remote = Flags {
            remote: true,
            ..Flags::default()
        };
        let missing = env_of(&[("CONTAINER_CONNECTION", "nosuch")]);
        assert_eq!(
            go(&missing, &Flags::default(), &mut home_with(CONF, None)),
            Endpoint::Unknown
        );
        let none = env_of(&[]);
        assert_eq!(
            go(&none, &remote, &mut home_with("[engine", None)),
            Endpoint::Unknown
        );
        assert_eq!(
            go(&none, &remote, &mut home_with(CONF, Some("{"))),
            Endpoint::Unknown
        );
        assert_eq!(
            go(&none, &remote, &mut home_with("<unreadable>", None)),
            Endpoint::Unknown
        );
        // Remote with nothing configured: podman's own socket on this machine.
        assert_eq!(go(&none, &remote, &mut Memory::default()), Endpoint::Local);
    }

    #[test]
    fn later_files_override_and_drop_ins_are_read() {
        let mut memory = home_with(CONF, None);
        let drop_in = format!("{HOME}/.config/containers/containers.conf.d/10-lab.conf");
        memory
            .files
            .insert(drop_in, "[engine]\nactive_service = \"lab\"\n".into());
        let remote = Flags {
            remote: true,
            ..Flags::default()
        };
        let none = env_of(&[]);
        assert_eq!(
            go(&none, &remote, &mut memory),
            Endpoint::Url("tcp://10.0.0.9:8080".into())
        );
        let only = env_of(&[("CONTAINERS_CONF", "/x.conf")]);
        assert_eq!(conf_paths(&only, HOME, 0), ["/x.conf"]);
        assert!(
            conf_paths(&none, HOME, 0)
                .iter()
                .any(|p| p.contains("rootful"))
        );
        assert!(
            conf_paths(&none, HOME, 7)
                .iter()
                .any(|p| p.contains("rootless.conf.d/7/"))
        );
    }
}
