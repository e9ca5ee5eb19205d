//! The walk's values against bash's (issue 13): computed exactly, or unknown.

use super::*;

fn commands(source: &str) -> Vec<Vec<String>> {
    let script = parse(source, 0, &HashMap::new()).expect("parses");
    script.commands.into_iter().map(|c| c.words).collect()
}

/// The words of every `ssh` command the source runs.
fn ssh(source: &str) -> Vec<Vec<String>> {
    commands(source)
        .into_iter()
        .filter(|c| c.first().is_some_and(|p| p == "ssh"))
        .map(|c| c[1..].to_vec())
        .collect()
}

fn w(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

const U: &str = "\0";

#[test]
fn sequence_braces_are_expanded_whole() {
    assert_eq!(ssh("ssh node-0{1..2}"), vec![w(&["node-01", "node-02"])]);
    assert_eq!(ssh("ssh atla{s..s}"), vec![w(&["atlas"])]);
    assert_eq!(ssh("ssh h{08..10..2}"), vec![w(&["h08", "h10"])]);
    // The 65th alternative is kept, not cut at 64.
    let list: Vec<String> = (1..=64).map(|i| format!("h{i}")).collect();
    let found = ssh(&format!("ssh {{{},atlas}}", list.join(",")));
    assert_eq!(found[0].last().unwrap(), "atlas");
    // Past the bound the word is unknown, never its first words.
    assert_eq!(ssh("ssh x{1..99999}"), vec![w(&[U])]);
    // Braces first, then the variable: a comma in the value is text.
    assert_eq!(ssh("x=b,c; ssh {a,$x}"), vec![w(&["a", "b,c"])]);
    assert_eq!(ssh("ssh '{a,b}'"), vec![w(&["{a,b}"])]);
}

#[test]
fn parameter_operations_are_computed() {
    assert_eq!(ssh("h=node-00; ssh ${h/00/01}"), vec![w(&["node-01"])]);
    assert_eq!(ssh("h=atlas.evil; ssh ${h%.evil}"), vec![w(&["atlas"])]);
    assert_eq!(
        ssh("h=atlas.example.com; ssh ${h%%.*}"),
        vec![w(&["atlas"])]
    );
    assert_eq!(ssh("h=x-atlas; ssh ${h#*-}"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=atlasXYZ; ssh ${h:0:5}"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=ATLAS; ssh ${h,,}"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=atlas; ssh ${h^^}"), vec![w(&["ATLAS"])]);
    assert_eq!(ssh("h=atlas; ssh n${#h}"), vec![w(&["n5"])]);
    assert_eq!(ssh("h=a-t; ssh ${h//-/}las"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=xtlas; ssh ${h/#x/a}"), vec![w(&["atlas"])]);
    assert_eq!(ssh("a=(orion atlas); ssh ${a[1]}"), vec![w(&["atlas"])]);
    // Not known: unknown, never the unchanged value.
    assert_eq!(ssh("ssh ${h%.evil}"), vec![w(&[U])]);
}

#[test]
fn arithmetic_is_computed() {
    assert_eq!(ssh("ssh node-0$((0+1))"), vec![w(&["node-01"])]);
    assert_eq!(ssh("i=1; ((i++)); ssh node-0$i"), vec![w(&["node-02"])]);
    assert_eq!(ssh("i=4; ssh node-$((i*2))"), vec![w(&["node-8"])]);
    assert_eq!(ssh("ssh node-$((x+1))"), vec![w(&["node-\0"])]);
    assert_eq!(ssh("x=atlas; ssh $x{1,2}"), vec![w(&["\u{0}1", "\u{0}2"])]);
}

#[test]
fn printf_and_echo_build_words() {
    assert_eq!(ssh(r"printf -v h 'atl%s' as; ssh $h"), vec![w(&["atlas"])]);
    assert_eq!(ssh(r"ssh $(printf 'node-%02d' 7)"), vec![w(&["node-07"])]);
    assert_eq!(ssh(r"ssh $(printf '\x61tlas\n')"), vec![w(&["atlas"])]);
    assert_eq!(ssh(r"ssh $(echo -e '\x61tlas')"), vec![w(&["atlas"])]);
    assert_eq!(
        commands(r"$(printf '\163sh') atlas")[1],
        w(&["ssh", "atlas"])
    );
}

#[test]
fn arithmetic_commands_run_their_substitutions() {
    assert_eq!(
        ssh("(( $(ssh atlas id -u) > 0 ))"),
        vec![w(&["atlas", "id", "-u"])]
    );
    assert_eq!(
        ssh("for (( i = $(ssh atlas nproc); i > 0; i-- )); do :; done"),
        vec![w(&["atlas", "nproc"])]
    );
    assert_eq!(
        ssh("echo $(( $(ssh atlas nproc) * 2 ))"),
        vec![w(&["atlas", "nproc"])]
    );
}

#[test]
fn function_arguments_reach_the_body() {
    let called = |s: &str| {
        ssh(s)
            .into_iter()
            .filter(|c| !c.contains(&U.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        called(r#"f() { ssh "$@"; }; f atlas uptime"#),
        vec![w(&["atlas", "uptime"])]
    );
    assert_eq!(
        called(r#"f() { ssh "$1" uptime; }; f atlas"#),
        vec![w(&["atlas", "uptime"])]
    );
    assert_eq!(called(r#"f() { ssh $*; }; f atlas"#), vec![w(&["atlas"])]);
    assert_eq!(
        called(r#"f() { shift; ssh "$1"; }; f x atlas"#),
        vec![w(&["atlas"])]
    );
    assert_eq!(
        called(r#"g() { ssh "$1"; }; f() { g "$2"; }; f x atlas"#),
        vec![w(&["atlas"])]
    );
    // Recursion is bounded, and then unverifiable.
    let script = parse("f() { f; }; f", 0, &HashMap::new()).unwrap();
    assert!(script.incomplete.is_some());
    // A call tree is bounded in all, not only in depth.
    let script = parse("f() { f;f;f;f;f;f;f;f;f;f; }; f", 0, &HashMap::new()).unwrap();
    assert!(script.incomplete.is_some());
}

#[test]
fn values_follow_program_order_and_control_flow() {
    assert_eq!(ssh("h=orion; h=atlas; ssh $h"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=at; h+=las; ssh $h"), vec![w(&["atlas"])]);
    assert_eq!(ssh("set -- x atlas; shift; ssh $1"), vec![w(&["atlas"])]);
    // A branch may or may not run: both values.
    assert_eq!(
        ssh("h=orion; if x; then h=atlas; fi; ssh $h"),
        vec![w(&["orion"]), w(&["atlas"])]
    );
    assert_eq!(
        ssh("h=orion; x && h=atlas; ssh $h"),
        vec![w(&["orion"]), w(&["atlas"])]
    );
    // Assigned only in a branch: the value before may come from the environment.
    assert_eq!(
        ssh("if x; then h=atlas; fi; ssh $h"),
        vec![w(&[U]), w(&["atlas"])]
    );
    // A subshell's assignment stays in it.
    assert_eq!(ssh("h=atlas; (h=orion); ssh $h"), vec![w(&["atlas"])]);
    assert_eq!(ssh("(h=orion); ssh $h"), vec![w(&[U])]);
    assert_eq!(
        ssh("a=(atlas); ( a=(orion) ); ssh ${a[0]}"),
        vec![w(&["atlas"])]
    );
    assert_eq!(ssh("h=atlas; x=$(h=orion); ssh $h"), vec![w(&["atlas"])]);
    assert_eq!(ssh("h=atlas; echo | h=orion; ssh $h"), vec![w(&["atlas"])]);
    // A function's local variable ends with the call.
    assert_eq!(
        ssh("h=atlas; f() { local h=orion; }; f; ssh $h"),
        vec![w(&["atlas"])]
    );
    assert_eq!(
        ssh("f() { h=atlas; }; h=orion; f; ssh $h"),
        vec![w(&["atlas"])]
    );
    // A counter in a loop may hold any count.
    assert!(ssh("for ((i=0; i<3; i++)); do :; done; ssh node-$i").contains(&w(&["node-\0"])));
    // A loop building a value from itself: unknown among its values.
    assert!(ssh("h=a; for i in 1 2; do h=$h-x; done; ssh $h").contains(&w(&[U])));
}
