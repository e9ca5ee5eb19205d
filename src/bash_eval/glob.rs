//! Bash pattern matching (`*`, `?`, `[...]`) for parameter operations, with `extglob` off
//! and `globasciiranges` on (bash 5's defaults). Forms whose meaning this module is not
//! sure of — extglob groups, `[=a=]`, `[.a.]`, a `]` first in a bracket, quoted characters
//! inside a bracket — make the pattern unknown rather than guessed.

use super::Part;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Char(char),
    /// `?`
    Any,
    /// `*`
    Star,
    Bracket {
        negated: bool,
        members: Vec<Member>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    Char(char),
    Range(char, char),
    /// `[:name:]`, a name [`in_class`] knows.
    Class(&'static str),
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    items: Vec<Item>,
}

/// A pattern character: `true` when it came unquoted (and may be syntax).
type PChar = (char, bool);

impl Pattern {
    /// `None` when the pattern holds an unknown part or a form not worked out here.
    pub fn compile(parts: &[Part]) -> Option<Pattern> {
        let mut chars: Vec<PChar> = Vec::new();
        for part in parts {
            match part {
                Part::Bare(s) => chars.extend(s.chars().map(|c| (c, true))),
                Part::Quoted(s) => chars.extend(s.chars().map(|c| (c, false))),
                Part::Unknown => return None,
            }
        }
        if chars.iter().any(|(c, _)| !c.is_ascii()) {
            // Whether `?` takes a byte or a character depends on the locale.
            return None;
        }
        let mut items = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let (c, bare) = chars[i];
            let next_opens = chars.get(i + 1) == Some(&('(', true));
            if bare && next_opens && "?*+@!".contains(c) {
                return None; // an extglob group, if the script turned extglob on
            }
            match (c, bare) {
                ('*', true) => {
                    if items.last() != Some(&Item::Star) {
                        items.push(Item::Star);
                    }
                }
                ('?', true) => items.push(Item::Any),
                ('\\', true) => {
                    let (next, _) = *chars.get(i + 1)?;
                    items.push(Item::Char(next));
                    i += 1;
                }
                ('[', true) => match bracket(&chars, i + 1)? {
                    Some((item, end)) => {
                        items.push(item);
                        i = end;
                    }
                    None => items.push(Item::Char('[')),
                },
                _ => items.push(Item::Char(c)),
            }
            i += 1;
        }
        Some(Pattern { items })
    }

    /// Whether the pattern is empty (bash treats a null pattern specially).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &[char]) -> bool {
        self.prefixes(text)[text.len()]
    }

    /// For each length `j`, whether the pattern matches the first `j` characters: one pass
    /// answers every prefix, so the operations stay quadratic at worst.
    pub fn prefixes(&self, text: &[char]) -> Vec<bool> {
        // reach[j]: the first j characters of text are matched by the items so far.
        let mut reach = vec![false; text.len() + 1];
        reach[0] = true;
        for item in &self.items {
            let mut next = vec![false; text.len() + 1];
            if *item == Item::Star {
                if let Some(first) = reach.iter().position(|r| *r) {
                    next[first..].iter_mut().for_each(|r| *r = true);
                }
            } else {
                for j in 0..text.len() {
                    if reach[j] && single(item, text[j]) {
                        next[j + 1] = true;
                    }
                }
            }
            reach = next;
        }
        reach
    }

    pub fn matches_str(&self, text: &str) -> bool {
        self.matches(&text.chars().collect::<Vec<_>>())
    }
}

fn single(item: &Item, c: char) -> bool {
    match item {
        Item::Char(p) => *p == c,
        Item::Any => true,
        Item::Star => false,
        Item::Bracket { negated, members } => {
            let hit = members.iter().any(|m| match m {
                Member::Char(p) => *p == c,
                Member::Range(a, b) => (*a..=*b).contains(&c),
                Member::Class(name) => in_class(name, c),
            });
            hit != *negated
        }
    }
}

/// The bracket expression starting after `[` at `from`: `Ok`-like `Some(Some((item, index of
/// its ]))`, `Some(None)` when there is no closing `]` (the `[` is literal), `None` unknown.
fn bracket(chars: &[PChar], from: usize) -> Option<Option<(Item, usize)>> {
    let mut i = from;
    let negated = matches!(chars.get(i), Some(('!' | '^', true)));
    if negated {
        i += 1;
    }
    if matches!(chars.get(i), Some((']', _))) {
        return None; // `[]…]` and `[!]…]`: bash's reading was not pinned down
    }
    let mut members = Vec::new();
    while i < chars.len() {
        let (c, bare) = chars[i];
        if !bare || c == '\\' {
            return None;
        }
        match c {
            ']' => return Some(Some((Item::Bracket { negated, members }, i))),
            '[' if matches!(chars.get(i + 1), Some(('=' | '.', _))) => return None,
            '[' if matches!(chars.get(i + 1), Some((':', _))) => {
                let rest: String = chars[i + 2..].iter().map(|(c, _)| *c).collect();
                let end = rest.find(":]")?;
                members.push(Member::Class(class(&rest[..end])?));
                i += 2 + end + 2;
                continue;
            }
            _ => {}
        }
        let dash = chars.get(i + 1) == Some(&('-', true));
        match chars.get(i + 2) {
            Some(&(hi, true)) if dash && hi != ']' => {
                members.push(Member::Range(c, hi));
                i += 3;
            }
            Some(_) if dash => {
                members.push(Member::Char(c));
                i += 1;
            }
            _ => {
                members.push(Member::Char(c));
                i += 1;
            }
        }
    }
    Some(None)
}

const CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct",
    "space", "upper", "word", "xdigit",
];

fn class(name: &str) -> Option<&'static str> {
    CLASSES.iter().find(|k| **k == name).copied()
}

/// The C locale's classes; for ASCII text every locale agrees with them.
fn in_class(name: &str, c: char) -> bool {
    match name {
        "alnum" => c.is_ascii_alphanumeric(),
        "alpha" => c.is_ascii_alphabetic(),
        "ascii" => c.is_ascii(),
        "blank" => c == ' ' || c == '\t',
        "cntrl" => c.is_ascii_control(),
        "digit" => c.is_ascii_digit(),
        "graph" => c.is_ascii_graphic(),
        "lower" => c.is_ascii_lowercase(),
        "print" => c.is_ascii_graphic() || c == ' ',
        "punct" => c.is_ascii_punctuation(),
        "space" => matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'),
        "upper" => c.is_ascii_uppercase(),
        "word" => c.is_ascii_alphanumeric() || c == '_',
        _ => c.is_ascii_hexdigit(),
    }
}
