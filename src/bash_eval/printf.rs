//! The `printf` builtin's output for a format and arguments: `%s %b %c %d %i %o %u %x %X`
//! with flags, width and precision (`*` too), `%%`, escapes in the format, and the format
//! used again while arguments remain. Floating point, `%q`, `%(…)T` and anything bash
//! would report as an error are unknown.

use super::Value;
use super::escape::{Dialect, decode};
use super::printf_number::{digits, integer};

/// Widths past this are not worked out (the output would only be padding).
const MAX_WIDTH: i64 = 4096;
const MAX_OUTPUT: usize = 64 * 1024;

#[derive(Debug, Clone, Default)]
pub(super) struct Spec {
    pub(super) left: bool,
    pub(super) zero: bool,
    pub(super) plus: bool,
    pub(super) space: bool,
    pub(super) alt: bool,
    /// `None`: none given; `Some(None)`: `*`, from the arguments.
    pub(super) width: Option<Option<i64>>,
    pub(super) precision: Option<Option<i64>>,
    pub(super) conversion: u8,
}

enum Seg {
    Text(String),
    Spec(Spec),
}

/// What `printf FORMAT ARGS…` writes (before `-v` or a command substitution takes it).
pub fn printf(format: &str, args: &[Value]) -> Value {
    let Some(segs) = parse(format) else {
        return Value::Unknown;
    };
    let Some(args) = args
        .iter()
        .map(Value::as_known)
        .collect::<Option<Vec<&str>>>()
    else {
        return Value::Unknown;
    };
    let mut out = String::new();
    let mut next = 0;
    loop {
        let before = next;
        for seg in &segs {
            match seg {
                Seg::Text(text) => out.push_str(text),
                Seg::Spec(spec) => match convert(spec, &args, &mut next, &mut out) {
                    Some(true) => {}
                    Some(false) => return Value::Known(out), // `\c` in a `%b` argument
                    None => return Value::Unknown,
                },
            }
            if out.len() > MAX_OUTPUT {
                return Value::Unknown;
            }
        }
        // bash reuses the format while arguments remain and the format takes some.
        if next >= args.len() || next == before {
            return Value::Known(out);
        }
    }
}

fn parse(format: &str) -> Option<Vec<Seg>> {
    let mut segs = Vec::new();
    let mut rest = format;
    while !rest.is_empty() {
        let end = rest.find('%').unwrap_or(rest.len());
        if end > 0 {
            let text = decode(&rest[..end], Dialect::Format).text;
            segs.push(Seg::Text(text.as_known()?.to_string()));
        }
        rest = &rest[end..];
        if rest.is_empty() {
            break;
        }
        let (spec, used) = spec(rest.as_bytes())?;
        match spec {
            Some(spec) => segs.push(Seg::Spec(spec)),
            None => segs.push(Seg::Text("%".into())),
        }
        rest = &rest[used..];
    }
    Some(segs)
}

/// The conversion at the start of `b` (a `%`): `None` for `%%`, with the bytes it used.
fn spec(b: &[u8]) -> Option<(Option<Spec>, usize)> {
    if b.get(1) == Some(&b'%') {
        return Some((None, 2));
    }
    let mut spec = Spec::default();
    let mut i = 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b'#' => spec.alt = true,
            _ => break,
        }
        i += 1;
    }
    let number = |i: &mut usize| -> Option<Option<i64>> {
        if b.get(*i) == Some(&b'*') {
            *i += 1;
            return Some(None);
        }
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        let digits = std::str::from_utf8(&b[start..*i]).ok()?;
        Some(Some(if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        }))
    };
    if b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'*') {
        spec.width = Some(number(&mut i)?);
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        spec.precision = Some(number(&mut i)?);
    }
    // Length modifiers change nothing for bash's own integers.
    while b.get(i).is_some_and(|c| b"hlLjztq".contains(c)) {
        i += 1;
    }
    spec.conversion = *b.get(i)?;
    if !b"sbcdiouxX".contains(&spec.conversion) {
        return None;
    }
    Some((Some(spec), i + 1))
}

/// Writes one conversion; `Some(false)` when a `\c` ended all output.
fn convert(spec: &Spec, args: &[&str], next: &mut usize, out: &mut String) -> Option<bool> {
    let mut take = || {
        let arg = args.get(*next).copied();
        *next += 1;
        arg
    };
    let mut left = spec.left;
    let mut width = match spec.width {
        None => 0,
        Some(Some(w)) => w,
        Some(None) => integer(take().unwrap_or(""))?,
    };
    if width < 0 {
        left = true;
        width = width.checked_neg()?;
    }
    if width > MAX_WIDTH {
        return None;
    }
    let precision = match spec.precision {
        None => None,
        Some(Some(p)) => Some(p),
        Some(None) => Some(integer(take().unwrap_or(""))?).filter(|p| *p >= 0),
    };
    if precision.is_some_and(|p| p > MAX_WIDTH) {
        return None;
    }
    let arg = take();
    let mut keep_going = true;
    let body = match spec.conversion {
        b's' | b'b' | b'c' => {
            if spec.zero {
                return None; // the C library's reading of `%05s` is not pinned down
            }
            let mut text = match spec.conversion {
                b's' => arg.unwrap_or("").to_string(),
                b'b' => {
                    let decoded = decode(arg.unwrap_or(""), Dialect::Echo);
                    keep_going = !decoded.stop;
                    decoded.text.as_known()?.to_string()
                }
                // A missing or empty argument prints a NUL (which a command substitution
                // drops and a file keeps); bash takes the first byte, half a character
                // past ASCII.
                _ => arg?.chars().next().filter(char::is_ascii)?.to_string(),
            };
            // Width and precision count bytes or characters as the locale decides; text
            // alone passes through as it is.
            if !text.is_ascii() && (width > 0 || precision.is_some()) {
                return None;
            }
            if let Some(p) = precision.filter(|_| spec.conversion != b'c') {
                text.truncate(p as usize);
            }
            pad(text, width as usize, left, false)
        }
        _ => {
            let n = integer(arg.unwrap_or(""))?;
            let digits = digits(spec, n, precision);
            pad(
                digits,
                width as usize,
                left,
                spec.zero && precision.is_none(),
            )
        }
    };
    out.push_str(&body);
    Some(keep_going)
}

fn pad(text: String, width: usize, left: bool, zero: bool) -> String {
    let fill = width.saturating_sub(text.len());
    if fill == 0 {
        return text;
    }
    if left {
        return text + &" ".repeat(fill);
    }
    if zero {
        // Zeros go after the sign and the 0x prefix.
        let sign = usize::from(text.starts_with(['-', '+', ' ']));
        let hex = text[sign..].starts_with("0x") || text[sign..].starts_with("0X");
        let (head, tail) = text.split_at(sign + if hex { 2 } else { 0 });
        return format!("{head}{}{tail}", "0".repeat(fill));
    }
    " ".repeat(fill) + &text
}
