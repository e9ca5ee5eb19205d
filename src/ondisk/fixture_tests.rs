//! The corpus fixtures (tests/corpus/unseen/fixtures), read from disk through the bounded
//! reader, as the decision code will read a real home.

use super::Value;
use super::endpoint;
use super::make;
use super::podman::{self, Endpoint, Flags};
use super::read::{Reader, read_script};
use super::ssh::{self, Context, Proxy, Source, parse_destination};
use super::startup;

fn fixture(path: &str) -> String {
    format!(
        "{}/tests/corpus/unseen/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn known(text: &str) -> Value {
    Value::Known(text.into())
}

/// The fixture's user configuration alone: the machine's own /etc/ssh must not leak in.
fn resolve_in(home: &str, destination: &str) -> ssh::Resolved {
    let home = fixture(home);
    let context = Context {
        home: &home,
        local_user: Some("agent"),
    };
    let sources = [Source::User(format!("{home}/.ssh/config"))];
    let destination = parse_destination(destination, false).unwrap();
    ssh::resolve(&sources, &destination, &context, &mut Reader::default())
}

#[test]
fn the_ssh_config_fixture_resolves_its_aliases() {
    let ci = resolve_in("home", "ci");
    assert_eq!(
        (ci.hostname, ci.user),
        (known("build.grid.internal"), known("deploy"))
    );
    let stash = resolve_in("home", "stash");
    assert_eq!(
        (stash.hostname, stash.user),
        (known("vault"), known("restic"))
    );
    assert_eq!(
        resolve_in("home", "prod-api").hostname,
        known("fd00:77::15")
    );
    assert_eq!(
        resolve_in("home", "laptop").hostname,
        known("laptop.example.com")
    );
    assert_eq!(resolve_in("home", "elsewhere").hostname, known("elsewhere"));
    let tunnel = resolve_in("home", "cache-tunnel");
    assert_eq!(tunnel.hostname, known("192.0.2.50"));
    let Proxy::Jumps(hops) = tunnel.proxy else {
        panic!("a jump")
    };
    assert_eq!(
        (&hops[0].hostname, &hops[0].user),
        (&known("db"), &known("jump"))
    );
}

#[test]
fn the_match_exec_fixture_is_unknown() {
    assert_eq!(resolve_in("home-matchexec", "mx").hostname, Value::Unknown);
    assert_eq!(
        resolve_in("home-matchexec", "other").hostname,
        known("other")
    );
}

/// `Match exec` (and every other reader here) must never start a process: no code in
/// this module can.
#[test]
fn nothing_in_this_module_can_run_a_program() {
    let forbidden = [
        "std::process",
        "Command::new",
        "libc::exec",
        "libc::fork",
        "posix_spawn",
    ];
    let mut stack = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/ondisk"
    ))];
    let mut checked = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if !path.ends_with("fixture_tests.rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                checked += 1;
                for word in forbidden {
                    assert!(!text.contains(word), "{} holds {word}", path.display());
                }
            }
        }
    }
    assert!(checked >= 10);
}

#[test]
fn ssh_dash_f_reads_only_the_given_file() {
    let home = fixture("home");
    let context = Context {
        home: &home,
        local_user: None,
    };
    let sources = ssh::sources(&home, vec![], Some(fixture("work/ssh_config")));
    let resolve = |host| {
        let destination = parse_destination(host, false).unwrap();
        ssh::resolve(&sources, &destination, &context, &mut Reader::default()).hostname
    };
    assert_eq!(resolve("box"), known("node-0002"));
    assert_eq!(resolve("devbox"), known("devbox.example.com"));
    // ~/.ssh/config's alias does not apply under -F.
    assert_eq!(resolve("ci"), known("ci"));
}

#[test]
fn the_docker_fixtures_resolve_the_current_context() {
    let none = |_: &str| None;
    let docker = |home: &str| endpoint::docker(&none, &fixture(home), None, &mut Reader::default());
    assert_eq!(docker("home-docker"), known("ssh://deploy@build"));
    assert_eq!(
        docker("home-docker-devbox"),
        known("ssh://me@devbox.example.com")
    );
    assert_eq!(docker("home-plain"), known(endpoint::DOCKER_DEFAULT));
    let grid = |name: &str| (name == "DOCKER_CONTEXT").then(|| "grid".to_string());
    let home = fixture("home-docker-devbox");
    let by_env = endpoint::docker(&grid, &home, None, &mut Reader::default());
    assert_eq!(by_env, known("ssh://deploy@build"));
}

#[test]
fn the_podman_fixture_names_its_service() {
    let home = fixture("home-docker");
    let env = |name: &str| (name == "XDG_CONFIG_HOME").then(|| format!("{home}/.config"));
    let remote = Flags {
        remote: true,
        ..Flags::default()
    };
    let uri = "ssh://core@build:22/run/user/1000/podman/podman.sock";
    assert_eq!(
        podman::podman(&env, &home, 1000, &remote, &mut Reader::default()),
        Endpoint::Url(uri.into())
    );
    // Plain `podman` uses the service only if it is a remote-only build.
    let plain = podman::podman(&env, &home, 1000, &Flags::default(), &mut Reader::default());
    if cfg!(target_os = "linux") {
        assert_eq!(plain, Endpoint::IfRemoteBuild(uri.into()));
    }
}

#[test]
fn the_startup_fixtures_define_aliases_and_functions() {
    let definitions = startup::read(&fixture("home"), &mut Reader::default());
    assert!(definitions.complete);
    let alias = |name: &str| definitions.aliases.get(name).cloned();
    assert_eq!(alias("b"), Some(known("ssh build")));
    assert_eq!(alias("pg"), Some(known("ssh db psql")));
    assert_eq!(alias("gs"), Some(known("git status")));
    assert_eq!(alias("dlogs"), Some(known("docker logs")));
    assert_eq!(
        definitions.functions.get("deploy"),
        Some(&known("{\n    ssh web \"$@\"\n}"))
    );
    assert_eq!(
        definitions.functions.get("greet"),
        Some(&known("{\n    echo \"hello $1\"\n}"))
    );
    let empty = startup::read(&fixture("home-plain"), &mut Reader::default());
    assert!(empty.complete && empty.aliases.is_empty() && empty.functions.is_empty());
}

#[test]
fn the_scripts_and_makefiles_are_read() {
    let work = std::path::PathBuf::from(fixture("work"));
    assert!(
        read_script("deploy.sh", &work)
            .unwrap()
            .contains("ssh api 'sudo systemctl restart api'")
    );
    assert!(
        read_script("./lib/remote.sh", &work)
            .unwrap()
            .contains("ssh backup restic snapshots")
    );
    assert!(
        read_script(&fixture("work/tools/run-on.sh"), &work)
            .unwrap()
            .contains("exec ssh")
    );
    assert_eq!(read_script("missing.sh", &work), None);
    assert_eq!(read_script("lib", &work), None);
    let work = fixture("work");
    let default = make::read(&work, None, &mut Reader::default()).unwrap();
    let lines: Vec<&String> = default
        .recipes
        .iter()
        .flat_map(|(_, lines)| lines)
        .collect();
    assert_eq!(lines, ["cargo build", "cargo test"]);
    let deploy = make::read(&work, Some("deploy.mk"), &mut Reader::default()).unwrap();
    let push = &deploy.recipes.iter().find(|(t, _)| t == "push").unwrap().1;
    assert_eq!(
        push,
        &[
            "scp dist/site.tar web:/srv/www/",
            "ssh web 'tar -xf /srv/www/site.tar -C /srv/www'"
        ]
    );
    assert!(make::read(&fixture("plain"), None, &mut Reader::default()).is_none());
}
