//! The shell code a makefile runs, so `make` and `make -f FILE` are judged by their recipes.
//!
//! Every recipe line of every target (make may run any of them), the `@`/`-`/`+` prefixes
//! stripped; a line continued with `\` stays one line with its backslash-newline, which is
//! what make hands the shell. Code make runs while reading (`$(shell …)`, `VAR != …`) is
//! returned too. Variables stay as written (`$(VAR)`): the caller marks them unknown.

use super::read::{Files, Read};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Makefile {
    /// (targets, recipe lines) per rule, in file order.
    pub recipes: Vec<(String, Vec<String>)>,
    /// Per rule of `recipes`, the lines make runs even in a dry run (`make -n`): those with
    /// the `+` prefix or naming `$(MAKE)`.
    pub dry_run: Vec<Vec<String>>,
    /// Commands make runs while reading the file.
    pub parse_time: Vec<String>,
    /// Files named by `include`: their recipes are not here.
    pub includes: Vec<String>,
    /// `.ONESHELL` is set: each rule's lines run as one script, to be judged joined.
    pub one_shell: bool,
    /// The value given to `SHELL` or `.SHELLFLAGS`, as written: recipes are shell code only
    /// for a shell the caller knows.
    pub shell: Vec<String>,
    /// False when something changes how lines are read (`.RECIPEPREFIX`) or hides
    /// commands from this reading (`define`, `include`).
    pub complete: bool,
}

/// Joins `\`-continued lines, keeping the backslash-newline (recipes need it as written).
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let joined = match current.take() {
            // make drops one recipe prefix tab from a continued recipe line.
            Some(mut open) => {
                open.push('\n');
                open.push_str(line.strip_prefix('\t').unwrap_or(line));
                open
            }
            None => line.to_string(),
        };
        let trailing = joined.chars().rev().take_while(|&c| c == '\\').count();
        if trailing % 2 == 1 {
            current = Some(joined);
        } else {
            lines.push(joined);
        }
    }
    lines.extend(current);
    lines
}

/// A recipe line make runs under `-n` too: a `+` among its prefixes, or a recursive make.
fn runs_in_dry_run(line: &str) -> bool {
    let prefixes = &line[..line.len() - strip_prefixes(line).len()];
    prefixes.contains('+') || line.contains("$(MAKE)") || line.contains("${MAKE}")
}

fn strip_prefixes(line: &str) -> &str {
    line.trim_start_matches(['@', '-', '+', ' ', '\t'])
}

/// `$(shell …)` / `${shell …}` contents, parentheses balanced.
fn shell_calls(text: &str, into: &mut Vec<String>) {
    for (open, close) in [("$(shell ", ')'), ("${shell ", '}')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let body = &rest[start + open.len()..];
            let opener = if close == ')' { '(' } else { '{' };
            let mut depth = 1;
            let mut end = None;
            for (index, c) in body.char_indices() {
                if c == opener {
                    depth += 1;
                } else if c == close {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(index);
                        break;
                    }
                }
            }
            let Some(end) = end else {
                into.push(body.to_string());
                break;
            };
            into.push(body[..end].to_string());
            rest = &body[end..];
        }
    }
}

const CONDITIONALS: [&str; 6] = ["ifeq", "ifneq", "ifdef", "ifndef", "else", "endif"];
const DIRECTIVES: [&str; 6] = [
    "export", "unexport", "override", "vpath", "undefine", "private",
];

pub fn parse(text: &str) -> Makefile {
    let mut makefile = Makefile {
        complete: true,
        ..Makefile::default()
    };
    let mut in_rule = false;
    let mut in_define = false;
    for line in logical_lines(text) {
        shell_calls(&line, &mut makefile.parse_time);
        if in_define {
            in_define = line.trim() != "endef";
            continue;
        }
        if let Some(recipe) = line.strip_prefix('\t') {
            if in_rule {
                let command = strip_prefixes(recipe);
                let forced = runs_in_dry_run(recipe);
                if let Some((_, lines)) = makefile.recipes.last_mut()
                    && !command.trim().is_empty()
                {
                    lines.push(command.to_string());
                    if forced && let Some(dry) = makefile.dry_run.last_mut() {
                        dry.push(command.to_string());
                    }
                }
            }
            continue;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let word = trimmed.split_whitespace().next().unwrap_or("");
        // A conditional inside a recipe does not end it; both branches are kept.
        if CONDITIONALS.contains(&word) {
            continue;
        }
        in_rule = false;
        match word {
            "define" => {
                in_define = true;
                makefile.complete = false;
                continue;
            }
            "include" | "-include" | "sinclude" => {
                makefile
                    .includes
                    .extend(trimmed.split_whitespace().skip(1).map(String::from));
                makefile.complete = false;
                continue;
            }
            _ => {}
        }
        let assignment = trimmed.find('=');
        let colon = trimmed.find(':');
        if trimmed.starts_with(".RECIPEPREFIX") {
            makefile.complete = false;
        }
        match (assignment, colon) {
            // `VAR != command` runs the command while make reads the file.
            (Some(eq), colon)
                if colon.is_none_or(|c| c >= eq.saturating_sub(2))
                    && trimmed[..eq].ends_with('!') =>
            {
                makefile
                    .parse_time
                    .push(trimmed[eq + 1..].trim().to_string());
            }
            (Some(eq), colon) if colon.is_none_or(|c| c >= eq.saturating_sub(2)) => {
                let name = trimmed[..eq].trim_end_matches([':', '?', '+', ' ', '\t']);
                let name = name.rsplit([' ', '\t']).next().unwrap_or(name);
                if name == "SHELL" || name == ".SHELLFLAGS" {
                    makefile.shell.push(trimmed[eq + 1..].trim().to_string());
                }
            }
            (_, Some(colon)) if !DIRECTIVES.contains(&word) => {
                let targets = trimmed[..colon].trim().to_string();
                makefile.one_shell |= targets == ".ONESHELL";
                let mut lines = Vec::new();
                let mut dry = Vec::new();
                if let Some((_, inline)) = trimmed[colon..].split_once(';') {
                    let command = strip_prefixes(inline);
                    if !command.trim().is_empty() {
                        lines.push(command.to_string());
                        if runs_in_dry_run(inline) {
                            dry.push(command.to_string());
                        }
                    }
                }
                makefile.recipes.push((targets, lines));
                makefile.dry_run.push(dry);
                in_rule = true;
            }
            _ => {}
        }
    }
    makefile
}

/// The makefile `make` reads in `cwd`: `-f FILE`, else GNUmakefile, makefile, Makefile.
/// `None` when there is none or it cannot be read within the bounds.
pub fn read(cwd: &str, file: Option<&str>, files: &mut dyn Files) -> Option<Makefile> {
    let at = |name: &str| {
        if name.starts_with('/') {
            name.to_string()
        } else {
            format!("{cwd}/{name}")
        }
    };
    let candidates = match file {
        Some(file) => vec![at(file)],
        None => ["GNUmakefile", "makefile", "Makefile"].map(at).to_vec(),
    };
    for path in candidates {
        match files.read(&path) {
            Read::Text(text) => return Some(parse(&text)),
            Read::Absent => continue,
            Read::Unreadable => return None,
        }
    }
    None
}

#[cfg(test)]
#[path = "make_tests.rs"]
mod tests;
