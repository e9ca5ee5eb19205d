//! Brace expansion of one word, as bash's braces.c does it: the first `{` that has a
//! matching `}` with a top-level comma or `..` inside is expanded, its preamble prefixed and
//! its postscript expanded in turn; anything else stays literal.

use super::{Part, Value};

/// Past this many words, or this many characters in all, the expansion is not worked out:
/// keeping a prefix would be a wrong known value (issue 13: host 65 of 65 passed).
pub const MAX_WORDS: usize = 4096;
pub const MAX_CHARS: usize = 256 * 1024;
const MAX_OPENS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// Unquoted character: may be brace syntax.
    Bare(char),
    /// Quoted character: never syntax.
    Lit(char),
    /// An unknown piece.
    Hole,
}

/// Why no list of words can be given.
struct Unknowable;

type Words = Vec<Vec<Tok>>;

/// The words `word` expands to, each as parts (adjacent parts of one kind merged), or
/// `Unknown` when the result is too big or depends on quoting the parts do not record.
pub fn expand(word: &[Part]) -> Result<Vec<Vec<Part>>, Value> {
    let toks = tokens(word);
    // Each `{` may be scanned to the word's end, at every level: bounded, so a long word
    // is unknown rather than slow.
    let opens = toks.iter().filter(|t| **t == Tok::Bare('{')).count();
    if toks.len() > MAX_CHARS || opens > MAX_OPENS {
        return Err(Value::Unknown);
    }
    match expand_toks(&toks) {
        Ok(words) => Ok(words.iter().map(|w| parts(w)).collect()),
        Err(Unknowable) => Err(Value::Unknown),
    }
}

/// As [`expand`] for an unquoted word of plain text.
pub fn expand_text(word: &str) -> Result<Vec<String>, Value> {
    let words = expand(&[Part::Bare(word.to_string())])?;
    Ok(words
        .iter()
        .map(|w| super::known_text(w).unwrap_or_default())
        .collect())
}

fn tokens(word: &[Part]) -> Vec<Tok> {
    let mut out = Vec::new();
    for part in word {
        match part {
            Part::Bare(s) => out.extend(s.chars().map(Tok::Bare)),
            Part::Quoted(s) => out.extend(s.chars().map(Tok::Lit)),
            Part::Unknown => out.push(Tok::Hole),
        }
    }
    out
}

fn parts(toks: &[Tok]) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for tok in toks {
        match (tok, out.last_mut()) {
            (Tok::Bare(c), Some(Part::Bare(s))) | (Tok::Lit(c), Some(Part::Quoted(s))) => {
                s.push(*c)
            }
            (Tok::Bare(c), _) => out.push(Part::Bare(c.to_string())),
            (Tok::Lit(c), _) => out.push(Part::Quoted(c.to_string())),
            (Tok::Hole, _) => out.push(Part::Unknown),
        }
    }
    out
}

fn expand_toks(t: &[Tok]) -> Result<Words, Unknowable> {
    // The first `{` that opens a real brace expression; others stay literal.
    let mut from = 0;
    let (open, close) = loop {
        let Some(open) = gobble(t, from, '{')? else {
            return Ok(vec![t.to_vec()]);
        };
        match gobble(t, open + 1, '}')? {
            Some(close) => break (open, close),
            None => from = open + 1,
        }
    };
    let amble = &t[open + 1..close];
    let bare_comma = amble.contains(&Tok::Bare(','));
    let tack = if bare_comma {
        expand_amble(amble)?
    } else {
        // bash looks for a comma in the raw text, where a quoted comma counts and an escaped
        // one does not: the parts cannot tell those apart, nor what an unknown piece holds.
        if amble.iter().any(|k| matches!(k, Tok::Lit(',') | Tok::Hole)) {
            return Err(Unknowable);
        }
        match sequence(amble)? {
            Some(words) => words,
            None if close + 1 < t.len() => vec![t[open..=close].to_vec()],
            None => return Ok(vec![t.to_vec()]),
        }
    };
    let mut result = product(vec![t[..open].to_vec()], tack)?;
    if close + 1 < t.len() {
        result = product(result, expand_toks(&t[close + 1..])?)?;
    }
    Ok(result)
}

/// bash's brace_gobbler: the index of the first `satisfy` at brace depth 0 (a `}` only after
/// a comma or `..`), skipping quoted characters.
fn gobble(t: &[Tok], mut i: usize, satisfy: char) -> Result<Option<usize>, Unknowable> {
    let mut level = 0usize;
    let mut commas = usize::from(satisfy != '}');
    let bare = |j: usize| match t.get(j) {
        Some(Tok::Bare(c)) => Some(*c),
        _ => None,
    };
    while i < t.len() {
        let Some(c) = bare(i) else {
            i += 1;
            continue;
        };
        if c == '$' && bare(i + 1) == Some('{') {
            // A parameter expansion's text: the walk never leaves one bare.
            return Err(Unknowable);
        }
        if c == satisfy && level == 0 && commas > 0 {
            // bash ignores a `{` that starts a word or follows whitespace when whitespace or
            // `}` follows; a quoted blank before it reads as whitespace only if it was escaped.
            let before = if i == 0 { Some(' ') } else { bare(i - 1) };
            if c == '{' && i > 0 && matches!(t[i - 1], Tok::Lit(' ' | '\t' | '\n')) {
                return Err(Unknowable);
            }
            let blank = |c: Option<char>| matches!(c, Some(' ' | '\t' | '\n'));
            if c == '{' && blank(before) && (blank(bare(i + 1)) || bare(i + 1) == Some('}')) {
                i += 1;
                continue;
            }
            return Ok(Some(i));
        }
        if c == '{' {
            level += 1;
        } else if c == '}' && level > 0 {
            level -= 1;
        } else if satisfy == '}' && level == 0 {
            let dots = c == '.' && bare(i + 1) == Some('.') && bare(i + 2) != Some('}');
            if c == ',' || dots {
                commas += 1;
            }
        }
        i += 1;
    }
    Ok(None)
}

/// `a,b{c,d},e`: each top-level element expanded, in order.
fn expand_amble(amble: &[Tok]) -> Result<Words, Unknowable> {
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let end = gobble(amble, start, ',')?.unwrap_or(amble.len());
        out.extend(expand_toks(&amble[start..end])?);
        within_budget(&out)?;
        if end >= amble.len() {
            return Ok(out);
        }
        start = end + 1;
    }
}

fn product(left: Words, right: Words) -> Result<Words, Unknowable> {
    if left.len().saturating_mul(right.len()) > MAX_WORDS {
        return Err(Unknowable);
    }
    let mut out = Vec::with_capacity(left.len() * right.len());
    for l in &left {
        for r in &right {
            let mut w = l.clone();
            w.extend_from_slice(r);
            out.push(w);
        }
    }
    within_budget(&out)?;
    Ok(out)
}

fn within_budget(words: &Words) -> Result<(), Unknowable> {
    let chars: usize = words.iter().map(Vec::len).sum();
    if words.len() > MAX_WORDS || chars > MAX_CHARS {
        return Err(Unknowable);
    }
    Ok(())
}

/// `{1..10}`, `{01..12..2}`, `{a..e}`: `None` when the text is not a valid sequence.
fn sequence(amble: &[Tok]) -> Result<Option<Words>, Unknowable> {
    let mut text = String::new();
    for tok in amble {
        match tok {
            Tok::Bare(c) => text.push(*c),
            _ => return Ok(None),
        }
    }
    let words = super::brace_seq::terms(&text).map_err(|()| Unknowable)?;
    Ok(words.map(|ws| {
        ws.into_iter()
            .map(|w| w.chars().map(Tok::Bare).collect())
            .collect()
    }))
}
