//! Arithmetic literals and names as bash's expr.c reads them.

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
