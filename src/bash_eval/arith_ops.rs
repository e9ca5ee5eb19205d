//! Arithmetic tokens — operators, literals, names — as bash's expr.c reads and applies
//! them.

use super::arith::Parser;

/// Binary operators by precedence level, loosest first (after `?:`).
pub(super) const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<=", ">=", "<", ">"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

/// A binary operator on 64-bit integers; `skipped`: on a side bash does not evaluate.
pub(super) fn apply(op: &str, a: i64, b: i64, skipped: bool) -> Option<i64> {
    let bool = |x: bool| i64::from(x);
    Some(match op {
        "||" => bool(a != 0 || b != 0),
        "&&" => bool(a != 0 && b != 0),
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => bool(a == b),
        "!=" => bool(a != b),
        "<=" => bool(a <= b),
        ">=" => bool(a >= b),
        "<" => bool(a < b),
        ">" => bool(a > b),
        // bash shifts with the machine's instruction, which takes the count modulo 64.
        "<<" => a.wrapping_shl((b & 63) as u32),
        ">>" => a.wrapping_shr((b & 63) as u32),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" if b == 0 => return skipped.then_some(0),
        "/" => a.wrapping_div(b),
        "%" => a.wrapping_rem(b),
        _ => return None,
    })
}

pub(super) fn is_name(token: &str) -> bool {
    token
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A literal as bash's strlong reads it: `0x1f`, `017`, `2#101`, `64#_@`, `12`.
pub(super) fn number(token: &str) -> Option<i64> {
    let (mut base, digits) =
        if let Some(hex) = token.strip_prefix("0x").or(token.strip_prefix("0X")) {
            (16, hex)
        } else if token.len() > 1 && token.starts_with('0') {
            (8, &token[1..])
        } else {
            (10, token)
        };
    let digits = match digits.split_once('#') {
        Some((b, rest)) if base == 10 && !b.is_empty() && !rest.is_empty() => {
            base = b.parse::<i64>().ok().filter(|b| (2..=64).contains(b))?;
            rest
        }
        Some(_) => return None,
        None => digits,
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for c in digits.bytes() {
        let d = match c {
            b'0'..=b'9' => i64::from(c - b'0'),
            b'a'..=b'z' => i64::from(c - b'a') + 10,
            b'A'..=b'Z' if base <= 36 => i64::from(c - b'A') + 10,
            b'A'..=b'Z' => i64::from(c - b'A') + 36,
            b'@' => 62,
            b'_' => 63,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        value = value.wrapping_mul(base).wrapping_add(d);
    }
    Some(value)
}

/// Reading operators: blanks between tokens, and the longest operator at a point.
impl Parser<'_> {
    pub(super) fn skip_blanks(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n'))
        {
            self.i += 1;
        }
    }

    pub(super) fn peek(&mut self, op: &str) -> bool {
        self.skip_blanks();
        self.s[self.i..].starts_with(op.as_bytes())
    }

    /// The operator at this point, if it is `op` and not the start of a longer one.
    pub(super) fn eat(&mut self, op: &str) -> bool {
        if !self.peek(op) {
            return false;
        }
        let next = self.s.get(self.i + op.len()).copied();
        let longer = match op {
            "|" => matches!(next, Some(b'|' | b'=')),
            "&" => matches!(next, Some(b'&' | b'=')),
            "<" => matches!(next, Some(b'<' | b'=')),
            ">" => matches!(next, Some(b'>' | b'=')),
            "*" => matches!(next, Some(b'*' | b'=')),
            "+" => matches!(next, Some(b'+' | b'=')),
            "-" => matches!(next, Some(b'-' | b'=')),
            "<<" | ">>" | "/" | "%" | "^" | "**" => next == Some(b'='),
            "!" => next == Some(b'='),
            _ => false,
        };
        if longer {
            return false;
        }
        self.i += op.len();
        true
    }
}
