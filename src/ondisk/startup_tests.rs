use super::*;
use crate::ondisk::ssh::tests_memory::Memory;

const HOME: &str = "/home/me";

fn known(text: &str) -> Value {
    Value::Known(text.into())
}

fn alias(text: &str, name: &str) -> Option<Value> {
    let scan = scan(text, HOME);
    scan.aliases
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

fn function(text: &str, name: &str) -> Option<Value> {
    let scan = scan(text, HOME);
    scan.functions
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

#[test]
fn alias_quoting_follows_bash() {
    assert_eq!(alias("alias b='ssh build'", "b"), Some(known("ssh build")));
    assert_eq!(alias("alias x=\"a 'b'\" y=c", "x"), Some(known("a 'b'")));
    assert_eq!(alias("alias y='it'\\''s'", "y"), Some(known("it's")));
    assert_eq!(alias("alias z=ssh\\ db", "z"), Some(known("ssh db")));
    assert_eq!(alias("alias -- w='ls'", "w"), Some(known("ls")));
    assert_eq!(
        alias("alias h=\"ssh $HOME\"", "h"),
        Some(known("ssh /home/me"))
    );
    assert_eq!(alias("alias u=\"ssh $TARGET\"", "u"), Some(Value::Unknown));
    assert_eq!(alias("alias q", "q"), None);
}

#[test]
fn function_bodies_are_cut_by_the_parser() {
    assert_eq!(
        function("deploy() {\n    ssh web \"$@\"\n}\n", "deploy"),
        Some(known("{\n    ssh web \"$@\"\n}"))
    );
    assert_eq!(
        function("function g { echo '}'; }", "g"),
        Some(known("{ echo '}'; }"))
    );
    assert_eq!(
        function("function h() ( cd /x && ssh db )", "h"),
        Some(known("( cd /x && ssh db )"))
    );
    let heredoc = "f() {\n  ssh db <<'EOF'\n}\nEOF\n  echo done\n}\nafter() { :; }\n";
    assert_eq!(
        function(heredoc, "f"),
        Some(known("{\n  ssh db <<'EOF'\n}\nEOF\n  echo done\n}"))
    );
    assert_eq!(function(heredoc, "after"), Some(known("{ :; }")));
}

#[test]
fn nested_and_conditional_functions_are_found() {
    let text = "outer() {\n  inner() { ssh db; }\n  inner\n}\n\
                if [ -n \"$X\" ]; then cond() { ssh a; }; fi\n[ -f x ] && short() { ls; }\n";
    assert_eq!(function(text, "inner"), Some(known("{ ssh db; }")));
    assert!(
        matches!(function(text, "outer"), Some(Value::Known(body)) if body.contains("inner()"))
    );
    assert_eq!(function(text, "cond"), Some(known("{ ssh a; }")));
    assert_eq!(function(text, "short"), Some(known("{ ls; }")));
}

#[test]
fn sources_are_literal_paths_or_unknown() {
    let scan = scan(
        "[ -f ~/.x ] && . ~/.x\nsource /etc/y\n. ./rel\nsource name\n. \"$HOME/z\"\n",
        HOME,
    );
    let expected = [
        known("/home/me/.x"),
        known("/etc/y"),
        Value::Unknown,
        Value::Unknown,
        known("/home/me/z"),
    ];
    assert_eq!(scan.sources, expected);
}

#[test]
fn a_heredoc_closing_the_body_and_a_redirect_stay_in_it() {
    let text = "f() {\n  cat <<EOF\n}\nEOF\n} > /tmp/log\ng() { :; }\n";
    assert_eq!(
        function(text, "f"),
        Some(known("{\n  cat <<EOF\n}\nEOF\n} > /tmp/log"))
    );
    assert_eq!(function(text, "g"), Some(known("{ :; }")));
}

#[test]
fn an_unparsable_file_is_incomplete() {
    assert!(!scan("f() { echo", HOME).complete);
    assert!(scan("alias a=b", HOME).complete);
    assert!(!scan("eval \"$(dircolors -b)\"", HOME).complete);
    assert!(scan("eval 'alias k=kubectl'", HOME).complete);
    assert_eq!(alias("eval 'alias k=kubectl'", "k"), Some(known("kubectl")));
    assert_eq!(alias("bash -c 'alias c=elsewhere'", "c"), None);
}

#[test]
fn files_sourced_are_followed_and_conflicts_are_unknown() {
    let mut memory = Memory::default();
    let file = |name: &str| format!("{HOME}/{name}");
    memory.files.insert(
        file(".bashrc"),
        ". ~/lib/one\nalias same='ls'\nalias twice='a'\n".into(),
    );
    memory
        .files
        .insert(file("lib/one"), "alias deep='ssh db'\n. ~/lib/two\n".into());
    memory.files.insert(
        file("lib/two"),
        "alias twice='b'\nalias same='ls'\n. ~/lib/one\n".into(),
    );
    let definitions = read(HOME, &mut memory);
    assert_eq!(definitions.aliases["deep"], known("ssh db"));
    assert_eq!(definitions.aliases["same"], known("ls"));
    assert_eq!(definitions.aliases["twice"], Value::Unknown);
    assert!(definitions.complete);
    memory.files.insert(file(".profile"), "<unreadable>".into());
    assert!(!read(HOME, &mut memory).complete);
}

#[test]
fn unalias_and_redefinition_make_a_name_unknown() {
    let mut memory = Memory::default();
    memory.files.insert(
        format!("{HOME}/.bashrc"),
        "alias b='ssh build'\nunalias b\nf() { a; }\nf() { b; }\n".into(),
    );
    let definitions = read(HOME, &mut memory);
    assert_eq!(definitions.aliases["b"], Value::Unknown);
    assert_eq!(definitions.functions["f"], Value::Unknown);
}
