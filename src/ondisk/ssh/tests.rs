use super::super::Value;
use super::*;

use super::tests_memory::Memory;

const HOME: &str = "/home/me";

pub(super) fn with_config(user: &str, system: &str) -> Memory {
    let mut memory = Memory::default();
    memory
        .files
        .insert(format!("{HOME}/.ssh/config"), user.into());
    memory
        .files
        .insert("/etc/ssh/ssh_config".into(), system.into());
    memory
}

pub(super) fn go(memory: &mut Memory, destination: &str) -> Resolved {
    let context = Context {
        home: HOME,
        local_user: Some("me"),
    };
    let destination = parse_destination(destination, false).unwrap();
    resolve(&sources(HOME, vec![], None), &destination, &context, memory)
}

pub(super) fn known(text: &str) -> Value {
    Value::Known(text.into())
}

#[test]
fn no_configuration_gives_the_destination_itself() {
    let resolved = go(&mut Memory::default(), "db");
    assert_eq!(resolved.hostname, known("db"));
    assert_eq!(resolved.user, known("me"));
    assert_eq!(resolved.port, known("22"));
    assert_eq!(resolved.proxy, Proxy::None);
}

#[test]
fn first_obtained_value_wins_across_blocks_and_files() {
    let mut memory = with_config(
        "Host web\n  HostName first\n  Port 2200\nHost *\n  HostName second\n  User deploy\n",
        "Host *\n  User root\n  Port 22\n",
    );
    let resolved = go(&mut memory, "web");
    assert_eq!(resolved.hostname, known("first"));
    assert_eq!(resolved.port, known("2200"));
    assert_eq!(resolved.user, known("deploy"));
    let other = go(&mut memory, "x");
    assert_eq!(other.hostname, known("second"));
    // The command line's user wins over the configuration.
    assert_eq!(go(&mut memory, "ops@x").user, known("ops"));
}

#[test]
fn negated_and_wildcard_host_patterns() {
    let mut memory = with_config(
        "Host * !bastion\n  HostName inner\nHost node-0?\n  HostName pattern\n",
        "",
    );
    assert_eq!(go(&mut memory, "bastion").hostname, known("bastion"));
    assert_eq!(go(&mut memory, "node-01").hostname, known("inner"));
    let mut memory = with_config("Host node-0? !node-09\n  HostName %h.grid\n", "");
    assert_eq!(go(&mut memory, "node-01").hostname, known("node-01.grid"));
    assert_eq!(go(&mut memory, "node-09").hostname, known("node-09"));
    // Host patterns compare the name as typed, case and all; ssh then lowers the name.
    assert_eq!(go(&mut memory, "NODE-02").hostname, known("node-02"));
    let mut memory = with_config("Host Web\n  HostName %h.Grid\n", "");
    assert_eq!(go(&mut memory, "Web").hostname, known("web.grid"));
    assert_eq!(go(&mut memory, "web").hostname, known("web"));
}

#[test]
fn percent_tokens_in_hostname() {
    let mut memory = with_config(
        "Host a\n HostName %h.example.com\nHost b\n HostName %%%h\nHost c\n HostName %l.x\n",
        "",
    );
    assert_eq!(go(&mut memory, "a").hostname, known("a.example.com"));
    assert_eq!(go(&mut memory, "b").hostname, known("%b"));
    // The local host name is not something the hook should guess.
    assert_eq!(go(&mut memory, "c").hostname, Value::Unknown);
}

#[test]
fn match_exec_makes_what_it_sets_unknown_and_runs_nothing() {
    let mut memory = with_config(
        "Match host mx exec \"touch /tmp/sentinel\"\n  HostName build\n  User root\nHost mx\n  HostName mx.example.com\n  Port 2222\n",
        "",
    );
    let resolved = go(&mut memory, "mx");
    assert_eq!(resolved.hostname, Value::Unknown);
    assert_eq!(resolved.user, Value::Unknown);
    assert_eq!(resolved.port, known("2222"));
    // What the block would make the host is kept, so a mesh name there can be seen.
    assert_eq!(resolved.possible, ["build"]);
    // A criterion that fails before exec decides the block: it does not apply.
    assert_eq!(go(&mut memory, "other").hostname, known("other"));
    assert!(go(&mut memory, "other").possible.is_empty());
    assert!(!std::path::Path::new("/tmp/sentinel").exists());
}

#[test]
fn match_criteria_that_can_be_decided() {
    let config = "Match originalhost db user me\n  HostName db.internal\n\
                  Match host db.internal\n  Port 5022\n\
                  Match !localuser me\n  User other\n\
                  Match all\n  ProxyJump jump\n";
    let mut memory = with_config(config, "");
    let resolved = go(&mut memory, "db");
    assert_eq!(resolved.hostname, known("db.internal"));
    assert_eq!(resolved.port, known("5022"));
    assert_eq!(resolved.user, known("me"));
    let Proxy::Jumps(hops) = resolved.proxy else {
        panic!("jumps")
    };
    assert_eq!(hops[0].hostname, known("jump"));
    assert_eq!(go(&mut memory, "alice@db").hostname, known("db"));
}

#[test]
fn match_final_reparses_with_the_resolved_name() {
    let config = "Host short\n  HostName long.grid\nMatch final host long.grid\n  User finaluser\nHost long.grid\n  Port 7\n";
    let mut memory = with_config(config, "");
    let resolved = go(&mut memory, "short");
    assert_eq!(resolved.user, known("finaluser"));
    // Host lines match the resolved name in the final pass.
    assert_eq!(resolved.port, known("7"));
}

#[test]
fn match_forms_and_passes() {
    let config = "Match host=DB.*,!db.old originalhost=db*\n  User eq\nHost db.new\n  Port 1\n";
    let mut memory = with_config(config, "");
    assert_eq!(go(&mut memory, "db.new").user, known("eq"));
    assert_eq!(go(&mut memory, "db.old").user, known("me"));
    // `canonical` alone asks for no second pass, so its block never applies.
    let mut memory = with_config("Match canonical\n  User c\n", "");
    assert_eq!(go(&mut memory, "a").user, known("me"));
    // In the final pass a HostName can no longer change the name.
    let config = "Host a\n  User u\nMatch final\n  HostName late\n  Port 3\n";
    let mut memory = with_config(config, "");
    let resolved = go(&mut memory, "a");
    assert_eq!((resolved.hostname, resolved.port), (known("a"), known("3")));
    // A Match with an unknown attribute, or none, makes ssh refuse the file.
    let mut memory = with_config("Match sometime x\n  User v\n", "");
    assert_eq!(go(&mut memory, "a").user, Value::Unknown);
}

#[test]
fn include_paths_with_tokens_are_unknown() {
    let mut memory = with_config("Host *\n  Port 5\nInclude ~/%h.conf\n", "");
    let resolved = go(&mut memory, "a");
    assert_eq!(
        (resolved.port, resolved.hostname),
        (known("5"), Value::Unknown)
    );
}

#[test]
fn include_globs_relative_to_the_right_directory() {
    let mut memory = with_config(
        "Include config.d/*\nHost *\n  HostName late\n",
        "Include sys.d/*.conf\n",
    );
    memory.files.insert(
        format!("{HOME}/.ssh/config.d/b"),
        "Host stash\n HostName vault\n".into(),
    );
    memory.files.insert(
        format!("{HOME}/.ssh/config.d/a"),
        "Host stash\n HostName first-file\n".into(),
    );
    memory
        .files
        .insert("/etc/ssh/sys.d/x.conf".into(), "Host *\n Port 99\n".into());
    let resolved = go(&mut memory, "stash");
    assert_eq!(resolved.hostname, known("first-file"));
    assert_eq!(resolved.port, known("99"));
    assert_eq!(go(&mut memory, "y").hostname, known("late"));
}

#[test]
fn an_include_cycle_ends_and_leaves_later_values_unknown() {
    let mut memory = with_config(
        "Host a\n HostName early\nInclude config\nHost *\n HostName late\n",
        "",
    );
    let resolved = go(&mut memory, "a");
    assert_eq!(resolved.hostname, known("early"));
    assert_eq!(go(&mut memory, "b").hostname, Value::Unknown);
    assert!(memory.reads < 40, "reads {}", memory.reads);
}

#[test]
fn an_unreadable_include_makes_later_values_unknown() {
    let mut memory = with_config("Host *\n User u\nInclude other\n", "");
    memory
        .files
        .insert(format!("{HOME}/.ssh/other"), "<unreadable>".into());
    let resolved = go(&mut memory, "a");
    assert_eq!(resolved.user, known("u"));
    assert_eq!(resolved.hostname, Value::Unknown);
}

#[test]
fn a_broken_line_makes_the_rest_unknown() {
    let mut memory = with_config("Host a\n HostName \"open\n", "");
    assert_eq!(go(&mut memory, "a").hostname, Value::Unknown);
}

#[test]
fn command_line_options_come_first_and_f_replaces_the_defaults() {
    let mut memory = with_config("Host *\n HostName from-user-config\n", "");
    memory
        .files
        .insert("/tmp/alt".into(), "Host *\n HostName from-f\n".into());
    let context = Context {
        home: HOME,
        local_user: None,
    };
    let destination = parse_destination("a", false).unwrap();
    let with_f = sources(HOME, vec![], Some("/tmp/alt".into()));
    assert_eq!(
        resolve(&with_f, &destination, &context, &mut memory).hostname,
        known("from-f")
    );
    let with_o = sources(HOME, vec!["HostName=from-o".into()], None);
    let resolved = resolve(&with_o, &destination, &context, &mut memory);
    assert_eq!(resolved.hostname, known("from-o"));
    assert_eq!(resolved.user, Value::Unknown);
}

#[test]
fn canonicalization_makes_the_name_unknown() {
    let mut memory = with_config("CanonicalizeHostname yes\nCanonicalDomains grid\n", "");
    assert_eq!(go(&mut memory, "db").hostname, Value::Unknown);
}
