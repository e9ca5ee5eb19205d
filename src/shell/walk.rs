//! The walk over shuck's tree: statements, lists, pipelines, compound commands, functions
//! and redirections, in the order bash would meet them.

use super::expand::{literal_globs, unknown_globs};
use super::{Command, MAX_ALTERNATIVES, MAX_COMMANDS, Script, Stdin, UNKNOWN};

/// The most text a variable's values may hold before its value counts as unknown.
const MAX_VALUE_BYTES: usize = 4 * 1024;
/// The most assigned text kept for "does the command name the mesh" (the source's own cap).
const MAX_MENTIONED_BYTES: usize = 256 * 1024;
use shuck_ast::{
    AssignmentValue, BinaryOp, BuiltinCommand, Command as Node, CompoundCommand, ConditionalExpr,
    DeclOperand, Redirect, RedirectKind, RedirectTarget, SimpleCommand, Stmt, StmtSeq,
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
    pub(super) commands: Vec<Command>,
    incomplete: Option<String>,
    /// Input waiting for the next simple command (the right side of a pipe, a redirection
    /// on a compound command).
    next_stdin: Option<Stdin>,
    /// Files written by redirections on enclosing compound commands.
    outer_writes: Vec<String>,
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
            commands: Vec::new(),
            incomplete: None,
            next_stdin: None,
            outer_writes: Vec::new(),
        }
    }

    pub(crate) fn finish(self) -> Script {
        Script {
            commands: self.commands,
            variables: self.vars,
            mentioned: self.mentioned,
            incomplete: self.incomplete,
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
            Node::Function(function) => self.stmt(&function.body),
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
        let output = match &self.commands[start.min(self.commands.len())..] {
            [only] => output_of(only),
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

    fn simple(&mut self, simple: &SimpleCommand, writes: Vec<String>) {
        let env = self.prefix_assignments(&simple.assignments);
        let mut program = self.fields_with_globs(&simple.name);
        for alternative in &mut program {
            for (i, field) in alternative.iter_mut().enumerate() {
                let word = std::mem::take(field);
                *field = if i == 0 {
                    unknown_globs(word)
                } else {
                    literal_globs(word)
                };
            }
        }
        let mut alternatives: Vec<Vec<String>> = vec![Vec::new()];
        alternatives = self.product(alternatives, program);
        for word in &simple.args {
            let fields = self.fields(word);
            alternatives = self.product(alternatives, fields);
        }
        alternatives.retain(|a| !a.is_empty() || !env.is_empty());
        if alternatives.iter().all(|a| a.is_empty()) {
            // A bare assignment sets the variable for the rest of the command.
            for (name, value) in &env {
                self.assign(name.clone(), [value.clone()]);
            }
        }
        let stdin = self.next_stdin.take();
        for words in alternatives {
            if words.first().is_some_and(|w| w == "read") {
                self.read_builtin(&words, stdin.as_ref());
            }
            self.next_stdin = stdin.clone();
            self.emit(words, env.clone(), writes.clone());
        }
    }

    /// `read NAME…` sets its variables from its input: known lines when the input is known.
    fn read_builtin(&mut self, words: &[String], stdin: Option<&Stdin>) {
        let values: Vec<String> = match stdin {
            Some(Stdin::Text(text)) => text.split_whitespace().map(str::to_string).collect(),
            _ => vec![UNKNOWN.to_string()],
        };
        let mut args = words[1..].iter().filter(|w| !w.starts_with('-'));
        if let Some(name) = args.next_back() {
            self.assign(name.clone(), values);
        }
        for name in args {
            self.assign(name.clone(), [UNKNOWN.to_string()]);
        }
    }

    fn prefix_assignments(
        &mut self,
        assignments: &[shuck_ast::Assignment],
    ) -> Vec<(String, String)> {
        let mut env = Vec::new();
        for a in assignments {
            let (name, values) = self.assignment(a);
            env.extend(values.into_iter().map(|v| (name.clone(), v)));
        }
        env
    }

    fn assignment(&mut self, a: &shuck_ast::Assignment) -> (String, Vec<String>) {
        let name = a.target.name.as_str().to_string();
        let values = match &a.value {
            AssignmentValue::Scalar(word) => self.joined(word),
            AssignmentValue::Compound(array) => {
                let elements: Vec<String> = array
                    .elements
                    .iter()
                    .flat_map(|e| {
                        let value = match e {
                            shuck_ast::ArrayElem::Sequential(v) => &v.word,
                            shuck_ast::ArrayElem::Keyed { value, .. }
                            | shuck_ast::ArrayElem::KeyedAppend { value, .. } => &value.word,
                        };
                        self.fields(value).into_iter().flatten()
                    })
                    .collect();
                let held = self.arrays.entry(name.clone()).or_default();
                if !a.append {
                    held.clear();
                }
                held.extend(elements.iter().cloned());
                elements
            }
        };
        (name, values)
    }

    fn emit(&mut self, words: Vec<String>, env: Vec<(String, String)>, mut writes: Vec<String>) {
        if self.commands.len() >= MAX_COMMANDS {
            self.incomplete = Some(format!("it runs more than {MAX_COMMANDS} commands"));
            return;
        }
        writes.extend(self.outer_writes.iter().cloned());
        let stdin = self.next_stdin.take().unwrap_or(Stdin::Inherited);
        self.commands.push(Command {
            words,
            env,
            stdin,
            writes,
            depth: self.depth,
        });
    }

    fn redirects(&mut self, redirects: &[Redirect]) -> (Option<Stdin>, Vec<String>) {
        let mut stdin = None;
        let mut writes = Vec::new();
        for r in redirects {
            match (&r.target, r.kind) {
                (RedirectTarget::Heredoc(heredoc), _) => {
                    stdin = Some(Stdin::Text(self.heredoc(heredoc)));
                }
                (RedirectTarget::Word(word), RedirectKind::HereString) => {
                    stdin = Some(Stdin::Text(self.joined(word).join(" ")));
                }
                (RedirectTarget::Word(word), RedirectKind::Input) => {
                    // `< /dev/tcp/host/port` opens a connection: kept with the files it
                    // touches, for the decision to see.
                    writes.extend(self.joined(word).into_iter().filter(|w| is_socket_path(w)));
                    stdin = Some(Stdin::Unknown);
                }
                (
                    RedirectTarget::Word(word),
                    RedirectKind::Output
                    | RedirectKind::Clobber
                    | RedirectKind::Append
                    | RedirectKind::OutputBoth
                    | RedirectKind::ReadWrite,
                ) => {
                    writes.extend(self.joined(word));
                }
                (RedirectTarget::Word(word), _) => {
                    writes.extend(self.joined(word).into_iter().filter(|w| is_socket_path(w)));
                }
            }
        }
        (stdin, writes)
    }

    pub(super) fn nested(&mut self, body: &StmtSeq) -> Vec<Command> {
        let start = self.commands.len();
        let saved = self.next_stdin.take();
        self.seq(body);
        self.next_stdin = saved;
        self.commands[start.min(self.commands.len())..].to_vec()
    }
}

/// bash's `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT`: a redirection that connects.
pub fn is_socket_path(word: &str) -> bool {
    word.starts_with("/dev/tcp/") || word.starts_with("/dev/udp/")
}

/// What a command writes on its standard output, when the command text alone tells.
pub(super) fn output_of(command: &Command) -> Stdin {
    let program = command
        .words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w));
    match program {
        Some("echo") => {
            let args = command.words[1..]
                .iter()
                .skip_while(|w| matches!(w.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"));
            Stdin::Text(args.cloned().collect::<Vec<_>>().join(" "))
        }
        Some("printf") => Stdin::Text(command.words[1..].join(" ").replace("\\n", "\n")),
        Some("cat") if command.words.len() == 1 => match &command.stdin {
            Stdin::Text(text) => Stdin::Text(text.clone()),
            _ => Stdin::Unknown,
        },
        _ => Stdin::Unknown,
    }
}
