//! Arithmetic: expected values, as bash 5.2 gives them.

use crate::bash_eval::Value;
use crate::bash_eval::arith::{Outcome, eval_int, evaluate};

fn vars(name: &str) -> Option<Value> {
    match name {
        "a" => Some(Value::known("3")),
        "expr" => Some(Value::known("a*2+1")),
        "empty" => Some(Value::known("")),
        "loop" => Some(Value::known("loop+1")),
        "unknown" => Some(Value::Unknown),
        _ => None,
    }
}

fn e(expr: &str) -> Option<i64> {
    eval_int(expr, &vars)
}

#[test]
fn operators_and_precedence() {
    assert_eq!(e("0+1"), Some(1));
    assert_eq!(e("1 + 2 * 3"), Some(7));
    assert_eq!(e("-2**2"), Some(4));
    assert_eq!(e("2**3**2"), Some(512));
    assert_eq!(e("7 / 2, 7 % -3"), Some(1));
    assert_eq!(e("1 < 2 && 3 >= 3 || 0"), Some(1));
    assert_eq!(e("~0 ^ 5 | 2 & 3"), Some(-6));
    assert_eq!(e("0 ? 1 : 2 ? 3 : 4"), Some(3));
    assert_eq!(e("!5 + !0"), Some(1));
    assert_eq!(e(""), Some(0));
    assert_eq!(e(" ( 1 + 2 ) * 3 "), Some(9));
}

#[test]
fn literals_in_every_base() {
    assert_eq!(e("0x1F"), Some(31));
    assert_eq!(e("017"), Some(15));
    assert_eq!(e("2#101"), Some(5));
    assert_eq!(e("36#zz"), Some(1295));
    assert_eq!(e("64#_@"), Some(63 * 64 + 62));
    assert_eq!(e("08"), None);
    assert_eq!(e("3#3"), None);
    assert_eq!(e("65#1"), None);
}

#[test]
fn sixty_four_bit_wrapping() {
    assert_eq!(e("9223372036854775807 + 1"), Some(i64::MIN));
    assert_eq!(e("9223372036854775808"), Some(i64::MIN));
    assert_eq!(e("(-9223372036854775807-1) / -1"), Some(i64::MIN));
    assert_eq!(e("(-9223372036854775807-1) % -1"), Some(0));
    assert_eq!(e("1 << 64"), Some(1));
    assert_eq!(e("1 << -1"), Some(i64::MIN));
    assert_eq!(e("3 ** 40"), Some(3i64.wrapping_pow(40)));
}

#[test]
fn variables_are_expressions() {
    assert_eq!(e("a + 1"), Some(4));
    assert_eq!(e("expr * 2"), Some(14));
    assert_eq!(e("unset + empty"), Some(0));
    assert_eq!(e("loop"), None);
    assert_eq!(e("unknown + 1"), None);
    assert_eq!(e("0 && unknown"), Some(0));
}

#[test]
fn errors_and_changes_are_unknown() {
    assert_eq!(e("1 / 0"), None);
    assert_eq!(e("0 && 1 / 0"), Some(0));
    assert_eq!(e("2 ** -1"), None);
    assert_eq!(e("0 && 2 ** -1"), None);
    for expr in [
        "a = 1", "a += 1", "a++", "++a", "a[1]", "1 +", "(1", "1 2", "'1'",
    ] {
        assert_eq!(e(expr), None, "{expr}");
    }
}

#[test]
fn deep_or_costly_expressions_are_unknown_not_a_crash() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(e(&deep), None);
    assert_eq!(e(&"-".repeat(100_000)), None);
    assert_eq!(e(&"1?".repeat(100_000)), None);
    assert_eq!(e(&format!("{}2", "2**".repeat(100_000))), None);
    // Each variable names the next twice: 2^30 reads unless the budget stops it.
    let doubling = |name: &str| {
        let level: usize = name.strip_prefix('v')?.parse().ok()?;
        Some(Value::Known(if level < 30 {
            format!("v{0} + v{0}", level + 1)
        } else {
            "1".into()
        }))
    };
    assert_eq!(eval_int("v0", &doubling), None);
    assert_eq!(eval_int("v25", &doubling), Some(32));
}

fn changes(expr: &str) -> Option<Outcome> {
    evaluate(expr, &vars)
}

fn outcome(value: i64, assigned: &[(&str, i64)]) -> Option<Outcome> {
    let assigned = assigned.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    Some(Outcome { value, assigned })
}

#[test]
fn assignments_are_evaluated_and_reported() {
    assert_eq!(changes("i = 5"), outcome(5, &[("i", 5)]));
    assert_eq!(changes("a += 2, a * 10"), outcome(50, &[("a", 5)]));
    assert_eq!(changes("x = y = 2"), outcome(2, &[("y", 2), ("x", 2)]));
    assert_eq!(changes("a++ + a"), outcome(7, &[("a", 4)]));
    assert_eq!(changes("--a"), outcome(2, &[("a", 2)]));
    assert_eq!(changes("a <<= 2"), outcome(12, &[("a", 12)]));
    // A later read of an expression variable sees the change.
    assert_eq!(changes("a = 1, expr"), outcome(3, &[("a", 1)]));
    // Nothing is assigned where bash does not evaluate.
    assert_eq!(changes("0 && (i = 1)"), outcome(0, &[]));
    // eval_int refuses what assigns: a caller ignoring the change would read stale values.
    assert_eq!(e("i = 5"), None);
}

#[test]
fn assignments_bash_rejects_or_reads_otherwise_are_unknown() {
    for expr in [
        "a /= 0",
        "unknown = 1",
        "1 = 2",
        "1 + a = 2",
        "++5",
        "a[0] = 1",
        "loop = 1",
    ] {
        assert_eq!(changes(expr), None, "{expr}");
    }
}
