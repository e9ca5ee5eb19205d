//! `mesh-guard audit` on a real record: filters by kind (repeated or comma-separated), rule
//! and target, the whole command when stdout is not a terminal, and errors echoing the bad
//! value (issue 15).

mod common;
use common::*;

fn record(dir: &Scratch, commands: &[&str]) {
    for c in commands {
        let out = run(
            &strs(&with_paths(
                &example_catalog(),
                &dir.path("a.db"),
                &["hook"],
            )),
            &[],
            &bash_event(c),
        );
        assert_eq!(out.code, 2, "{c}: {}", out.stderr);
    }
}

fn audit(dir: &Scratch, args: &[&str]) -> Output {
    let mut all = vec!["audit"];
    all.extend(args);
    run(&all, &[("MESH_GUARD_DB", &dir.path("a.db"))], b"")
}

const LONG: &str = "ssh atlas 'journalctl -u mesh-controller --since yesterday --until today --no-pager | grep -i error | tail -n 200'";

#[test]
fn filters_and_the_whole_command_off_a_terminal() {
    let dir = Scratch::new("audit-cli");
    record(&dir, &[LONG, "docker -H ssh://orion ps"]);
    let all = audit(&dir, &[]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert!(all.stdout.contains(LONG), "{}", all.stdout);
    assert!(all.stdout.lines().next().unwrap().contains("REASON"));

    let by_target = audit(&dir, &["--target", "orion"]);
    assert_eq!(by_target.stdout.lines().count(), 2, "{}", by_target.stdout);
    assert!(by_target.stdout.contains("docker -H ssh://orion ps"));

    let by_rule = audit(&dir, &["--rule", "remote-access"]);
    assert_eq!(by_rule.stdout.lines().count(), 2, "{}", by_rule.stdout);
    assert!(by_rule.stdout.contains(LONG));

    for kinds in [
        &["--kind", "refusal,override"][..],
        &["--kind", "override", "--kind", "refusal"],
    ] {
        let out = audit(&dir, kinds);
        assert_eq!(out.stdout.lines().count(), 3, "{kinds:?}: {}", out.stdout);
    }
    assert_eq!(
        audit(&dir, &["--kind", "override"]).stdout,
        "no recorded events match\n"
    );
}

#[test]
fn a_bad_kind_or_time_is_echoed() {
    let dir = Scratch::new("audit-cli-bad");
    record(&dir, &["ssh atlas uptime"]);
    let out = audit(&dir, &["--kind", "refusal,refusals"]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        "error: unknown kind `refusals` (expected refusal, would-refuse, override, override-attempt, session-start, gap or checkpoint)\n"
    );
    let out = audit(&dir, &["--since", "yesterdayish"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("yesterdayish"), "{}", out.stderr);
    // A rule no refusal carries (the forge's account passes) is named as such, not an empty
    // listing; every rule a refusal carries is accepted.
    let out = audit(&dir, &["--rule", "forge-account"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("no refusal carries the rule `forge-account`")
            && out.stderr.contains("self-override"),
        "{}",
        out.stderr
    );
    for rule in mesh_guard::rule::Rule::ALL {
        let out = audit(&dir, &["--rule", rule.id()]);
        assert_eq!(out.code, 0, "{}: {}", rule.id(), out.stderr);
    }
}

#[test]
fn missing_as_csv() {
    let dir = Scratch::new("audit-cli-missing");
    record(&dir, &["ssh atlas uptime"]);
    let out = audit(&dir, &["missing", "--format", "csv"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.starts_with("shape,refusals,would_refuse\r\n"),
        "{}",
        out.stdout
    );
}
