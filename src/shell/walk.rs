//! The walk over shuck's tree: statements, lists, pipelines, compound commands, functions
//! and redirections, in the order bash would meet them.

mod arith;
mod commands;
mod decode;
pub(crate) mod find_output;
mod printf;
mod scope;

pub(crate) use find_output::prints_regular_files;
pub(crate) use printf::*;

use super::{Command, MAX_ALTERNATIVES, Script, Stdin, UNKNOWN};

/// The most text a variable's values may hold before its value counts as unknown.
const MAX_VALUE_BYTES: usize = 4 * 1024;
/// The most assigned text kept for "does the command name the mesh" (the source's own cap).
const MAX_MENTIONED_BYTES: usize = 256 * 1024;
use shuck_ast::{
    BinaryOp, BuiltinCommand, Command as Node, CompoundCommand, ConditionalExpr, DeclOperand, Stmt,
    StmtSeq,
};
use std::collections::HashMap;

pub(crate) struct Walker<'s> {
    pub(super) src: &'s str,
    depth: usize,
    pub(super) vars: HashMap<String, Vec<String>>,
    /// Arrays by name, their elements in order (`cmd=(ssh atlas)`; `"${cmd[@]}"`).
    pub(super) arrays: HashMap<String, Vec<String>>,
    mentioned: Vec<String>,
    mentioned_bytes: usize,
    /// Files whose content the command itself gave (see [`Command::files`]).
    pub(super) files: HashMap<String, String>,
    /// Files read whose content is not known (see [`Script::inputs`]).
    pub(super) inputs: Vec<String>,
    /// The next process substitution's `/dev/fd` number (bash counts down from 63).
    pub(super) next_fd: u32,
    /// `alias name=value` seen earlier in the command.
    aliases: HashMap<String, String>,
    pub(super) commands: Vec<Command>,
    pub(super) incomplete: Option<String>,
    /// Input waiting for the next simple command (the right side of a pipe, a redirection
    /// on a compound command).
    next_stdin: Option<Stdin>,
    /// That input is what `find -type f` prints: paths of regular files.
    next_stdin_files: bool,
    /// Files written by redirections on enclosing compound commands.
    outer_writes: Vec<String>,
    /// How many command or process substitutions the walk is inside.
    pub(super) feeding: usize,
    /// Branches and loop bodies around the command being walked (see [`Self::uncertain`]).
    uncertain: usize,
    /// Loop bodies around it.
    pub(super) loops: usize,
    /// Functions defined so far, by name.
    functions: HashMap<String, Box<Stmt>>,
    /// Functions defined and not called (yet), in the order they were defined.
    uncalled: Vec<String>,
    /// A function's arguments while its body is walked for a call.
    positional: Option<Vec<String>>,
    /// Function calls being walked, nested.
    calls: usize,
    /// Function calls walked in all.
    calls_made: usize,
    /// One log per subshell being walked: what to undo when it ends.
    undo: Vec<Vec<scope::Undo>>,
    /// Values a subshell assigned, gone from `vars` when it ended: still values the script's
    /// variables may hold for what reads them after the walk (`(export DOCKER_HOST=…; docker
    /// ps)`: the docker command ran inside with it).
    subshell_values: HashMap<String, Vec<String>>,
    /// One log per function call being walked: its `local` variables' earlier values.
    locals: Vec<Vec<scope::Undo>>,
}

impl<'s> Walker<'s> {
    pub(crate) fn new(src: &'s str, depth: usize, vars: HashMap<String, Vec<String>>) -> Self {
        let positional = scope::given_positional(&vars);
        Walker {
            src,
            depth,
            vars,
            arrays: HashMap::new(),
            mentioned: Vec::new(),
            mentioned_bytes: 0,
            files: HashMap::new(),
            inputs: Vec::new(),
            next_fd: 63,
            aliases: HashMap::new(),
            commands: Vec::new(),
            incomplete: None,
            next_stdin: None,
            next_stdin_files: false,
            outer_writes: Vec::new(),
            feeding: 0,
            uncertain: 0,
            loops: 0,
            functions: HashMap::new(),
            uncalled: Vec::new(),
            positional,
            calls: 0,
            calls_made: 0,
            undo: Vec::new(),
            subshell_values: HashMap::new(),
            locals: Vec::new(),
        }
    }

    pub(crate) fn finish(mut self) -> Script {
        self.uncalled_functions();
        let mut variables = self.vars;
        for (name, values) in self.subshell_values {
            let known = variables.entry(name).or_default();
            for value in values {
                if !known.contains(&value) {
                    known.push(value);
                }
            }
        }
        Script {
            commands: self.commands,
            variables,
            mentioned: self.mentioned,
            incomplete: self.incomplete,
            functions: self.functions.into_keys().collect(),
            inputs: self.inputs,
        }
    }

    pub(crate) fn seq(&mut self, seq: &StmtSeq) {
        for stmt in seq.iter() {
            self.stmt(stmt);
        }
    }

    pub(crate) fn stmt(&mut self, stmt: &Stmt) {
        let (stdin, writes) = self.redirects(&stmt.redirects);
        if let Some(stdin) = stdin {
            self.next_stdin = Some(stdin);
            self.next_stdin_files = false;
        }
        match &stmt.command {
            Node::Simple(simple) => self.simple(simple, writes),
            Node::Decl(decl) => {
                let mut words = vec![decl.variant.as_str().to_string()];
                let mut env = self.prefix_assignments(&decl.assignments);
                for operand in &decl.operands {
                    match operand {
                        DeclOperand::Assignment(a) => {
                            let (name, values) = self.assignment(a);
                            for v in &values {
                                env.push((name.clone(), v.clone()));
                            }
                            self.local(decl.variant.as_str(), &name);
                            self.assign(name, values);
                        }
                        DeclOperand::Flag(w) | DeclOperand::Dynamic(w) => {
                            for field in self.joined(w) {
                                // `export "A=b"` assigns too.
                                if let Some((name, value)) = field.split_once('=') {
                                    env.push((name.to_string(), value.to_string()));
                                    self.assign(name.to_string(), [value.to_string()]);
                                }
                                words.push(field);
                            }
                        }
                        DeclOperand::Name(v) => words.push(v.name.as_str().to_string()),
                    }
                }
                self.emit(words, env, writes);
            }
            Node::Builtin(builtin) => {
                let (name, words, assignments) = match builtin {
                    BuiltinCommand::Break(c) => (
                        "break",
                        c.depth.iter().chain(&c.extra_args).collect::<Vec<_>>(),
                        &c.assignments,
                    ),
                    BuiltinCommand::Continue(c) => (
                        "continue",
                        c.depth.iter().chain(&c.extra_args).collect(),
                        &c.assignments,
                    ),
                    BuiltinCommand::Return(c) => (
                        "return",
                        c.code.iter().chain(&c.extra_args).collect(),
                        &c.assignments,
                    ),
                    BuiltinCommand::Exit(c) => (
                        "exit",
                        c.code.iter().chain(&c.extra_args).collect(),
                        &c.assignments,
                    ),
                };
                let env = self.prefix_assignments(assignments);
                let mut all = vec![name.to_string()];
                for w in words {
                    all.extend(self.joined(w));
                }
                self.emit(all, env, writes);
            }
            Node::Binary(binary) => match binary.op {
                // Each stage of a pipeline is a subshell.
                BinaryOp::Pipe | BinaryOp::PipeAll => {
                    self.subshell(|w| w.pipe(&binary.left, &binary.right))
                }
                BinaryOp::And | BinaryOp::Or => {
                    self.stmt(&binary.left);
                    self.uncertain(|w| w.stmt(&binary.right));
                }
            },
            Node::Compound(compound) => {
                let before = self.outer_writes.len();
                self.outer_writes.extend(writes);
                self.compound(compound);
                self.outer_writes.truncate(before);
            }
            Node::Function(function) => self.define(function),
            Node::AnonymousFunction(function) => {
                for w in &function.args {
                    self.joined(w);
                }
                self.stmt(&function.body);
            }
        }
        self.next_stdin = None;
        self.next_stdin_files = false;
    }

    fn pipe(&mut self, left: &Stmt, right: &Stmt) {
        let start = self.commands.len();
        self.stmt(left);
        // A simple command (or the last stage of a pipeline) is emitted after the
        // substitutions in its words: its output is the last command's.
        let last_stage = matches!(&left.command, Node::Simple(_))
            || matches!(&left.command, Node::Binary(b) if matches!(b.op, BinaryOp::Pipe | BinaryOp::PipeAll));
        let (output, files) = match &self.commands[start.min(self.commands.len())..] {
            [only] => (output_of(only), prints_regular_files(only)),
            [.., last] if last_stage => (output_of(last), prints_regular_files(last)),
            _ => (Stdin::Unknown, false),
        };
        // Output that cannot be known may still become the next command's words (`| xargs
        // ssh`): what the left side names can flow into them.
        if !matches!(output, Stdin::Text(_)) {
            let from = start.min(self.commands.len());
            for command in self.commands[from..].iter_mut() {
                command.feeds = true;
            }
        }
        self.next_stdin = Some(output);
        self.next_stdin_files = files;
        self.stmt(right);
    }

    fn compound(&mut self, compound: &CompoundCommand) {
        match compound {
            CompoundCommand::If(c) => {
                self.seq(&c.condition);
                self.uncertain(|w| {
                    w.seq(&c.then_branch);
                    for (cond, body) in &c.elif_branches {
                        w.seq(cond);
                        w.seq(body);
                    }
                    if let Some(body) = &c.else_branch {
                        w.seq(body);
                    }
                });
            }
            CompoundCommand::For(c) => {
                let values = match &c.words {
                    Some(words) => words
                        .iter()
                        .flat_map(|w| self.fields(w).into_iter().flatten())
                        .collect(),
                    None => vec![UNKNOWN.to_string()],
                };
                for target in &c.targets {
                    let name = match &target.name {
                        Some(n) => n.as_str().to_string(),
                        None => continue,
                    };
                    self.assign(name, values.iter().cloned());
                }
                self.loop_body(|w| w.seq(&c.body));
            }
            CompoundCommand::Select(c) => {
                self.loop_variable(c.variable.as_str(), &c.words);
                self.loop_body(|w| w.seq(&c.body));
            }
            CompoundCommand::Foreach(c) => {
                self.loop_variable(c.variable.as_str(), &c.words);
                self.loop_body(|w| w.seq(&c.body));
            }
            CompoundCommand::Repeat(c) => {
                self.joined(&c.count);
                self.loop_body(|w| w.seq(&c.body));
            }
            CompoundCommand::ArithmeticFor(c) => {
                self.arith_command(c.init_span, c.init_ast.as_ref());
                self.loop_body(|w| {
                    w.arith_command(c.condition_span, c.condition_ast.as_ref());
                    w.seq(&c.body);
                    w.arith_command(c.step_span, c.step_ast.as_ref());
                });
            }
            CompoundCommand::While(c) => self.loop_body(|w| {
                w.seq(&c.condition);
                w.seq(&c.body);
            }),
            CompoundCommand::Until(c) => self.loop_body(|w| {
                w.seq(&c.condition);
                w.seq(&c.body);
            }),
            CompoundCommand::Case(c) => {
                self.joined(&c.word);
                self.uncertain(|w| {
                    for item in &c.cases {
                        // Patterns are expanded, substitutions and all, until one matches.
                        for pattern in &item.patterns {
                            w.pattern(pattern);
                        }
                        w.seq(&item.body);
                    }
                });
            }
            CompoundCommand::Subshell(body) => self.subshell(|w| w.seq(body)),
            CompoundCommand::BraceGroup(body) => self.seq(body),
            CompoundCommand::Arithmetic(c) => self.arith_command(c.expr_span, c.expr_ast.as_ref()),
            CompoundCommand::Time(c) => {
                if let Some(command) = &c.command {
                    self.stmt(command);
                }
            }
            CompoundCommand::Conditional(c) => self.conditional(&c.expression),
            CompoundCommand::Coproc(c) => self.stmt(&c.body),
            CompoundCommand::Always(c) => {
                self.seq(&c.body);
                self.seq(&c.always_body);
            }
        }
    }

    /// Records values a variable may hold. Past a bound on how many values or how long, its
    /// value is unknown: `h=$h$h` ten thousand times must not take the walk with it.
    ///
    /// In program order a value replaces the one before; where the assignment may not
    /// happen (a branch, a loop) it is one more value the variable may hold, beside the
    /// earlier ones (unknown when there was none: it may come from the environment).
    pub(crate) fn assign(&mut self, name: String, values: impl IntoIterator<Item = String>) {
        let uncertain = self.uncertain > 0;
        self.log_var(&name);
        let held = self.vars.entry(name).or_default();
        if !uncertain {
            held.clear();
        } else if held.is_empty() {
            held.push(UNKNOWN.to_string());
        }
        let before = held.len();
        held.extend(values);
        // Every value assigned counts as named by the command, even once the variable's
        // own value is given up as unknown (`for h in … atlas; do ssh $h; done`).
        for value in &held[before..] {
            if self.mentioned_bytes + value.len() <= MAX_MENTIONED_BYTES {
                self.mentioned_bytes += value.len();
                self.mentioned.push(value.clone());
            }
        }
        let total: usize = held.iter().map(String::len).sum();
        if held.len() > MAX_ALTERNATIVES || total > MAX_VALUE_BYTES {
            *held = vec![UNKNOWN.to_string()];
        }
    }

    /// A loop variable takes each word of its list, in turn.
    fn loop_variable(&mut self, name: &str, words: &[shuck_ast::Word]) {
        let values: Vec<String> = words
            .iter()
            .flat_map(|w| self.fields(w).into_iter().flatten())
            .collect();
        self.assign(name.to_string(), values);
    }

    /// `[[ … ]]` runs no program, but its words may hold command substitutions.
    fn conditional(&mut self, expr: &ConditionalExpr) {
        match expr {
            ConditionalExpr::Binary(b) => {
                self.conditional(&b.left);
                self.conditional(&b.right);
            }
            ConditionalExpr::Unary(u) => self.conditional(&u.expr),
            ConditionalExpr::Parenthesized(p) => self.conditional(&p.expr),
            ConditionalExpr::Word(w) | ConditionalExpr::Regex(w) => {
                self.joined(w);
            }
            // A pattern's substitutions run: `[[ x == $(ssh db) ]]`.
            ConditionalExpr::Pattern(p) => {
                self.pattern(p);
            }
            ConditionalExpr::VarRef(_) => {}
        }
    }
}

/// bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT`: a redirection that connects.
pub fn is_socket_path(word: &str) -> bool {
    word.starts_with("/dev/tcp/") || word.starts_with("/dev/udp/")
}
