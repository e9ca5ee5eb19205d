//! Numbers in `printf`: how bash reads an argument and how C's printf writes it.

use super::printf::Spec;

/// A number as C's printf writes it for one conversion of `spec`.
pub(super) fn digits(spec: &Spec, n: i64, precision: Option<i64>) -> String {
    let unsigned = n as u64;
    let (sign, mut body) = match spec.conversion {
        b'd' | b'i' => {
            let sign = if n < 0 {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            (sign, n.unsigned_abs().to_string())
        }
        b'o' => ("", format!("{unsigned:o}")),
        b'u' => ("", unsigned.to_string()),
        b'x' => ("", format!("{unsigned:x}")),
        _ => ("", format!("{unsigned:X}")),
    };
    match precision {
        Some(0) if n == 0 => body.clear(),
        Some(p) if (p as usize) > body.len() => {
            body = "0".repeat(p as usize - body.len()) + &body;
        }
        _ => {}
    }
    let prefix = match spec.conversion {
        b'o' if spec.alt && !body.starts_with('0') => "0",
        b'x' if spec.alt && n != 0 => "0x",
        b'X' if spec.alt && n != 0 => "0X",
        _ => "",
    };
    format!("{sign}{prefix}{body}")
}

/// bash's reading of a numeric argument: C's strtoimax in base 0 (`0x1f`, `017`), or
/// `'c` for a character's code. Anything bash would complain about is `None`.
pub(super) fn integer(arg: &str) -> Option<i64> {
    if let Some(rest) = arg.strip_prefix('\'').or(arg.strip_prefix('"')) {
        return match rest.chars().next() {
            None => Some(0),
            Some(c) if c.is_ascii() => Some(c as i64),
            Some(_) => None,
        };
    }
    if arg.is_empty() {
        return Some(0);
    }
    let trimmed = arg.trim_start_matches([' ', '\t', '\n']);
    let (negative, unsigned) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let (radix, digits) =
        if let Some(hex) = unsigned.strip_prefix("0x").or(unsigned.strip_prefix("0X")) {
            (16, hex)
        } else if unsigned.len() > 1 && unsigned.starts_with('0') {
            (8, &unsigned[1..])
        } else {
            (10, unsigned)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}
