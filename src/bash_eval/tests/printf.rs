//! printf: expected output, as bash 5.2's builtin gives it.

use crate::bash_eval::Value;
use crate::bash_eval::printf::printf;

fn p(format: &str, args: &[&str]) -> Value {
    let args: Vec<Value> = args.iter().map(|a| Value::known(*a)).collect();
    printf(format, &args)
}

fn k(s: &str) -> Value {
    Value::known(s)
}

#[test]
fn strings_and_escapes_build_names() {
    assert_eq!(p("at%s", &["las"]), k("atlas"));
    assert_eq!(p(r"ss\x68", &[]), k("ssh"));
    assert_eq!(p(r"\101\u0041\n", &[]), k("AA\n"));
    assert_eq!(p(r"a\cb", &[]), k(r"a\cb"));
    assert_eq!(p("%%%s", &["x"]), k("%x"));
}

#[test]
fn the_format_is_reused_while_arguments_remain() {
    assert_eq!(p("%s\n", &["a", "b"]), k("a\nb\n"));
    assert_eq!(p("%s-%s|", &["a", "b", "c"]), k("a-b|c-|"));
    assert_eq!(p("plain", &["x", "y"]), k("plain"));
}

#[test]
fn numbers_flags_width_precision() {
    assert_eq!(p("%d %i", &["0x1f", "010"]), k("31 8"));
    assert_eq!(
        p("%05d|%-4d|%+d|% d", &["-3", "7", "7", "7"]),
        k("-0003|7   |+7| 7")
    );
    assert_eq!(
        p("%x %X %#x %o %#o", &["255", "255", "255", "8", "8"]),
        k("ff FF 0xff 10 010")
    );
    assert_eq!(
        p("%.3d|%.0d|%u", &["5", "0", "-1"]),
        k("005||18446744073709551615")
    );
    assert_eq!(p("%*d|%-*d|", &["4", "1", "3", "2"]), k("   1|2  |"));
    assert_eq!(p("%d", &["'A"]), k("65"));
    assert_eq!(p("%d%s", &[]), k("0"));
    assert_eq!(
        p("%5s|%-5s|%.2s", &["ab", "ab", "abc"]),
        k("   ab|ab   |ab")
    );
    assert_eq!(p("%c", &["xyz"]), k("x"));
}

#[test]
fn b_decodes_its_argument_and_c_stops_everything() {
    assert_eq!(p("%b", &[r"ss\x68"]), k("ssh"));
    assert_eq!(p("%b", &[r"\0101"]), k("A"));
    assert_eq!(p("%b|%s", &[r"a\cb", "x"]), k("a"));
}

#[test]
fn what_bash_rejects_or_formats_otherwise_is_unknown() {
    assert_eq!(p("%d", &["abc"]), Value::Unknown);
    assert_eq!(p("%d", &["7z"]), Value::Unknown);
    assert_eq!(p("%f", &["1"]), Value::Unknown);
    assert_eq!(p("%q", &["a b"]), Value::Unknown);
    assert_eq!(p("%(%F)T", &[]), Value::Unknown);
    assert_eq!(p("%s", &[]), k(""));
    assert_eq!(printf("%s", &[Value::Unknown]), Value::Unknown);
    assert_eq!(p("%3s", &["é"]), Value::Unknown);
    assert_eq!(p("%s", &["é"]), k("é"));
    assert_eq!(p("%c", &["é"]), Value::Unknown);
    assert_eq!(p("%3c", &[]), Value::Unknown);
}
