//! How a wrapper's words are read: once, by its own table, its options ending at the
//! program it runs (decision 0063).
use super::{Step, unwrap};
use crate::rules::Rules;
use std::collections::HashMap;

/// What `source` comes to: `run` for the program run outright, `spec` for each speculative
/// reading's, `sh` for shell text.
fn steps(source: &str) -> Vec<String> {
    let rules = Rules::load(None).unwrap();
    let script = crate::shell::parse(source, 0, &HashMap::new()).unwrap();
    let mut out = Vec::new();
    for command in script.commands {
        unwrap(&rules, command, &mut out);
    }
    fn say(step: &Step, into: &mut Vec<String>, prefix: &str) {
        match step {
            Step::Run(c) => into.push(format!("{prefix}run {}", c.words.join(" "))),
            Step::Shell { source, .. } => into.push(format!("{prefix}sh {source}")),
            Step::Speculative(steps) => steps.iter().for_each(|s| say(s, into, "spec ")),
            Step::Wrapper(c) => into.push(format!("{prefix}wrapper {}", c.words.join(" "))),
            Step::UnknownProgram(_) | Step::UnknownCode(_) => into.push("unknown".into()),
        }
    }
    let mut said = Vec::new();
    out.iter().for_each(|s| say(s, &mut said, ""));
    said
}

#[test]
fn the_programs_options_are_the_programs() {
    assert_eq!(
        steps("sudo ssh -v atlas uptime"),
        ["run ssh -v atlas uptime"]
    );
    assert_eq!(steps("doas ssh -l root atlas"), ["run ssh -l root atlas"]);
    assert_eq!(steps("run0 ssh -v atlas"), ["run ssh -v atlas"]);
    assert_eq!(steps("command ssh -v atlas"), ["run ssh -v atlas"]);
    assert_eq!(steps("sudo journalctl -eu x"), ["run journalctl -eu x"]);
    // The wrapper's own, before the program, still are.
    assert!(steps("sudo -l ssh atlas").is_empty());
    assert!(steps("command -v ssh").is_empty());
    assert_eq!(steps("sudo -u root -E ssh atlas"), ["run ssh atlas"]);
}

#[test]
fn an_option_the_table_does_not_know_is_read_both_ways() {
    assert_eq!(
        steps("sudo -Z x ssh atlas"),
        ["spec run ssh atlas", "run x ssh atlas"]
    );
    // An inert option only one reading sees ends only that reading.
    assert_eq!(steps("sudo -Z -l ssh atlas"), ["spec run ssh atlas"]);
    // A table that lists no flags knows nothing it does not list: one reading.
    assert_eq!(steps("faketime -Q 1 ssh atlas"), ["run ssh atlas"]);
}

#[test]
fn values_attached_bundled_abbreviated() {
    assert_eq!(steps("sudo -uroot ssh atlas"), ["run ssh atlas"]);
    assert_eq!(steps("timeout -s9 5 ssh atlas"), ["run ssh atlas"]);
    assert_eq!(steps("timeout --sig=KILL 5 ssh atlas"), ["run ssh atlas"]);
    assert_eq!(steps("timeout --kill 3 5 ssh atlas"), ["run ssh atlas"]);
    assert_eq!(
        steps("nice -n5 ionice -c2 -n7 ssh atlas").last().unwrap(),
        "run ssh atlas"
    );
    // `sudo -h` alone is help; `-hHOST` is a host.
    assert!(steps("sudo -h").is_empty());
    assert_eq!(steps("sudo -hbox ssh atlas"), ["run ssh atlas"]);
    // `sudo -k CMD` runs CMD.
    assert_eq!(steps("sudo -k ssh atlas"), ["run ssh atlas"]);
}

#[test]
fn shell_strings_as_each_wrapper_makes_them() {
    assert_eq!(
        steps("watch -n 5 ssh atlas uptime"),
        ["sh ssh atlas uptime"]
    );
    assert_eq!(steps("watch -x ssh atlas"), ["run ssh atlas"]);
    assert_eq!(steps("flock /tmp/l -c 'ssh atlas'"), ["sh ssh atlas"]);
    assert_eq!(steps("flock -w 5 /tmp/l ssh atlas"), ["run ssh atlas"]);
    assert_eq!(steps("sg staff -c 'ssh atlas'"), ["sh ssh atlas"]);
    assert_eq!(steps("sg staff 'ssh atlas'"), ["sh ssh atlas"]);
    assert_eq!(steps("runuser -u bob -- ssh atlas"), ["run ssh atlas"]);
    // `runuser USER` is su's form: the operands go to the user's shell.
    assert!(steps("runuser ssh atlas").is_empty());
    assert_eq!(steps("su bob -c 'ssh atlas'"), ["sh ssh atlas"]);
}

#[test]
fn processes_already_running_run_nothing_new() {
    assert!(steps("ionice -p 42").is_empty());
    assert!(steps("taskset -p 3 42").is_empty());
    assert!(steps("chrt -m").is_empty());
}

#[test]
fn a_wrapper_run_by_a_wrapper_is_checked_as_typed() {
    assert_eq!(
        steps("nice env -C /tmp rm f"),
        ["wrapper env -C /tmp rm f", "run rm f"]
    );
}

#[test]
fn pv_and_ts_are_no_wrappers() {
    assert_eq!(steps("pv ssh"), ["run pv ssh"]);
    assert_eq!(steps("ts ssh"), ["run ts ssh"]);
}
