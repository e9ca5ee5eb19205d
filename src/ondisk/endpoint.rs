//! Which daemon `docker …` talks to when the command gives no `-H`: `--context`, then
//! `DOCKER_HOST`, then `DOCKER_CONTEXT`, then `currentContext` in the CLI's `config.json`,
//! whose endpoint is in the context store under the SHA-256 of the context's name.
//! podman's counterpart is in [`podman`](super::podman).

use super::read::{Files, Read};
use super::{Malformed, Value};
use crate::sha256::Sha256;

/// The endpoint of docker's `default` context when `DOCKER_HOST` is unset.
pub const DOCKER_DEFAULT: &str = "unix:///var/run/docker.sock";

/// The environment the command will run with: the hook's own, overlaid with the command's
/// assignments (`DOCKER_HOST=… docker ps`, an earlier `export`). An empty value is unset.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(crate) fn var(env: Env, name: &str) -> Option<String> {
    env(name).filter(|value| !value.is_empty())
}

/// The endpoint `docker` will use. `context_flag` is the command's `--context`/`-c`.
pub fn docker(env: Env, home: &str, context_flag: Option<&str>, files: &mut dyn Files) -> Value {
    let config_dir = var(env, "DOCKER_CONFIG").unwrap_or_else(|| format!("{home}/.docker"));
    let name = if let Some(name) = context_flag {
        name.to_string()
    } else if let Some(host) = var(env, "DOCKER_HOST") {
        return Value::Known(host);
    } else if let Some(name) = var(env, "DOCKER_CONTEXT") {
        name
    } else {
        match files.read(&format!("{config_dir}/config.json")) {
            Read::Absent => "default".into(),
            Read::Unreadable => return Value::Unknown,
            Read::Text(text) => match current_context(&text) {
                Ok(Some(name)) => name,
                Ok(None) => "default".into(),
                Err(Malformed) => return Value::Unknown,
            },
        }
    };
    if name == "default" {
        return Value::Known(var(env, "DOCKER_HOST").unwrap_or_else(|| DOCKER_DEFAULT.into()));
    }
    let meta = format!(
        "{config_dir}/contexts/meta/{}/meta.json",
        context_dir(&name)
    );
    match files.read(&meta) {
        Read::Text(text) => context_host(&text).map_or(Value::Unknown, Value::Known),
        // A missing context makes docker fail; a guess here could only be wrong.
        Read::Absent | Read::Unreadable => Value::Unknown,
    }
}

/// `currentContext` of a docker CLI `config.json`; `Err` when the file is not valid JSON.
pub fn current_context(config_json: &str) -> Result<Option<String>, Malformed> {
    let config: serde_json::Value = serde_json::from_str(config_json).map_err(|_| Malformed)?;
    match config.get("currentContext") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(name)) if name.is_empty() => Ok(None),
        Some(serde_json::Value::String(name)) => Ok(Some(name.clone())),
        Some(_) => Err(Malformed),
    }
}

/// The context store's directory name for a context: the hex SHA-256 of its name.
pub fn context_dir(name: &str) -> String {
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// `Endpoints.docker.Host` of a context's `meta.json`.
pub fn context_host(meta_json: &str) -> Option<String> {
    let meta: serde_json::Value = serde_json::from_str(meta_json).ok()?;
    let host = meta
        .get("Endpoints")?
        .get("docker")?
        .get("Host")?
        .as_str()?;
    (!host.is_empty()).then(|| host.to_string())
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

    fn store(current: &str, contexts: &[(&str, &str)]) -> Memory {
        let mut memory = Memory::default();
        let config = format!(r#"{{"auths": {{}}, "currentContext": "{current}"}}"#);
        memory
            .files
            .insert(format!("{HOME}/.docker/config.json"), config);
        for (name, host) in contexts {
            let meta = format!(
                r#"{{"Name":"{name}","Metadata":{{}},"Endpoints":{{"docker":{{"Host":"{host}","SkipTLSVerify":false}}}}}}"#
            );
            let path = format!(
                "{HOME}/.docker/contexts/meta/{}/meta.json",
                context_dir(name)
            );
            memory.files.insert(path, meta);
        }
        memory
    }

    #[test]
    fn the_context_directory_is_the_sha256_of_the_name() {
        assert_eq!(
            context_dir("grid"),
            "0f2a693e93e2ed7008feb5b7714bbab236e3907e64188199e3be1ae367f49c40"
        );
        assert_eq!(
            context_dir("desktop"),
            "68693d02ab4fbb2331b8cc39915322e48e61f06d4d1b31e7d19913202857bc8a"
        );
    }

    #[test]
    fn the_current_context_resolves_through_the_store() {
        let mut memory = store("grid", &[("grid", "ssh://deploy@orion")]);
        let none = env_of(&[]);
        assert_eq!(
            docker(&none, HOME, None, &mut memory),
            Value::Known("ssh://deploy@orion".into())
        );
    }

    #[test]
    fn precedence_flag_then_host_then_context_then_config() {
        let contexts = [
            ("grid", "ssh://deploy@orion"),
            ("other", "tcp://10.20.0.11:2376"),
        ];
        let mut memory = store("grid", &contexts);
        let host = env_of(&[("DOCKER_HOST", "tcp://h:2375"), ("DOCKER_CONTEXT", "other")]);
        assert_eq!(
            docker(&host, HOME, None, &mut memory),
            Value::Known("tcp://h:2375".into())
        );
        assert_eq!(
            docker(&host, HOME, Some("grid"), &mut memory),
            Value::Known("ssh://deploy@orion".into())
        );
        let context = env_of(&[("DOCKER_CONTEXT", "other"), ("DOCKER_HOST", "")]);
        assert_eq!(
            docker(&context, HOME, None, &mut memory),
            Value::Known("tcp://10.20.0.11:2376".into())
        );
        let default = env_of(&[("DOCKER_CONTEXT", "default")]);
        assert_eq!(
            docker(&default, HOME, None, &mut memory),
            Value::Known(DOCKER_DEFAULT.into())
        );
    }

    #[test]
    fn docker_config_moves_the_whole_store() {
        let mut memory = Memory::default();
        memory.files.insert(
            "/cfg/config.json".into(),
            r#"{"currentContext":"x"}"#.into(),
        );
        let meta = r#"{"Endpoints":{"docker":{"Host":"ssh://x"}}}"#;
        memory.files.insert(
            format!("/cfg/contexts/meta/{}/meta.json", context_dir("x")),
            meta.into(),
        );
        let env = env_of(&[("DOCKER_CONFIG", "/cfg")]);
        assert_eq!(
            docker(&env, HOME, None, &mut memory),
            Value::Known("ssh://x".into())
        );
    }

    #[test]
    fn what_cannot_be_known_is_unknown() {
        let none = env_of(&[]);
        assert_eq!(
            docker(&none, HOME, None, &mut Memory::default()),
            Value::Known(DOCKER_DEFAULT.into())
        );
        let mut missing = store("gone", &[]);
        assert_eq!(docker(&none, HOME, None, &mut missing), Value::Unknown);
        let mut broken = Memory::default();
        broken
            .files
            .insert(format!("{HOME}/.docker/config.json"), "{not json".into());
        assert_eq!(docker(&none, HOME, None, &mut broken), Value::Unknown);
        let mut unreadable = Memory::default();
        unreadable
            .files
            .insert(format!("{HOME}/.docker/config.json"), "<unreadable>".into());
        assert_eq!(docker(&none, HOME, None, &mut unreadable), Value::Unknown);
        assert_eq!(current_context(r#"{"auths":{}}"#), Ok(None));
        assert_eq!(context_host(r#"{"Endpoints":{}}"#), None);
    }
}
