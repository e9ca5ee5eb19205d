//! Parameter operations on a known value: `${#x}`, `${x:o:l}`, `${x#p}`, `${x/p/r}`,
//! `${x^^}`, `${x:-w}`, `${x@Q}` and kin. Offsets and lengths come already evaluated
//! (see [`super::arith`]); patterns and replacements come as parts, so quoted characters
//! stay literal. Non-ASCII values are unknown: bash counts and matches them by the
//! locale's characters, which the hook does not see.

use super::glob::Pattern;
use super::{Part, Value};

/// Pattern operations cost up to the square of the value's length: past this the value
/// is unknown rather than slow (the hook answers within its deadline).
const MAX_MATCHED: usize = 2048;

fn ascii(value: &str) -> Option<Vec<char>> {
    value.is_ascii().then(|| value.chars().collect())
}

/// As [`ascii`], for the values patterns run over.
fn matchable(value: &str) -> Option<Vec<char>> {
    ascii(value).filter(|chars| chars.len() <= MAX_MATCHED)
}

/// `${#x}`.
pub fn length(value: &str) -> Value {
    match ascii(value) {
        Some(chars) => Value::Known(chars.len().to_string()),
        None => Value::Unknown,
    }
}

/// `${x:offset}` and `${x:offset:length}`: negative offsets count from the end; a
/// negative length is an end counted from the end, and bash errs when it falls before
/// the offset.
pub fn substring(value: &str, offset: i64, length: Option<i64>) -> Value {
    let Some(chars) = ascii(value) else {
        return Value::Unknown;
    };
    let len = chars.len() as i128;
    let mut start = i128::from(offset);
    if start < 0 {
        start += len;
    }
    if start < 0 || start > len {
        return Value::known("");
    }
    let end = match length.map(i128::from) {
        None => len,
        Some(l) if l < 0 => {
            let end = l + len;
            if end < start {
                return Value::Unknown; // bash: "substring expression < 0"
            }
            end
        }
        Some(l) => (start + l).min(len),
    };
    Value::Known(chars[start as usize..end as usize].iter().collect())
}

/// Which end `${x#p}`, `${x##p}`, `${x%p}`, `${x%%p}` remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    ShortestPrefix,
    LongestPrefix,
    ShortestSuffix,
    LongestSuffix,
}

pub fn remove(value: &str, pattern: &[Part], trim: Trim) -> Value {
    let (Some(chars), Some(pat)) = (matchable(value), Pattern::compile(pattern)) else {
        return Value::Unknown;
    };
    let n = chars.len();
    let prefixes = pat.prefixes(&chars);
    let cut: Option<usize> = match trim {
        Trim::ShortestPrefix => (0..=n).find(|&i| prefixes[i]),
        Trim::LongestPrefix => (0..=n).rev().find(|&i| prefixes[i]),
        Trim::ShortestSuffix => (0..=n).rev().find(|&i| pat.matches(&chars[i..])),
        Trim::LongestSuffix => (0..=n).find(|&i| pat.matches(&chars[i..])),
    };
    let kept: String = match (trim, cut) {
        (_, None) => value.to_string(),
        (Trim::ShortestPrefix | Trim::LongestPrefix, Some(i)) => chars[i..].iter().collect(),
        (_, Some(i)) => chars[..i].iter().collect(),
    };
    Value::Known(kept)
}

/// Where `${x/p/r}` (first), `${x//p/r}` (all), `${x/#p/r}`, `${x/%p/r}` replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    First,
    All,
    Start,
    End,
}

/// Pattern substitution. An unquoted `&` in the replacement stands for the matched text
/// (bash 5.2's default `patsub_replacement`).
pub fn replace(value: &str, pattern: &[Part], replacement: &[Part], anchor: Anchor) -> Value {
    let (Some(chars), Some(pat)) = (matchable(value), Pattern::compile(pattern)) else {
        return Value::Unknown;
    };
    if replacement.contains(&Part::Unknown) {
        return Value::Unknown;
    }
    let rep = |matched: &[char]| -> String {
        let mut out = String::new();
        for part in replacement {
            match part {
                Part::Bare(s) => {
                    for c in s.chars() {
                        if c == '&' {
                            out.extend(matched);
                        } else {
                            out.push(c);
                        }
                    }
                }
                Part::Quoted(s) => out.push_str(s),
                Part::Unknown => {}
            }
        }
        out
    };
    let n = chars.len();
    let whole = |a: usize, b: usize| -> String {
        let mut out: String = chars[..a].iter().collect();
        out.push_str(&rep(&chars[a..b]));
        out.extend(&chars[b..]);
        out
    };
    if pat.is_empty() && matches!(anchor, Anchor::First | Anchor::All) {
        return Value::known(value);
    }
    let found = match anchor {
        Anchor::Start => {
            let prefixes = pat.prefixes(&chars);
            (0..=n).rev().find(|&e| prefixes[e]).map(|e| (0, e))
        }
        Anchor::End => (0..=n).find(|&s| pat.matches(&chars[s..])).map(|s| (s, n)),
        Anchor::First => first_match(&pat, &chars, 0),
        Anchor::All => return Value::Known(replace_all(&pat, &chars, rep)),
    };
    Value::Known(match found {
        Some((a, b)) => whole(a, b),
        None => value.to_string(),
    })
}

/// The leftmost position where the pattern matches, with its longest match there.
fn first_match(pat: &Pattern, chars: &[char], from: usize) -> Option<(usize, usize)> {
    let n = chars.len();
    (from..=n).find_map(|s| {
        let ends = pat.prefixes(&chars[s..]);
        (s..=n).rev().find(|&e| ends[e - s]).map(|e| (s, e))
    })
}

fn replace_all(pat: &Pattern, chars: &[char], rep: impl Fn(&[char]) -> String) -> String {
    let mut out = String::new();
    let mut at = 0;
    while at <= chars.len() {
        let Some((s, e)) = first_match(pat, chars, at) else {
            break;
        };
        out.extend(&chars[at..s]);
        out.push_str(&rep(&chars[s..e]));
        if e == s {
            // An empty match: bash copies one character and goes on past it.
            if let Some(c) = chars.get(s) {
                out.push(*c);
            }
            at = s + 1;
        } else {
            at = e;
        }
    }
    if at < chars.len() {
        out.extend(&chars[at..]);
    }
    out
}

/// `${x^}`, `${x^^}`, `${x,}`, `${x,,}`, `${x~}`, `${x~~}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    UpperFirst,
    UpperAll,
    LowerFirst,
    LowerAll,
    ToggleFirst,
    ToggleAll,
}

/// Case change of the characters the pattern matches (an empty pattern matches any).
pub fn case(value: &str, op: Case, pattern: &[Part]) -> Value {
    let (Some(chars), Some(pat)) = (matchable(value), Pattern::compile(pattern)) else {
        return Value::Unknown;
    };
    let all = matches!(op, Case::UpperAll | Case::LowerAll | Case::ToggleAll);
    let out = chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let selected = (all || i == 0) && (pat.is_empty() || pat.matches(&[c]));
            match op {
                _ if !selected => c,
                Case::UpperFirst | Case::UpperAll => c.to_ascii_uppercase(),
                Case::LowerFirst | Case::LowerAll => c.to_ascii_lowercase(),
                _ if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
                _ => c.to_ascii_uppercase(),
            }
        })
        .collect();
    Value::Known(out)
}

/// `${x-w}`, `${x=w}`, `${x+w}` and their `:` forms (which also treat empty as unset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// `-`: the word when unset.
    Default,
    /// `=`: as `-`, and the variable takes the word (the caller assigns it).
    Assign,
    /// `+`: the word when set.
    Alternative,
}

/// `current`: `None` when the variable is unset.
pub fn fallback(current: Option<&Value>, colon: bool, op: Fallback, word: Value) -> Value {
    let set = match current {
        None => Some(false),
        Some(Value::Known(s)) => Some(!(colon && s.is_empty())),
        Some(Value::Unknown) => None,
    };
    match (op, set) {
        (Fallback::Default | Fallback::Assign, Some(true)) => {
            current.cloned().unwrap_or(Value::Unknown)
        }
        (Fallback::Default | Fallback::Assign, Some(false)) => word,
        (Fallback::Alternative, Some(true)) => word,
        (Fallback::Alternative, Some(false)) => Value::known(""),
        (_, None) => Value::Unknown,
    }
}

/// `${x@Q}`, `${x@E}`, `${x@U}`, `${x@u}`, `${x@L}`; the others (`@P`, `@A`, `@a`, `@K`)
/// depend on the prompt or the variable's attributes and are unknown.
pub fn transform(value: &str, op: char) -> Value {
    if !value.is_ascii() {
        return Value::Unknown;
    }
    match op {
        // Printable text is single-quoted; control characters switch bash to `$'…'`.
        'Q' if value.chars().all(|c| !c.is_ascii_control()) => {
            Value::Known(format!("'{}'", value.replace('\'', r"'\''")))
        }
        // `@E` reads `\c\\` otherwise than `$'…'` does; that one form is not worked out.
        'E' if !value.contains(r"\c\") => super::escape::ansi_c(value),
        'U' => Value::Known(value.to_ascii_uppercase()),
        'L' => Value::Known(value.to_ascii_lowercase()),
        'u' => {
            let mut chars = value.chars();
            Value::Known(match chars.next() {
                Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            })
        }
        _ => Value::Unknown,
    }
}
