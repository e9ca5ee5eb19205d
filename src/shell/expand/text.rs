//! Quoting and text: quotes marked and stripped, escapes undone, braces expanded (bounded).

use super::{GLOBS, Piece, SPLIT};
use crate::shell::{MAX_ALTERNATIVES, UNKNOWN};
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

/// Brace expansion past these sizes is not worked out.
pub(crate) const MAX_BRACE_BYTES: usize = 64 * 1024;

pub(crate) const MAX_BRACE_GROUPS: usize = 64;

/// Comma-list brace expansion (`s{s,}h`), the form that changes a word's text.
pub(crate) fn brace_expand(text: &str) -> Vec<String> {
    // Each group multiplies the words: past a bound the word's value is not worked out (it
    // cannot be known), and the names in it stay readable for "does it name the mesh".
    let unknown = || vec![text.replace('{', &UNKNOWN.to_string())];
    if text.len() > MAX_BRACE_BYTES || text.matches('{').count() > MAX_BRACE_GROUPS {
        return unknown();
    }
    let bytes = text.as_bytes();
    let Some(open) = bytes.iter().position(|&b| b == b'{') else {
        return vec![text.to_string()];
    };
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let Some(close) = close else {
        return vec![text.to_string()];
    };
    if commas.is_empty() {
        return vec![text.to_string()];
    }
    let (prefix, suffix) = (&text[..open], &text[close + 1..]);
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    let mut size = 0;
    for pair in bounds.windows(2) {
        let middle = &text[pair[0] + 1..pair[1]];
        for tail in brace_expand(&format!("{middle}{suffix}")) {
            if out.len() >= MAX_ALTERNATIVES {
                return out;
            }
            size += prefix.len() + tail.len();
            if size > MAX_BRACE_BYTES {
                return unknown();
            }
            out.push(format!("{prefix}{tail}"));
        }
    }
    // Brace expansion makes separate words.
    vec![out.join(&SPLIT.to_string())]
}
