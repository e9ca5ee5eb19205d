//! Where a variable's value is certain and where it is not: program order replaces a
//! value, a branch or loop adds to the values it may hold, a subshell's assignments stay
//! in it; and functions, whose bodies run with the caller's arguments.

use super::*;
use shuck_ast::FunctionDef;

/// Nested function calls followed, at most; deeper recursion is unverifiable.
const MAX_CALL_DEPTH: usize = 8;
/// Function calls followed in one source, at most (`f() { f; f; f; }` grows as a tree).
const MAX_CALLS: usize = 256;

/// A change a subshell made, with the value before it.
pub(crate) enum Undo {
    Var(String, Option<Vec<String>>),
    Array(String, Option<Vec<String>>),
}

fn restore(map: &mut HashMap<String, Vec<String>>, name: String, old: Option<Vec<String>>) {
    match old {
        Some(value) => {
            map.insert(name, value);
        }
        None => {
            map.remove(&name);
        }
    }
}
/// Positional parameters kept in the variables while a function's body is walked.
const POSITIONAL: [&str; 4] = ["@", "*", "#", "0"];

impl Walker<'_> {
    /// Runs `walk` where its assignments may or may not happen (a branch, a loop body, the
    /// right side of `&&`): each adds a possible value instead of replacing the value.
    pub(crate) fn uncertain(&mut self, walk: impl FnOnce(&mut Self)) {
        self.uncertain += 1;
        walk(self);
        self.uncertain -= 1;
    }

    /// The commands of a command or process substitution's body, walked in a subshell
    /// with no input of the outer command's.
    pub(in crate::shell) fn nested(&mut self, body: &StmtSeq) -> Vec<Command> {
        let start = self.commands.len();
        let saved = self.next_stdin.take();
        let saved_files = std::mem::take(&mut self.next_stdin_files);
        self.feeding += 1;
        self.subshell(|w| w.seq(body));
        self.feeding -= 1;
        self.next_stdin = saved;
        self.next_stdin_files = saved_files;
        self.commands[start.min(self.commands.len())..].to_vec()
    }

    /// Runs `walk` in a subshell: its assignments do not reach the commands after it.
    /// What it changed is undone from a log, so a subshell costs what it assigns, not
    /// the size of every variable (thousands of `$( )` in one command stay cheap).
    pub(crate) fn subshell<T>(&mut self, walk: impl FnOnce(&mut Self) -> T) -> T {
        self.undo.push(Vec::new());
        let positional = self.positional.clone();
        let out = walk(self);
        self.positional = positional;
        let log = self.undo.pop().unwrap_or_default();
        for change in log.into_iter().rev() {
            match change {
                Undo::Var(name, old) => {
                    if let Some(values) = self.vars.get(&name) {
                        let kept = self.subshell_values.entry(name.clone()).or_default();
                        for value in values {
                            if !kept.contains(value) {
                                kept.push(value.clone());
                            }
                        }
                    }
                    restore(&mut self.vars, name, old)
                }
                Undo::Array(name, old) => restore(&mut self.arrays, name, old),
            }
        }
        out
    }

    /// Logs a variable's value before a change, when inside a subshell.
    pub(crate) fn log_var(&mut self, name: &str) {
        if let Some(frame) = self.undo.last_mut() {
            frame.push(Undo::Var(name.to_string(), self.vars.get(name).cloned()));
        }
    }

    /// Sets or removes an array's elements (logged for a subshell).
    pub(crate) fn set_array(&mut self, name: &str, elements: Option<Vec<String>>) {
        if let Some(frame) = self.undo.last_mut() {
            frame.push(Undo::Array(
                name.to_string(),
                self.arrays.get(name).cloned(),
            ));
        }
        restore(&mut self.arrays, name.to_string(), elements);
    }

    /// A loop body: it may run any number of times, so a variable it builds from its own
    /// value (`h=$h-x`) may hold values the walk does not list: unknown.
    pub(crate) fn loop_body(&mut self, walk: impl FnOnce(&mut Self)) {
        self.loops += 1;
        self.uncertain(walk);
        self.loops -= 1;
    }

    /// Whether an assignment's word reads the variable it assigns.
    pub(crate) fn reads_itself(&self, name: &str, word: &shuck_ast::Word) -> bool {
        let text = word.span.slice(self.src);
        text.contains(&format!("${name}")) || text.contains(&format!("${{{name}"))
    }

    /// `f() { … }`: the body runs at each call, walked there with the call's arguments. A
    /// function never called runs nothing (`uncalled_functions`).
    pub(crate) fn define(&mut self, function: &FunctionDef) {
        for name in function.header.static_names() {
            let name = name.as_str().to_string();
            self.functions.insert(name.clone(), function.body.clone());
            if !self.uncalled.contains(&name) {
                self.uncalled.push(name);
            }
        }
    }

    /// The functions the walk saw no call of: each is walked as if called with unknown
    /// arguments where something the walk cannot follow may call it: its name anywhere else
    /// in the source (`trap f EXIT`, `eval f`, `export -f f; bash -c f`, `"$(echo f)"`), or
    /// a program word that cannot be known. A function nothing can call runs nothing.
    pub(crate) fn uncalled_functions(&mut self) {
        let mut walked: Vec<String> = Vec::new();
        while let Some(name) = self.uncalled.iter().find(|n| !walked.contains(n)).cloned() {
            walked.push(name.clone());
            if !self.may_be_called(&name) {
                continue;
            }
            let Some(body) = self.functions.get(&name).cloned() else {
                continue;
            };
            self.subshell(|walker| {
                walker.set_positional(None);
                walker.uncertain(|w| w.stmt(&body));
            });
        }
    }

    fn may_be_called(&self, name: &str) -> bool {
        let unknown_program = self
            .commands
            .iter()
            .any(|c| c.words.first().is_none_or(|w| w.contains(UNKNOWN)));
        let part_of_name = |c: char| c.is_alphanumeric() || "_-.:".contains(c);
        let mentions = self
            .src
            .match_indices(name)
            .filter(|(at, _)| {
                let before = self.src[..*at].chars().next_back();
                let after = self.src[at + name.len()..].chars().next();
                !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
            })
            .count();
        unknown_program || mentions > 1
    }

    /// `f ARGS…` where `f` is a function defined earlier: its body runs with `$1`…, `$@`.
    pub(crate) fn call(&mut self, words: &[String]) {
        let Some(body) = words.first().and_then(|w| self.functions.get(w)).cloned() else {
            return;
        };
        self.uncalled.retain(|n| Some(n) != words.first());
        if self.calls >= MAX_CALL_DEPTH || self.calls_made >= MAX_CALLS {
            self.incomplete = Some(format!(
                "its functions call each other deeper than {MAX_CALL_DEPTH} or more than {MAX_CALLS} times"
            ));
            return;
        }
        self.calls_made += 1;
        let saved = self.positional.clone();
        self.set_positional(Some(words[1..].to_vec()));
        self.calls += 1;
        self.locals.push(Vec::new());
        self.stmt(&body);
        // A function's `local` variables end with it.
        for change in self.locals.pop().unwrap_or_default().into_iter().rev() {
            if let Undo::Var(name, old) = change {
                self.log_var(&name);
                restore(&mut self.vars, name, old);
            }
        }
        self.calls -= 1;
        self.set_positional(saved);
    }

    /// `local NAME=…` (or `declare`, `typeset`) inside a function being called: its value
    /// before is put back when the call ends.
    pub(crate) fn local(&mut self, variant: &str, name: &str) {
        if !matches!(variant, "local" | "declare" | "typeset") {
            return;
        }
        let before = self.vars.get(name).cloned();
        if let Some(frame) = self.locals.last_mut() {
            frame.push(Undo::Var(name.to_string(), before));
        }
    }

    /// `shift [N]` inside a function.
    pub(crate) fn shift(&mut self, words: &[String]) {
        let n = match words.get(1) {
            Some(n) => n.parse::<usize>().ok(),
            None => Some(1),
        };
        let shifted = match (self.positional.clone(), n) {
            (Some(args), Some(n)) if n <= args.len() => Some(args[n..].to_vec()),
            (Some(args), Some(_)) => Some(args),
            _ => None,
        };
        self.set_positional(shifted);
    }

    /// Sets `$1`…, `$@`, `$*`, `$#` to known arguments, or to unknown.
    pub(crate) fn set_positional(&mut self, args: Option<Vec<String>>) {
        let old = self.positional.as_ref().map_or(0, Vec::len);
        for i in 1..=old.max(args.as_ref().map_or(0, Vec::len)).max(9) {
            self.log_var(&i.to_string());
            self.vars.remove(&i.to_string());
        }
        for name in POSITIONAL {
            self.log_var(name);
            self.vars.remove(name);
        }
        if let Some(args) = &args {
            for (i, arg) in args.iter().enumerate() {
                self.vars.insert((i + 1).to_string(), vec![arg.clone()]);
            }
            for i in args.len() + 1..=9 {
                self.vars.insert(i.to_string(), vec![String::new()]);
            }
            let split = crate::shell::expand::SPLIT.to_string();
            self.vars.insert("@".into(), vec![args.join(&split)]);
            self.vars.insert("*".into(), vec![args.join(" ")]);
            self.vars.insert("#".into(), vec![args.len().to_string()]);
        }
        self.positional = args;
    }
}

/// The positional parameters a script is given (a `-c` script's words, as `unwrap` sets
/// `$#` and `$@`), so that `shift` and `set --` work on them; `None` when not known.
pub(super) fn given_positional(vars: &HashMap<String, Vec<String>>) -> Option<Vec<String>> {
    let ([count], [all]) = (vars.get("#")?.as_slice(), vars.get("@")?.as_slice()) else {
        return None;
    };
    let count: usize = count.parse().ok()?;
    let params: Vec<String> = match count {
        0 => Vec::new(),
        _ => all
            .split(crate::shell::expand::SPLIT)
            .map(String::from)
            .collect(),
    };
    (params.len() == count).then_some(params)
}
