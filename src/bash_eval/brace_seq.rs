//! Sequence braces (`{1..10}`, `{01..12..3}`, `{a..e}`), as bash's expand_seqterm and mkseq.

use super::brace::MAX_WORDS;

/// The terms of a sequence amble; `Ok(None)` when it is not a valid sequence (bash leaves
/// it literal), `Err(())` when bash's result is not worked out here.
pub(super) fn terms(text: &str) -> Result<Option<Vec<String>>, ()> {
    let Some(sep) = text.find("..") else {
        return Ok(None);
    };
    let (lhs, rest) = (&text[..sep], &text[sep + 2..]);
    let left = if let Some(n) = legal_number(lhs) {
        Term::Int(n)
    } else if is_letter(lhs) {
        Term::Char(lhs.as_bytes()[0])
    } else {
        return Ok(None);
    };
    let rb = rest.as_bytes();
    let signed_digit = |i: usize| rb.get(i).is_some_and(u8::is_ascii_digit);
    let (right, after) = if signed_digit(0)
        || (matches!(rb.first(), Some(b'+' | b'-')) && signed_digit(1))
    {
        let (n, used) = strtoimax(rest).ok_or(())?;
        let after = &rest[used..];
        if !(after.is_empty() || after.starts_with('.')) {
            return Ok(None);
        }
        (Term::Int(n), after)
    } else if rb.first().is_some_and(u8::is_ascii_alphabetic) && (rb.len() == 1 || rb[1] == b'.') {
        (Term::Char(rb[0]), &rest[1..])
    } else {
        return Ok(None);
    };
    let right_len = rest.len() - after.len();
    let incr = if after.is_empty() {
        1
    } else if let Some(step) = after.strip_prefix("..").filter(|s| !s.is_empty()) {
        match strtoimax(step) {
            Some((n, used)) if used == step.len() => n,
            _ => return Ok(None),
        }
    } else {
        return Ok(None);
    };
    match (left, right) {
        (Term::Int(a), Term::Int(b)) => {
            let width = pad_width(lhs, &rest[..right_len]);
            ints(a, b, incr, width).map(Some)
        }
        (Term::Char(a), Term::Char(b)) => chars(a, b, incr).map(Some),
        _ => Ok(None),
    }
}

#[derive(Clone, Copy)]
enum Term {
    Int(i64),
    Char(u8),
}

fn is_letter(s: &str) -> bool {
    s.len() == 1 && s.as_bytes()[0].is_ascii_alphabetic()
}

/// bash's legal_number: an optional sign and decimal digits, nothing else (a word holds no
/// blanks, so strtoimax's leading blanks never occur).
fn legal_number(s: &str) -> Option<i64> {
    strtoimax(s)
        .filter(|(_, used)| *used == s.len())
        .map(|(n, _)| n)
}

/// Base-10 strtoimax: the value and how many bytes it used; `None` when there are no
/// digits or the value overflows (bash then treats the term as invalid or errs).
fn strtoimax(s: &str) -> Option<(i64, usize)> {
    let b = s.as_bytes();
    let (negative, mut i) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let digits_from = i;
    let mut n: i128 = 0;
    while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
        n = n * 10 + i128::from(d - b'0');
        if n > i128::from(i64::MAX) + 1 {
            return None;
        }
        i += 1;
    }
    if i == digits_from {
        return None;
    }
    let n = if negative { -n } else { n };
    i64::try_from(n).ok().map(|n| (n, i))
}

/// Zero padding applies when either term is written with a leading zero (`01`, `-01`).
fn pad_width(lhs: &str, rhs: &str) -> usize {
    let padded =
        |s: &str| (s.len() > 1 && s.starts_with('0')) || (s.len() > 2 && s.starts_with("-0"));
    let mut width = 0;
    for term in [lhs, rhs] {
        if padded(term) && width < term.len() {
            width = term.len();
        }
    }
    width
}

fn steps(start: i64, end: i64, incr: i64) -> Result<(i128, i128), ()> {
    let incr = i128::from(if incr == 0 { 1 } else { incr }).abs();
    let span = (i128::from(end) - i128::from(start)).abs();
    let count = span / incr + 1;
    if count > MAX_WORDS as i128 {
        return Err(());
    }
    let signed = if end < start { -incr } else { incr };
    Ok((count, signed))
}

fn ints(start: i64, end: i64, incr: i64, width: usize) -> Result<Vec<String>, ()> {
    let (count, incr) = steps(start, end, incr)?;
    (0..count)
        .map(|k| {
            let n = i128::from(start) + k * incr;
            if width == 0 {
                Ok(n.to_string())
            } else if i32::try_from(n).is_ok() {
                // bash pads with printf's `%0*d` of an int: past i32 it would truncate.
                Ok(format!("{n:0width$}"))
            } else {
                Err(())
            }
        })
        .collect()
}

fn chars(start: u8, end: u8, incr: i64) -> Result<Vec<String>, ()> {
    let (count, incr) = steps(i64::from(start), i64::from(end), incr)?;
    (0..count)
        .map(|k| {
            let code = i128::from(start) + k * incr;
            // Between `Z` and `a` lie `[`, `\`, `]`…: bash's later quote removal eats the
            // backslash, so only letters are given.
            match u8::try_from(code) {
                Ok(c) if c.is_ascii_alphabetic() => Ok((c as char).to_string()),
                _ => Err(()),
            }
        })
        .collect()
}
