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
fn plain_podman_uses_its_default_connection_only_if_a_remote_build() {
    let none = env_of(&[]);
    let mut memory = home_with(CONF, None);
    let uri = "ssh://core@build:22/run/podman/podman.sock";
    if cfg!(target_os = "linux") {
        let plain = go(&none, &Flags::default(), &mut memory);
        assert_eq!(plain, Endpoint::IfRemoteBuild(uri.into()));
    }
    // With no default connection, any build works on this machine.
    let mut bare = home_with("[engine]\n", None);
    assert_eq!(go(&none, &Flags::default(), &mut bare), Endpoint::Local);
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
