//! The walk over shuck's tree: statements, lists, pipelines, compound commands, functions
//! and redirections, in the order bash would meet them.

mod commands;
mod printf;

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
    /// The next process substitution's `/dev/fd` number (bash counts down from 63).
    pub(super) next_fd: u32,
    /// `alias name=value` seen earlier in the command.
    aliases: HashMap<String, String>,
    pub(super) commands: Vec<Command>,
    incomplete: Option<String>,
    /// Input waiting for the next simple command (the right side of a pipe, a redirection
    /// on a compound command).
    next_stdin: Option<Stdin>,
    /// Files written by redirections on enclosing compound commands.
    outer_writes: Vec<String>,
    /// How many command or process substitutions the walk is inside.
    pub(super) feeding: usize,
    functions: Vec<String>,
}

impl<'s> Walker<'s> {
    pub(crate) fn new(src: &'s str, depth: usize, vars: HashMap<String, Vec<String>>) -> Self {
        Walker {
            src,
            depth,
            vars,
            arrays: HashMap::new(),
            mentioned: Vec::new(),
            mentioned_bytes: 0,
            files: HashMap::new(),
            next_fd: 63,
            aliases: HashMap::new(),
            commands: Vec::new(),
            incomplete: None,
            next_stdin: None,
            outer_writes: Vec::new(),
            feeding: 0,
            functions: Vec::new(),
        }
    }

    pub(crate) fn finish(self) -> Script {
        Script {
            commands: self.commands,
            variables: self.vars,
            mentioned: self.mentioned,
            incomplete: self.incomplete,
            functions: self.functions,
        }
    }

    pub(crate) fn seq(&mut self, seq: &StmtSeq) {
        for stmt in seq.iter() {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let (stdin, writes) = self.redirects(&stmt.redirects);
        if let Some(stdin) = stdin {
            self.next_stdin = Some(stdin);
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
                BinaryOp::Pipe | BinaryOp::PipeAll => self.pipe(&binary.left, &binary.right),
                BinaryOp::And | BinaryOp::Or => {
                    self.stmt(&binary.left);
                    self.stmt(&binary.right);
                }
            },
            Node::Compound(compound) => {
                let before = self.outer_writes.len();
                self.outer_writes.extend(writes);
                self.compound(compound);
                self.outer_writes.truncate(before);
            }
            Node::Function(function) => {
                self.functions
                    .extend(function.static_names().map(|n| n.as_str().to_string()));
                self.stmt(&function.body)
            }
            Node::AnonymousFunction(function) => {
                for w in &function.args {
                    self.joined(w);
                }
                self.stmt(&function.body);
            }
        }
        self.next_stdin = None;
    }

    fn pipe(&mut self, left: &Stmt, right: &Stmt) {
        let start = self.commands.len();
        self.stmt(left);
        // A simple command (or the last stage of a pipeline) is emitted after the
        // substitutions in its words: its output is the last command's.
        let last_stage = matches!(&left.command, Node::Simple(_))
            || matches!(&left.command, Node::Binary(b) if matches!(b.op, BinaryOp::Pipe | BinaryOp::PipeAll));
        let output = match &self.commands[start.min(self.commands.len())..] {
            [only] => output_of(only),
            [.., last] if last_stage => output_of(last),
            _ => Stdin::Unknown,
        };
        self.next_stdin = Some(output);
        self.stmt(right);
    }

    fn compound(&mut self, compound: &CompoundCommand) {
        match compound {
            CompoundCommand::If(c) => {
                self.seq(&c.condition);
                self.seq(&c.then_branch);
                for (cond, body) in &c.elif_branches {
                    self.seq(cond);
                    self.seq(body);
                }
                if let Some(body) = &c.else_branch {
                    self.seq(body);
                }
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
                self.seq(&c.body);
            }
            CompoundCommand::Select(c) => {
                self.loop_variable(c.variable.as_str(), &c.words);
                self.seq(&c.body);
            }
            CompoundCommand::Foreach(c) => {
                self.loop_variable(c.variable.as_str(), &c.words);
                self.seq(&c.body);
            }
            CompoundCommand::Repeat(c) => {
                self.joined(&c.count);
                self.seq(&c.body);
            }
            CompoundCommand::ArithmeticFor(c) => self.seq(&c.body),
            CompoundCommand::While(c) => {
                self.seq(&c.condition);
                self.seq(&c.body);
            }
            CompoundCommand::Until(c) => {
                self.seq(&c.condition);
                self.seq(&c.body);
            }
            CompoundCommand::Case(c) => {
                self.joined(&c.word);
                for item in &c.cases {
                    self.seq(&item.body);
                }
            }
            CompoundCommand::Subshell(body) | CompoundCommand::BraceGroup(body) => self.seq(body),
            CompoundCommand::Arithmetic(_) => {}
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
    fn assign(&mut self, name: String, values: impl IntoIterator<Item = String>) {
        let held = self.vars.entry(name).or_default();
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
            ConditionalExpr::Pattern(_) | ConditionalExpr::VarRef(_) => {}
        }
    }

    pub(super) fn nested(&mut self, body: &StmtSeq) -> Vec<Command> {
        let start = self.commands.len();
        let saved = self.next_stdin.take();
        self.feeding += 1;
        self.seq(body);
        self.feeding -= 1;
        self.next_stdin = saved;
        self.commands[start.min(self.commands.len())..].to_vec()
    }
}

/// bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT`: a redirection that connects.
pub fn is_socket_path(word: &str) -> bool {
    word.starts_with("/dev/tcp/") || word.starts_with("/dev/udp/")
}
