//! Quoting and text: quotes marked and stripped, escapes undone.

use super::*;
use shuck_ast::LiteralText;

pub(crate) fn literal<'a>(text: &'a LiteralText, src: &'a str, span: shuck_ast::Span) -> &'a str {
    text.as_str(src, span)
}

pub(crate) fn append(pieces: &mut [Piece], text: &str) {
    for p in pieces {
        p.text.push_str(text);
    }
}

pub(crate) fn mark_quoted(pieces: &mut [Piece]) {
    for p in pieces {
        p.quoted = true;
    }
}

pub(crate) fn strip_quotes(raw: &str) -> &str {
    raw.strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .unwrap_or(raw)
}

/// Unquoted text: a backslash quotes the next character; backslash-newline vanishes;
/// glob characters are marked (see [`GLOBS`]).
pub(crate) fn unescape_bare(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    let class_closes = raw.contains(']');
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            '*' => out.push(GLOBS[0].0),
            '?' => out.push(GLOBS[1].0),
            '[' if class_closes && raw.len() > 1 => out.push(GLOBS[2].0),
            _ => out.push(c),
        }
    }
    out
}

/// Inside double quotes a backslash quotes only `$`, `` ` ``, `"`, `\` and newline.
pub(crate) fn unescape_double(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    out.extend(chars.next());
                    continue;
                }
                Some('\n') => {
                    chars.next();
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}
