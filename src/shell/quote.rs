//! Words → shell text that a POSIX shell (and bash) splits back into exactly those words.
//! A refusal echoes commands and fills usages with it, so a pasted suggestion runs what the
//! agent wrote, and no message ever holds a control character.

use super::UNKNOWN;

/// One word as shell text: bare when nothing in it is special, `'…'` otherwise, `$'…'`
/// when it holds a control character (escaped, so the text holds none).
pub fn quote(word: &str) -> String {
    if word.is_empty() {
        return "''".to_string();
    }
    if word.chars().all(is_bare) {
        return word.to_string();
    }
    if word.chars().any(char::is_control) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if (c as u32) < 0x80 && c.is_control() => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('\'');
        return out;
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// One word as shell text for the walk to read again (a recipe's or a script's arguments
/// written into its code): bare or `'…'` as [`quote`] gives it, but never `$'…'`, so a part
/// that cannot be known stays the marker it is, and is read as unknown again rather than as
/// an escaped byte.
pub fn requoted(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_bare) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// Words as one command line: each quoted, except a word holding a part that cannot be
/// known, which is shown as the command wrote it (`"$APP_DIR"`), from `written`.
pub fn join(words: &[String], written: &[(String, String)]) -> String {
    words
        .iter()
        .enumerate()
        .map(|(i, word)| shown(word, written, i == 0))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One word as shell text (see [`join`]); `first`: it stands where a program does, so an
/// `=` in it is quoted too (bare, it would be an assignment).
pub fn shown(word: &str, written: &[(String, String)], first: bool) -> String {
    if let Some((_, raw)) = written.iter().find(|(w, _)| w == word) {
        return one_line(raw);
    }
    if word.contains(UNKNOWN) {
        return quote(&word.replace(UNKNOWN, "…"));
    }
    if first && word.contains('=') {
        return format!("'{}'", word.replace('\'', "'\\''"));
    }
    quote(word)
}

/// Source text on one line: control characters (a newline in a heredoc) become spaces.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '_' | '-' | '.' | '/' | ',' | ':' | '@' | '%' | '+' | '=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requoted_keeps_the_unknown_marker_where_quote_escapes_it() {
        let word = format!("db{UNKNOWN}.lan");
        assert_eq!(requoted(&word), format!("'db{UNKNOWN}.lan'"));
        assert_eq!(quote(&word), "$'db\\x00.lan'");
        assert_eq!(requoted("it's"), "'it'\\''s'");
        assert_eq!(requoted("web-01"), "web-01");
        assert_eq!(requoted(""), "''");
    }

    #[test]
    fn words_come_back_whole() {
        let words: Vec<String> = ["mesh", "cd /srv && make", "it's", "", "a\nb", "x=1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let text = join(&words, &[]);
        assert!(!text.chars().any(char::is_control), "{text}");
        let script = crate::shell::parse(&text, 0, &Default::default()).unwrap();
        assert_eq!(script.commands[0].words, words);
    }

    #[test]
    fn unknown_words_are_shown_as_written() {
        let written = vec![(format!("ls {UNKNOWN}"), "\"ls $D\"".to_string())];
        assert_eq!(
            join(&["ssh".into(), format!("ls {UNKNOWN}")], &written),
            "ssh \"ls $D\""
        );
    }
}
