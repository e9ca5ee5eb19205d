//! Backslash escapes in their three dialects, as bash 5.2 reads them.

use crate::bash_eval::Value;
use crate::bash_eval::escape::{Dialect, ansi_c, decode, echo_e};

fn k(s: &str) -> Value {
    Value::known(s)
}

#[test]
fn ansi_c_quoting() {
    assert_eq!(ansi_c(r"\x73\163h"), k("ssh"));
    assert_eq!(ansi_c(r"\u0041\U00000042"), k("AB"));
    assert_eq!(ansi_c(r"\1234"), k("S4"));
    assert_eq!(ansi_c(r#"\'\"\?\z\x"#), k(r#"'"?\z\x"#));
    assert_eq!(ansi_c(r"\cA\ca\c?\c"), k("\u{1}\u{1}\u{7f}\\c"));
    assert_eq!(ansi_c(r"\c\\x\c\r"), k("\u{1c}x\u{1c}r"));
    assert_eq!(ansi_c(r"\e[0m"), k("\u{1b}[0m"));
}

#[test]
fn echo_e_octal_needs_a_leading_zero_and_c_stops() {
    assert_eq!(echo_e(r"\0101\101").text, k(r"A\101"));
    let stopped = echo_e(r"ss\ch");
    assert_eq!((stopped.text, stopped.stop), (k("ss"), true));
    assert_eq!(echo_e(r#"\""#).text, k(r#"\""#));
}

#[test]
fn a_printf_format_keeps_backslash_c() {
    assert_eq!(decode(r"a\cb\n", Dialect::Format).text, k("a\\cb\n"));
}

#[test]
fn nul_invalid_bytes_and_locale_characters_are_unknown() {
    assert_eq!(ansi_c(r"a\0b"), Value::Unknown);
    assert_eq!(ansi_c(r"\xff"), Value::Unknown);
    assert_eq!(ansi_c(r"\u00e9"), Value::Unknown);
    assert_eq!(ansi_c(r"\c@"), Value::Unknown);
}
