//! Backslash escapes, in the three dialects bash has: `$'…'` (and `${x@E}`), `echo -e`
//! (and `printf %b`), and a `printf` format. They differ in octal (`\101` against `\0101`),
//! in `\c` (a control character, the end of all output, or nothing special), and in what an
//! unrecognised escape keeps. A NUL, an invalid UTF-8 byte or a code point past ASCII (whose
//! bytes depend on the locale) makes the result unknown.

use super::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `$'…'`: `\nnn`, `\cX` is a control character, `\'` `\"` `\?` drop the backslash.
    AnsiC,
    /// `echo -e`, `printf %b`: `\0nnn`, `\c` ends the output.
    Echo,
    /// A `printf` format: `\nnn`, `\c` stays as it is.
    Format,
}

/// Decoded text, and whether a `\c` asked to stop all output there (echo dialect).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: Value,
    pub stop: bool,
}

/// `$'…'` content (without the quotes) as bash reads it.
pub fn ansi_c(text: &str) -> Value {
    decode(text, Dialect::AnsiC).text
}

/// `echo -e` of one argument.
pub fn echo_e(text: &str) -> Decoded {
    decode(text, Dialect::Echo)
}

pub fn decode(text: &str, dialect: Dialect) -> Decoded {
    let unknown = Decoded {
        text: Value::Unknown,
        stop: false,
    };
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut stop = false;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        let simple = match c {
            b'a' => Some(7),
            b'b' => Some(8),
            b'e' | b'E' => Some(27),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' => Some(b'\\'),
            b'\'' | b'"' | b'?' if dialect != Dialect::Echo => Some(c),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        match c {
            b'0'..=b'7' => {
                // echo's octal starts with 0 and takes three more digits; the others take
                // three in all.
                let echo = dialect == Dialect::Echo;
                if echo && c != b'0' {
                    out.extend_from_slice(&[b'\\', c]);
                    continue;
                }
                let more = if echo { 3 } else { 2 };
                let (value, used) = digits(&b[i..], 8, more);
                out.push(((u32::from(c - b'0') << (3 * used)) + value) as u8);
                i += used;
            }
            b'x' | b'u' | b'U' => {
                let max = match c {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let (value, used) = digits(&b[i..], 16, max);
                if used == 0 {
                    out.extend_from_slice(&[b'\\', c]);
                } else if c == b'x' || value < 0x80 {
                    // `\x` gives a byte; `\u` past ASCII gives the locale's encoding.
                    out.push(value as u8);
                } else {
                    return unknown;
                }
                i += used;
            }
            b'c' if dialect == Dialect::Echo => {
                stop = true;
                break;
            }
            // `\cX` is control-X (`\c?` is DEL); a doubled backslash after it counts as one.
            b'c' if dialect == Dialect::AnsiC => match b.get(i) {
                None => out.extend_from_slice(b"\\c"),
                Some(&x) if x.is_ascii() => {
                    i += 1;
                    if x == b'\\' && b.get(i) == Some(&b'\\') {
                        i += 1;
                    }
                    out.push(if x == b'?' {
                        0x7f
                    } else {
                        x.to_ascii_uppercase() & 0x1f
                    });
                }
                Some(_) => return unknown,
            },
            _ => out.extend_from_slice(&[b'\\', c]),
        }
    }
    if out.contains(&0) {
        return unknown;
    }
    match String::from_utf8(out) {
        Ok(s) => Decoded {
            text: Value::Known(s),
            stop,
        },
        Err(_) => unknown,
    }
}

/// Up to `max` digits of `radix` at the start of `b`: their value and how many there were.
fn digits(b: &[u8], radix: u32, max: usize) -> (u32, usize) {
    let mut value = 0u32;
    let mut used = 0;
    while used < max {
        match b.get(used).and_then(|&d| (d as char).to_digit(radix)) {
            Some(d) => value = value * radix + d,
            None => break,
        }
        used += 1;
    }
    (value, used)
}
