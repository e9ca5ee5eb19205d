//! How interpreter code's string literals are read.
use super::interpreter::string_literals;

fn literals(code: &str) -> Vec<String> {
    string_literals(code, &[])
}

#[test]
fn joined_literals_are_also_one_value() {
    assert_eq!(
        literals(r#"run(["s" + "sh", "db"])"#),
        ["s", "sh", "db", "ssh", "db"]
    );
    assert_eq!(literals(r#"system("ss" . "h")"#), ["ss", "h", "ssh"]);
    assert_eq!(literals(r#"os.execute("ss" .. "h")"#), ["ss", "h", "ssh"]);
    assert_eq!(literals(r#"os.system("ss" "h")"#), ["ss", "h", "ssh"]);
}

#[test]
fn nothing_is_added_when_nothing_is_joined() {
    assert_eq!(literals(r#"print("a", "b")"#), ["a", "b"]);
    assert_eq!(
        literals(r#"print(", ".join(["a", "b"]))"#),
        [", ", "a", "b"]
    );
}

#[test]
fn joined_values_are_bounded_in_number_and_size() {
    let code = format!("os.system({})", vec![r#""a" + x"#; 3000].join(" + "));
    let literals = string_literals(&code, std::slice::from_ref(&code));
    let joined = literals.len() - 3000;
    assert!(joined <= 256, "{joined} joined values");
    let bytes: usize = literals[3000..].iter().map(String::len).sum();
    assert!(bytes <= 64 * 1024, "{bytes} bytes");
}

#[test]
fn a_part_that_is_not_a_literal_is_each_literal_and_argument_in_turn() {
    let got = string_literals(r#"h = "db"; os.system("ssh " + h)"#, &["x".into()]);
    assert_eq!(got, ["db", "ssh ", "db", "ssh db", "ssh ssh ", "ssh x"]);
    // A name before the literal: the run starts with it.
    let got = literals(r#"h = "db"; os.system(h + " uptime")"#);
    assert!(got.contains(&"db uptime".to_string()), "{got:?}");
}
