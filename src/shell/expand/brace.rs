//! Brace expansion on a word's parts, before any other expansion, as bash does it
//! ([`crate::bash_eval::brace`]): `{a,$x}` keeps a comma in `x`, and past its bound the
//! word is unknown, never its first words.

use super::*;
use crate::bash_eval::{Part, brace};

impl Walker<'_> {
    /// The fields of a word with active braces: one alternative, or unknown.
    pub(crate) fn brace_fields(&mut self, word: &Word) -> Vec<Vec<String>> {
        let unknown = || vec![vec![UNKNOWN.to_string()]];
        let mut parts = Vec::new();
        let mut quoted_any = false;
        let mut iter = word.parts.iter().peekable();
        while let Some(part) = iter.next() {
            match &part.kind {
                WordPart::Literal(text) => {
                    split_escapes(literal(text, self.src, part.span), &mut parts)
                }
                kind => {
                    quoted_any |= matches!(
                        kind,
                        WordPart::SingleQuoted { .. } | WordPart::DoubleQuoted { .. }
                    );
                    // bash reads `$x{a,b}` as `$xa $xb`: a bare name followed by a brace
                    // is read again after the braces.
                    let rescanned = matches!(kind, WordPart::Variable(_))
                        && part.span.slice(self.src).chars().nth(1) != Some('{')
                        && iter.peek().is_some_and(|next| {
                            matches!(next.kind, WordPart::Literal(_))
                                && next.span.slice(self.src).starts_with('{')
                        });
                    let value = if rescanned {
                        None
                    } else {
                        self.one_value(part)
                    };
                    parts.push(value.map_or(Part::Unknown, Part::Quoted));
                }
            }
        }
        let Ok(words) = brace::expand(&parts) else {
            return unknown();
        };
        let mut fields = Vec::with_capacity(words.len());
        for word in words {
            let mut text = String::new();
            for part in word {
                match part {
                    Part::Bare(s) => text.push_str(&unescape_bare(&s)),
                    Part::Quoted(s) => text.push_str(&s),
                    Part::Unknown => text.push(UNKNOWN),
                }
            }
            if quoted_any || !text.is_empty() {
                fields.push(text);
            }
        }
        vec![fields]
    }

    /// One part's value when it has exactly one, known or not, with no field splitting.
    fn one_value(&mut self, part: &WordPartNode) -> Option<String> {
        let mut pieces = vec![Piece::default()];
        self.parts(std::slice::from_ref(part), false, &mut pieces);
        match pieces.as_slice() {
            [one] if !one.text.contains(SPLIT) => Some(literal_globs(one.text.clone())),
            _ => None,
        }
    }
}

/// Unquoted literal text: a backslash quotes the next character (then literal to brace
/// expansion too); backslash-newline vanishes.
fn split_escapes(raw: &str, out: &mut Vec<Part>) {
    let mut bare = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            bare.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') | None => {}
            Some(next) => {
                if !bare.is_empty() {
                    out.push(Part::Bare(std::mem::take(&mut bare)));
                }
                out.push(Part::Quoted(next.to_string()));
            }
        }
    }
    if !bare.is_empty() {
        out.push(Part::Bare(bare));
    }
}
