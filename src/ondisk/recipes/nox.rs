//! `noxfile.py`: each `@nox.session` function's `session.run(…)` calls (and `run_always`,
//! `run_install`), their string arguments as the command's words and any other argument
//! unknown; `session.notify("other")` runs another session. A session that also calls
//! Python's own ways of running programs (`subprocess`, `os.system`) runs unknown code.
//! Sessions run by default: all of them, or `nox.options.sessions` when it is a list of
//! strings.

use super::{Recipe, Recipes, Step};
use crate::shell::UNKNOWN;
use crate::shell::quote::requoted;

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let mut recipes = Recipes::default();
    let lines: Vec<&str> = text.lines().collect();
    let mut decorated: Option<Option<String>> = None;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        let trimmed = line.trim();
        if trimmed.starts_with("@nox.session") || trimmed.starts_with("@session") {
            decorated = Some(keyword_string(trimmed, "name"));
        } else if let Some(rest) = trimmed.strip_prefix("def ")
            && let Some(name) = decorated.take()
        {
            let function = rest.split('(').next().unwrap_or("").trim().to_string();
            let indent = line.len() - line.trim_start().len();
            let mut body = String::new();
            at += 1;
            while at < lines.len()
                && (lines[at].trim().is_empty()
                    || lines[at].len() - lines[at].trim_start().len() > indent)
            {
                body.push_str(lines[at]);
                body.push('\n');
                at += 1;
            }
            recipes.recipes.push(Recipe {
                name: name.unwrap_or(function),
                steps: steps(&body),
                ..Recipe::default()
            });
            continue;
        } else if trimmed.starts_with("nox.options.sessions") {
            recipes.default = string_list(trimmed).unwrap_or_else(|| vec![UNKNOWN.to_string()]);
        }
        at += 1;
    }
    if recipes.default.is_empty() {
        recipes.default = recipes.recipes.iter().map(|r| r.name.clone()).collect();
    }
    Some(recipes)
}

fn keyword_string(text: &str, key: &str) -> Option<String> {
    let at = text.find(&format!("{key}="))? + key.len() + 1;
    let rest = &text[at..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(quote)?;
    Some(rest[1..1 + end].to_string())
}

fn string_list(text: &str) -> Option<Vec<String>> {
    let open = text.find('[')?;
    let close = text.rfind(']')?;
    text[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(literal)
        .collect()
}

/// A plain Python string literal's text (no prefix, no escapes), if that is what it is.
fn literal(text: &str) -> Option<String> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(['\\', quote])).then(|| inner.to_string())
}

fn steps(body: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    if [
        "subprocess",
        "os.system",
        "os.popen",
        "os.exec",
        "pty.spawn",
    ]
    .iter()
    .any(|p| body.contains(p))
    {
        steps.push(Step::Unknown);
    }
    for call in [
        "session.run(",
        "session.run_always(",
        "session.run_install(",
        "session.notify(",
    ] {
        let mut rest = body;
        while let Some(start) = rest.find(call) {
            let inner = &rest[start + call.len()..];
            let Some(args) = arguments(inner) else {
                steps.push(Step::Unknown);
                break;
            };
            let positional: Vec<&str> = args
                .iter()
                .map(String::as_str)
                .filter(|a| !is_keyword(a))
                .collect();
            if call == "session.notify(" {
                match positional.first().and_then(|a| literal(a)) {
                    Some(name) => steps.push(Step::Recipe(name, vec![])),
                    None => steps.push(Step::Unknown),
                }
            } else {
                let words: Vec<String> = positional
                    .iter()
                    .map(|a| literal(a).map_or(UNKNOWN.to_string(), |w| requoted(&w)))
                    .collect();
                steps.push(Step::Shell(words.join(" ")));
            }
            rest = inner;
        }
    }
    steps
}

fn is_keyword(arg: &str) -> bool {
    let name: String = arg
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    !name.is_empty()
        && arg[name.len()..].trim_start().starts_with('=')
        && !arg[name.len()..].trim_start().starts_with("==")
}

/// The top-level comma-separated arguments up to the call's closing parenthesis.
fn arguments(text: &str) -> Option<Vec<String>> {
    let (mut depth, mut quote, mut current, mut out) =
        (0usize, None::<char>, String::new(), Vec::new());
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (None, '(' | '[' | '{') => {
                depth += 1;
                current.push(c);
            }
            (None, ')') if depth == 0 => {
                if !current.trim().is_empty() {
                    out.push(current.trim().to_string());
                }
                return Some(out);
            }
            (None, ')' | ']' | '}') => {
                depth = depth.checked_sub(1)?;
                current.push(c);
            }
            (None, ',') if depth == 0 => out.push(std::mem::take(&mut current).trim().to_string()),
            (None, c) => current.push(c),
        }
    }
    None
}
