//! One line of an ssh configuration, split as ssh splits it: `Keyword args`, `Keyword=args`
//! or `Keyword = args`; arguments split on blanks, with `"…"`/`'…'` quoting and `\` escaping
//! a quote, a backslash or (unquoted) a blank; a `#` opening an argument starts a comment.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The keyword in lower case: ssh's keywords are case-insensitive.
    pub keyword: String,
    pub args: Vec<String>,
    /// The text after the keyword, unsplit: `ProxyCommand` takes its value this way.
    pub rest: String,
}

/// Why ssh would reject a line (and refuse to run at all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine;

pub fn line(text: &str) -> Result<Option<Line>, BadLine> {
    let text = text.trim_start_matches([' ', '\t', '\r', '\n']);
    let text = text.trim_end_matches(['\r', '\n']);
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let end = text.find([' ', '\t', '=']).unwrap_or(text.len());
    let keyword = text[..end].to_ascii_lowercase();
    let mut rest = text[end..].trim_start_matches([' ', '\t']);
    if let Some(after) = rest.strip_prefix('=') {
        rest = after.trim_start_matches([' ', '\t']);
    }
    let args = split(rest)?;
    Ok(Some(Line {
        keyword,
        args,
        rest: rest.trim_end_matches([' ', '\t']).to_string(),
    }))
}

fn split(text: &str) -> Result<Vec<String>, BadLine> {
    let mut args = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        let Some(&first) = chars.peek() else {
            return Ok(args);
        };
        if first == '#' {
            return Ok(args);
        }
        let mut arg = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (c, quote) {
                ('\\', _) => match chars.peek() {
                    Some(&next @ ('\\' | '"' | '\'')) => {
                        arg.push(next);
                        chars.next();
                    }
                    Some(&next @ (' ' | '\t')) if quote.is_none() => {
                        arg.push(next);
                        chars.next();
                    }
                    _ => arg.push('\\'),
                },
                ('"' | '\'', None) => quote = Some(c),
                (c, Some(q)) if c == q => quote = None,
                (' ' | '\t', None) => break,
                (c, _) => arg.push(c),
            }
        }
        if quote.is_some() {
            return Err(BadLine);
        }
        args.push(arg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> (String, Vec<String>) {
        let line = line(text).unwrap().unwrap();
        (line.keyword, line.args)
    }

    #[test]
    fn the_three_keyword_forms_and_case() {
        let expected = ("hostname".to_string(), vec!["db".to_string()]);
        assert_eq!(args("HostName db"), expected);
        assert_eq!(args("  HOSTNAME=db"), expected);
        assert_eq!(args("\thostname = db # a comment"), expected);
        assert_eq!(line("# only a comment").unwrap(), None);
        assert_eq!(line("   ").unwrap(), None);
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(args(r#"Host "a b" 'c d' e\ f"#).1, ["a b", "c d", "e f"]);
        assert_eq!(
            args(r#"Match exec "touch \"x\"""#).1,
            ["exec", "touch \"x\""]
        );
        assert_eq!(args(r"X a\b").1, [r"a\b"]);
        assert_eq!(args(r##"X "#notcomment""##).1, ["#notcomment"]);
        assert_eq!(line(r#"Host "open"#), Err(BadLine));
    }

    #[test]
    fn the_rest_is_kept_raw_for_proxy_command() {
        let line = line("ProxyCommand  ssh -W %h:%p 'jump'  ")
            .unwrap()
            .unwrap();
        assert_eq!(line.rest, "ssh -W %h:%p 'jump'");
    }
}
