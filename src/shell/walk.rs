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
        // `> file` with no command still opens (and empties) the file: kept for its writes.
        alternatives.retain(|a| !a.is_empty() || !env.is_empty() || !writes.is_empty());
        if alternatives.iter().all(|a| a.is_empty()) {
            // A bare assignment sets the variable for the rest of the command.
            for (name, value) in &env {
                self.assign(name.clone(), [value.clone()]);
            }
        }
        // `alias s=ssh` earlier in the command: an unquoted program word that names an alias
        // is its value, as bash expands it where aliases are on.
        let plain_name = matches!(simple.name.parts.as_slice(), [part] if matches!(part.kind, shuck_ast::WordPart::Literal(_)));
        for words in &mut alternatives {
            if words.first().is_some_and(|w| w == "alias") {
                for definition in &words[1..] {
                    if let Some((name, value)) = definition.split_once('=') {
                        self.aliases.insert(name.to_string(), value.to_string());
                    }
                }
            } else if plain_name
                && let Some(value) = words.first().and_then(|w| self.aliases.get(w))
            {
                let expanded = shell_words::split(value)
                    .unwrap_or_else(|_| value.split_whitespace().map(str::to_string).collect());
                words.splice(0..1, expanded);
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
        let files = words
            .iter()
            .filter_map(|w| self.files.get(w).map(|text| (w.clone(), text.clone())))
            .collect();
        let command = Command {
            words,
            env,
            stdin,
            writes,
            files,
            depth: self.depth,
        };
        // `echo 'ssh atlas' > s.sh`: what the command wrote is known to later commands.
        if let Stdin::Text(text) = output_of(&command) {
            for path in command.writes.iter().filter(|w| !w.starts_with("/dev/")) {
                self.files.insert(path.clone(), text.clone());
            }
        }
        self.commands.push(command);
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
                    let paths = self.joined(word);
                    stdin = Some(match paths.as_slice() {
                        [path] => self
                            .files
                            .get(path)
                            .map_or(Stdin::Unknown, |t| Stdin::Text(t.clone())),
                        _ => Stdin::Unknown,
                    });
                    writes.extend(paths.into_iter().filter(|w| is_socket_path(w)));
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
    let args = command.words.get(1..).unwrap_or_default();
    match program {
        Some("echo") => {
            let args = args
                .iter()
                .skip_while(|w| matches!(w.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"));
            Stdin::Text(args.cloned().collect::<Vec<_>>().join(" "))
        }
        Some("printf") => match args.split_first() {
            Some((format, rest)) => Stdin::Text(printf(format, rest)),
            None => Stdin::Unknown,
        },
        // `cat` of nothing, or of files the command wrote, and `tee`, pass text on.
        Some("cat") if args.is_empty() => command.stdin.clone(),
        Some("cat") => {
            let known: Option<Vec<&str>> = args
                .iter()
                .map(|a| {
                    command
                        .files
                        .iter()
                        .find(|(p, _)| p == a)
                        .map(|(_, t)| t.as_str())
                })
                .collect();
            known.map_or(Stdin::Unknown, |texts| Stdin::Text(texts.concat()))
        }
        Some("tee") => match &command.stdin {
            Stdin::Text(text) => Stdin::Text(text.clone()),
            _ => Stdin::Unknown,
        },
        _ => Stdin::Unknown,
    }
}

/// `printf FORMAT ARGS…`: `%s`-like conversions take the arguments in turn, and the
/// format is used again while arguments remain, as bash does; `\n` is a newline.
fn printf(format: &str, args: &[String]) -> String {
    let mut out = String::new();
    let mut rest = args.iter();
    loop {
        let mut used = false;
        let mut chars = format.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '%' => {
                    // Flags, width and precision come before the conversion letter.
                    while chars
                        .next_if(|d| d.is_ascii_digit() || "-+ #.*'".contains(*d))
                        .is_some()
                    {}
                    match chars.next() {
                        Some('%') => out.push('%'),
                        Some(_) => {
                            used = true;
                            out.push_str(rest.next().map_or("", String::as_str));
                        }
                        None => out.push('%'),
                    }
                }
                '\\' => match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                },
                _ => out.push(c),
            }
        }
        if !used || rest.len() == 0 || out.len() > 64 * 1024 {
            return out;
        }
    }
}
#[cfg(test)]
mod printf_tests {
    use super::printf;

    #[test]
    fn formats_like_bash() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            printf("%s\\n", &args(&["atlas", "orion"])),
            "atlas\norion\n"
        );
        assert_eq!(printf("ssh %s", &args(&["atlas"])), "ssh atlas");
        assert_eq!(printf("%-5s|%%", &args(&["a"])), "a|%");
        assert_eq!(printf("plain", &args(&["x"])), "plain");
    }
}
