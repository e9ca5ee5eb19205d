//! Generated arithmetic, printf formats and escapes, each evaluated here and by the real
//! bash: whenever this module gives a known value it must be bash's.

use super::differential::{CASES, compare};
use super::oracle::{Gen, available, quote};
use crate::bash_eval::{Value, arith, escape, printf};

fn expression(g: &mut Gen, depth: usize) -> String {
    let leaves: Vec<&str> = "0 1 7 -3 0x1F 017 2#101 36#zz 64#_@ 9223372036854775807 a b c d e \
        08 3#3 2 -2 -b ~1 64#_@"
        .split_whitespace()
        .collect();
    if depth == 0 || g.below(4) == 0 {
        return g.pick(&leaves).to_string();
    }
    let binary = [
        "+", "-", "*", "/", "%", "**", "<<", ">>", "<", "<=", "==", "!=", "&", "|", "^", "&&",
        "||", ",",
    ];
    match g.below(5) {
        0 => format!(
            "{}({})",
            g.pick(&["-", "!", "~", "+", ""]),
            expression(g, depth - 1)
        ),
        1 => format!(
            "{} ? {} : {}",
            expression(g, depth - 1),
            expression(g, depth - 1),
            expression(g, depth - 1)
        ),
        _ => format!(
            "{} {} {}",
            expression(g, depth - 1),
            g.pick(&binary),
            expression(g, depth - 1)
        ),
    }
}

#[test]
fn arithmetic_matches_bash() {
    if !available("arithmetic_matches_bash") {
        return;
    }
    let vars = |name: &str| match name {
        "a" => Some(Value::known("3")),
        "b" => Some(Value::known("-2")),
        "c" => Some(Value::known("a*2+1")),
        "e" => Some(Value::known("")),
        _ => None,
    };
    let mut g = Gen::new(4);
    let mut expressions: Vec<String> = (0..CASES * 2).map(|_| expression(&mut g, 3)).collect();
    // Every pair of operators, and every unary one before each: bash's precedence table,
    // which random trees reach too rarely (`-2 ** 2` is 4).
    let binary = "+ - * / % ** << >> < <= > >= == != & | ^ && || ,".split(' ');
    for op1 in binary.clone() {
        for op2 in binary.clone() {
            expressions.push(format!("7 {op1} 2 {op2} 3"));
        }
        for unary in ["-", "!", "~", "+", "- -"] {
            expressions.push(format!("{unary}2 {op1} 2"));
        }
    }
    let cases = expressions
        .into_iter()
        .map(|e| {
            let ours = arith::eval(&e, &vars);
            (
                format!("a=3 b=-2 c='a*2+1' e=; unset d; printf %s \"$(({e}))\""),
                ours.as_known().map(str::to_string),
            )
        })
        .collect();
    compare("arithmetic", 60, cases);
}

#[test]
fn printf_matches_bash() {
    if !available("printf_matches_bash") {
        return;
    }
    let pieces = [
        "ss", "%s", "%d", "%5s", "%-4d|", "%05d", "%x", "%#X", "%o", "%.2s", "%b", "%c", "%%",
        "\\n", "\\x41", "\\101", "\\t", "%*d", "%.3d", "%+i", "% d", "%u", "\\u0068", "at%s",
        "\\c", "\\q", "%-6b|", "%-05d", "%#o", "%+5d", "%.0s", "%*s|", "%.*d", "%ld", "%#x", "%X",
        "%3c", "\\0101", "\\1", "\\08", "\\x", "\\u", "\\e", "\\c%s", "\\\\", "\\\"", "%i%i",
    ];
    let args = [
        "12", "-3", "0x1f", "010", "abc", "a\\nb", "a\\cb", "'A", "", "\\x68", "\\0101", "7z",
        " 5", "-5", "0", "100%", "0X1F", "+4",
    ];
    let mut g = Gen::new(5);
    let mut runs: Vec<(String, Vec<&str>)> = (0..CASES)
        .map(|_| {
            let format: String = (0..1 + g.below(4)).map(|_| g.pick(&pieces)).collect();
            let argv: Vec<&str> = (0..g.below(4)).map(|_| g.pick(&args)).collect();
            (format, argv)
        })
        .collect();
    // The ends of the 64-bit range, apart: as a width they would print gigabytes.
    let big = ["9223372036854775807", "-9223372036854775808", "-1"];
    for conversion in ["%d", "%i", "%u", "%x", "%X", "%o", "%#x"] {
        runs.push((format!("{conversion}|"), big.to_vec()));
        runs.push((conversion.to_string(), vec!["9223372036854775808"]));
    }
    let cases = runs
        .into_iter()
        .map(|(format, argv)| {
            let values: Vec<Value> = argv.iter().map(|a| Value::known(*a)).collect();
            let ours = printf::printf(&format, &values);
            let quoted: Vec<String> = argv.iter().map(|a| quote(a)).collect();
            (
                format!("printf {} {}", quote(&format), quoted.join(" ")),
                ours.as_known().map(str::to_string),
            )
        })
        .collect();
    compare("printf", 70, cases);
}

#[test]
fn escapes_match_bash() {
    if !available("escapes_match_bash") {
        return;
    }
    let pieces = [
        "a",
        "\\n",
        "\\t",
        "\\x41",
        "\\x4",
        "\\xg",
        "\\101",
        "\\0101",
        "\\1",
        "\\u0041",
        "\\U00000042",
        "\\e",
        "\\z",
        "\\\"",
        "\\'",
        "\\?",
        "\\\\",
        "\\cA",
        "\\c",
        "\\a",
        "\\v",
        "\\r",
        "b",
        "\\x7e",
    ];
    let mut g = Gen::new(6);
    let mut cases = Vec::new();
    for _ in 0..CASES {
        let text: String = (0..1 + g.below(5)).map(|_| g.pick(&pieces)).collect();
        // `$'…'` needs its single quotes escaped, which the pieces already are.
        let ours = escape::ansi_c(&text);
        cases.push((
            format!("printf %s $'{text}'"),
            ours.as_known().map(str::to_string),
        ));
        let echo = escape::echo_e(&text);
        cases.push((
            format!("echo -ne {}", quote(&text)),
            echo.text.as_known().map(str::to_string),
        ));
    }
    compare("escapes", 60, cases);
}

fn assignment(g: &mut Gen) -> String {
    let target = g.pick(&["a", "b", "d", "e"]);
    match g.below(4) {
        0 => {
            let op = g.pick(&[
                "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=",
            ]);
            format!("{target} {op} {}", expression(g, 2))
        }
        1 => format!("{target}{}", g.pick(&["++", "--"])),
        2 => format!("{}{target}", g.pick(&["++", "--"])),
        _ => expression(g, 2),
    }
}

#[test]
fn arithmetic_assignments_match_bash() {
    if !available("arithmetic_assignments_match_bash") {
        return;
    }
    let vars = |name: &str| match name {
        "a" => Some(Value::known("3")),
        "b" => Some(Value::known("-2")),
        "c" => Some(Value::known("a*2+1")),
        "e" => Some(Value::known("")),
        _ => None,
    };
    let mut g = Gen::new(7);
    let cases = (0..CASES)
        .map(|_| {
            let e = match g.below(3) {
                0 => assignment(&mut g),
                1 => format!("{}, {}", assignment(&mut g), assignment(&mut g)),
                _ => format!("({}) + {}", assignment(&mut g), assignment(&mut g)),
            };
            // The value, then each variable as bash leaves it.
            let ours = arith::evaluate(&e, &vars).map(|o| {
                let last = |name: &str, before: &str| {
                    o.assigned
                        .iter()
                        .rev()
                        .find(|(n, _)| n == name)
                        .map_or(before.to_string(), |(_, v)| v.to_string())
                };
                let (a, b, d, e) = (
                    last("a", "3"),
                    last("b", "-2"),
                    last("d", "unset"),
                    last("e", ""),
                );
                format!("{}|{a}|{b}|{d}|{e}", o.value)
            });
            (
                format!(
                    "a=3 b=-2 c='a*2+1' e=; unset d; r=$(({e})); \
                     printf '%s|%s|%s|%s|%s' \"$r\" \"$a\" \"$b\" \"${{d-unset}}\" \"$e\""
                ),
                ours,
            )
        })
        .collect();
    compare("arithmetic assignments", 60, cases);
}
