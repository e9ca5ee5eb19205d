//! Aliases and functions the user's startup files define, so `b` (from `alias b='ssh build'`)
//! and `deploy` (from `deploy() { ssh web "$@"; }`) are judged as what they run.
//!
//! Aliases come from the project's shell walk (bash quoting, `$HOME` known); function
//! bodies are cut from the source by `shuck-parser`'s spans, so the extent is the parser's,
//! heredocs and nested braces included. A name given two different definitions anywhere
//! (branches, files, `unalias`) is [`Value::Unknown`]: which one bash ends with is not known.

use super::Value;
use super::read::{Files, Read};
use shuck_ast::{Command, CompoundCommand, Stmt, StmtSeq};
use shuck_parser::parser::ParseStatus;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Files sourced within startup files, followed this deep.
pub const MAX_SOURCE_DEPTH: usize = 4;

/// What one file defines and sources.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Scan {
    pub aliases: Vec<(String, Value)>,
    /// Name → the body's source text (`{ …; }`), for the caller to parse.
    pub functions: Vec<(String, Value)>,
    /// Paths given to `.`/`source`, `~/` expanded; unknown when not literal.
    pub sources: Vec<Value>,
    /// False when the file could not be parsed whole: it may define more.
    pub complete: bool,
}

/// Every definition across the startup files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Definitions {
    pub aliases: BTreeMap<String, Value>,
    pub functions: BTreeMap<String, Value>,
    /// False when a file, or a file it sources, could not be read or parsed: a name not
    /// found here may still be an alias or function.
    pub complete: bool,
}

/// The aliases, functions and sourced paths of one startup file's text.
pub fn scan(text: &str, home: &str) -> Scan {
    scan_at(text, home, 0)
}

fn scan_at(text: &str, home: &str, depth: usize) -> Scan {
    let mut scan = Scan::default();
    let inherited = HashMap::from([("HOME".to_string(), vec![home.to_string()])]);
    let Ok(script) = crate::shell::parse(text, 0, &inherited) else {
        return scan;
    };
    scan.complete = script.incomplete.is_none();
    // Payloads (`bash -c '…'`, ssh's remote command) run elsewhere: what they define
    // does not reach this shell. `eval` is followed below instead.
    for command in script.commands.iter().filter(|c| c.depth == 0) {
        match command.words.first().map(String::as_str) {
            Some("alias") => {
                for word in command.words[1..].iter().filter(|w| !w.starts_with('-')) {
                    if let Some((name, value)) = word.split_once('=') {
                        scan.aliases.push((name.to_string(), known(value)));
                    }
                }
            }
            Some("unalias") => {
                for name in command.words[1..].iter().filter(|w| !w.starts_with('-')) {
                    scan.aliases.push((name.clone(), Value::Unknown));
                }
            }
            // Text only known when the shell starts may define anything.
            Some("eval") if !command.words.iter().all(|w| crate::shell::is_known(w)) => {
                scan.complete = false;
            }
            // eval's known text runs as code of this file: its definitions count.
            Some("eval") if depth < MAX_SOURCE_DEPTH => {
                let inner = scan_at(&command.words[1..].join(" "), home, depth + 1);
                scan.complete &= inner.complete;
                scan.aliases.extend(inner.aliases);
                scan.functions.extend(inner.functions);
                scan.sources.extend(inner.sources);
            }
            Some("eval") => scan.complete = false,
            Some("." | "source") => {
                let path = command.words.get(1).map_or("", String::as_str);
                let path = match path.strip_prefix("~/") {
                    Some(rest) => format!("{home}/{rest}"),
                    None => path.to_string(),
                };
                // Bash looks a slash-less name up in PATH, and a relative one in a cwd
                // the startup files do not fix.
                let literal = path.starts_with('/') && crate::shell::is_known(&path);
                scan.sources.push(if literal {
                    Value::Known(path)
                } else {
                    Value::Unknown
                });
            }
            _ => {}
        }
    }
    let parsed = shuck_parser::parser::Parser::new(text).parse();
    // A recovered parse may have cut a body in the wrong place: no body beats a wrong one.
    if parsed.terminal_error.is_some() || parsed.status != ParseStatus::Clean {
        scan.complete = false;
        return scan;
    }
    functions(&parsed.file.body, text, &mut scan.functions);
    scan
}

fn known(value: &str) -> Value {
    if crate::shell::is_known(value) {
        Value::Known(value.to_string())
    } else {
        Value::Unknown
    }
}

fn functions(seq: &StmtSeq, text: &str, found: &mut Vec<(String, Value)>) {
    for stmt in &seq.stmts {
        function_in(stmt, text, found);
    }
}

fn function_in(stmt: &Stmt, text: &str, found: &mut Vec<(String, Value)>) {
    match &stmt.command {
        Command::Function(definition) => {
            let body = body_text(definition, text);
            for entry in &definition.header.entries {
                match &entry.static_name {
                    Some(name) => found.push((name.as_str().to_string(), body.clone())),
                    None => found.push((entry.word.span.slice(text).to_string(), Value::Unknown)),
                }
            }
            // A function defined inside another exists once the outer one has run.
            function_in(&definition.body, text, found);
        }
        Command::Binary(binary) => {
            function_in(&binary.left, text, found);
            function_in(&binary.right, text, found);
        }
        Command::Compound(CompoundCommand::BraceGroup(seq)) => functions(seq, text, found),
        Command::Compound(CompoundCommand::If(branch)) => {
            functions(&branch.then_branch, text, found);
            for (_, body) in &branch.elif_branches {
                functions(body, text, found);
            }
            if let Some(body) = &branch.else_branch {
                functions(body, text, found);
            }
        }
        Command::Compound(CompoundCommand::For(body)) => functions(&body.body, text, found),
        Command::Compound(CompoundCommand::While(body)) => functions(&body.body, text, found),
        Command::Compound(CompoundCommand::Case(case)) => {
            for item in &case.cases {
                functions(&item.body, text, found);
            }
        }
        _ => {}
    }
}

/// The compound command after the header, with its redirections: `{ …; } > log` parses
/// alone as what a call runs. The parser's spans place the end after any heredoc.
fn body_text(definition: &shuck_ast::FunctionDef, text: &str) -> Value {
    let header_end = match (
        &definition.header.trailing_parens_span,
        definition.header.entries.last(),
    ) {
        (Some(parens), _) => parens.end.offset(),
        (None, Some(entry)) => entry.word.span.end.offset(),
        (None, None) => return Value::Unknown,
    };
    match text.get(header_end..definition.span.end.offset()) {
        Some(body) => {
            // The span runs on over the statement's own terminator.
            let body = body.trim().trim_end_matches([';', '&']).trim_end();
            if body.is_empty() {
                Value::Unknown
            } else {
                Value::Known(body.to_string())
            }
        }
        None => Value::Unknown,
    }
}

impl Definitions {
    fn add(&mut self, scan: Scan) {
        self.complete &= scan.complete;
        merge(&mut self.aliases, scan.aliases);
        merge(&mut self.functions, scan.functions);
    }
}

fn merge(into: &mut BTreeMap<String, Value>, found: Vec<(String, Value)>) {
    for (name, value) in found {
        match into.get(&name) {
            Some(existing) if *existing != value => {
                into.insert(name, Value::Unknown);
            }
            Some(_) => {}
            None => {
                into.insert(name, value);
            }
        }
    }
}

/// The startup files bash may read for the agent's shell. bash finds them through `$HOME`
/// (unlike ssh, which asks the passwd entry), so `home` is the agent shell's `HOME`.
pub fn startup_files(home: &str) -> Vec<String> {
    [
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".bashrc",
        ".bash_aliases",
    ]
    .iter()
    .map(|name| format!("{home}/{name}"))
    .collect()
}

/// Reads the startup files and what they source (bounded), and merges their definitions.
pub fn read(home: &str, files: &mut dyn Files) -> Definitions {
    let mut definitions = Definitions {
        complete: true,
        ..Definitions::default()
    };
    let mut seen = HashSet::new();
    let mut queue: Vec<(String, usize)> = startup_files(home).into_iter().map(|f| (f, 0)).collect();
    queue.reverse();
    while let Some((path, depth)) = queue.pop() {
        if !seen.insert(path.clone()) {
            continue;
        }
        let text = match files.read(&path) {
            Read::Text(text) => text,
            Read::Absent => continue,
            Read::Unreadable => {
                definitions.complete = false;
                continue;
            }
        };
        let mut scan = scan(&text, home);
        for source in std::mem::take(&mut scan.sources) {
            match source {
                Value::Known(path) if depth < MAX_SOURCE_DEPTH => queue.push((path, depth + 1)),
                _ => definitions.complete = false,
            }
        }
        definitions.add(scan);
    }
    definitions
}

#[cfg(test)]
#[path = "startup_tests.rs"]
mod tests;
