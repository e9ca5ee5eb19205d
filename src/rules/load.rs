//! Loading the rules: the built-in tables (compiled in as static data by build.rs) layered
//! with an operator's rule files, and their errors.

use super::embedded;
use super::runner::Runner;
use super::schema::*;
use super::validate;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

#[cfg(test)]
macro_rules! built_in {
    ($name:literal) => {
        (
            concat!($name, ".toml"),
            include_str!(concat!("../../rules/", $name, ".toml")),
        )
    };
}

/// Each built-in rules file as written, in build.rs's order (the hook reads the entries
/// build.rs compiled from them, `Entry`; the tests compare the two).
#[cfg(test)]
pub(crate) const BUILT_IN: [(&str, &str); 9] = [
    built_in!("ssh"),
    built_in!("docker"),
    built_in!("systemd"),
    built_in!("wrappers"),
    built_in!("shells"),
    built_in!("interpreters"),
    built_in!("self"),
    built_in!("arguments"),
    built_in!("runners"),
];

/// One file's rules (or several files' merged), by name.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    pub(crate) programs: HashMap<String, Rc<Program>>,
    pub(crate) wrappers: HashMap<String, Rc<Wrapper>>,
    pub(crate) shells: HashMap<String, Rc<Shell>>,
    pub(crate) interpreters: HashMap<String, Rc<Interpreter>>,
    pub(crate) command_env: Vec<String>,
    pub(crate) declarations: Vec<String>,
    pub(crate) environment_setters: Vec<String>,
    pub(crate) writers: HashMap<String, Rc<Writer>>,
    pub(crate) agents: HashMap<String, Rc<Agent>>,
    pub(crate) guard_clis: HashMap<String, Rc<GuardCli>>,
    pub(crate) arguments: HashMap<String, Rc<Arguments>>,
    pub(crate) runners: HashMap<String, Rc<Runner>>,
}

impl Tables {
    pub(crate) fn merge(&mut self, file: RulesFile) {
        fn by_name<T>(
            map: &mut HashMap<String, Rc<T>>,
            items: Vec<T>,
            names: impl Fn(&T) -> &[String],
        ) {
            for item in items {
                let item = Rc::new(item);
                for n in names(&item) {
                    map.insert(n.clone(), Rc::clone(&item));
                }
            }
        }
        by_name(&mut self.programs, file.program, |p| &p.names);
        by_name(&mut self.wrappers, file.wrapper, |w| &w.names);
        by_name(&mut self.shells, file.shell, |s| &s.names);
        by_name(&mut self.interpreters, file.interpreter, |i| &i.names);
        by_name(&mut self.writers, file.writer, |w| &w.names);
        by_name(&mut self.agents, file.agent, |a| &a.names);
        by_name(&mut self.guard_clis, file.guard_cli, |g| &g.names);
        by_name(&mut self.arguments, file.arguments, |a| &a.names);
        by_name(&mut self.runners, file.runner, |r| &r.names);
        for c in file.command_env {
            self.command_env.extend(c.names);
        }
        for d in file.declaration {
            self.declarations.extend(d.names);
        }
        for e in file.environment_setter {
            self.environment_setters.extend(e.names);
        }
    }
}

/// Why the rules in force cannot be read: each names the file (and line) at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RulesError {
    /// The `--rules` directory or one of its files cannot be read (the system's words).
    Unreadable { path: String, cause: String },
    /// A file is not TOML of the rules' shape: the TOML parser's own message.
    Toml(validate::TomlError),
    /// An operator's entry takes a built-in name in a way that would change what the guard
    /// sees behind it.
    BuiltIn {
        file: String,
        line: usize,
        clash: Box<Clash>,
    },
}

/// How an operator's entry would change a built-in one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clash {
    /// `replace = true` where no built-in program has any of these names.
    ReplacesNothing { names: Vec<String> },
    /// One `[[program]]` names several built-in programs.
    SeveralPrograms { names: Vec<String> },
    /// A defining key on a built-in program without `replace = true`.
    Redefines { program: String, key: String },
    /// An extension that changes what the built-in program says.
    Changes { program: String, change: Change },
    /// A name built in as other kinds (`[[shell]]`, …) taken by a `[[kind]]`.
    TakesName {
        name: String,
        built_in_as: Vec<String>,
        kind: &'static str,
    },
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RulesError::Unreadable { path, cause } => {
                write!(f, "{path}: cannot read the rules: {cause}")
            }
            RulesError::Toml(e) => e.fmt(f),
            RulesError::BuiltIn { file, line, clash } => write!(f, "{file}:{line}: {clash}"),
        }
    }
}

impl fmt::Display for Clash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |names: &[String]| {
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            list.join(", ")
        };
        match self {
            Clash::ReplacesNothing { names } => write!(
                f,
                "`replace = true`, but no built-in program is named {}: it replaces nothing",
                quoted(names)
            ),
            Clash::SeveralPrograms { names } => write!(
                f,
                "{} are different built-in programs: one [[program]] extends one of them",
                quoted(names)
            ),
            Clash::Redefines { program, key } => write!(
                f,
                "`{program}` is a built-in program, and `{key}` redefines it: add \
                 `replace = true` to replace it whole, or leave `{key}` out to extend it"
            ),
            Clash::Changes { program, change } => write!(
                f,
                "`{program}` is a built-in program, and {change}: add `replace = true` to \
                 replace it whole"
            ),
            Clash::TakesName {
                name,
                built_in_as,
                kind,
            } => {
                let as_kinds: Vec<String> =
                    built_in_as.iter().map(|k| format!("[[{k}]]")).collect();
                write!(
                    f,
                    "`{name}` is built in as {}: a [[{kind}]] with that name would change \
                     what the guard sees behind it; give it another name",
                    as_kinds.join(" and ")
                )
            }
        }
    }
}

/// What an extension of a built-in program would change in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An option or a variable (`what`) given another role.
    Role {
        what: &'static str,
        key: String,
        had: String,
        given: String,
    },
    /// A D-Bus method mapped to another command.
    Method {
        method: String,
        had: String,
        given: String,
    },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Role {
                what,
                key,
                had,
                given,
            } => write!(f, "the {what} `{key}` is a `{had}` there, not a `{given}`"),
            Change::Method { method, had, given } => {
                write!(f, "the method `{method}` is `{had}` there, not `{given}`")
            }
        }
    }
}

impl std::error::Error for RulesError {}

/// The kinds of rules table, in the order of build.rs's `KINDS`: the built-in names are
/// indexed by it.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Program,
    Wrapper,
    Shell,
    Interpreter,
    CommandEnv,
    Declaration,
    EnvironmentSetter,
    Writer,
    Agent,
    GuardCli,
    Arguments,
    Runner,
}

impl Kind {
    pub(crate) const ALL: [Kind; 12] = [
        Kind::Program,
        Kind::Wrapper,
        Kind::Shell,
        Kind::Interpreter,
        Kind::CommandEnv,
        Kind::Declaration,
        Kind::EnvironmentSetter,
        Kind::Writer,
        Kind::Agent,
        Kind::GuardCli,
        Kind::Arguments,
        Kind::Runner,
    ];

    pub(crate) fn key(self) -> &'static str {
        match self {
            Kind::Program => "program",
            Kind::Wrapper => "wrapper",
            Kind::Shell => "shell",
            Kind::Interpreter => "interpreter",
            Kind::CommandEnv => "command_env",
            Kind::Declaration => "declaration",
            Kind::EnvironmentSetter => "environment_setter",
            Kind::Writer => "writer",
            Kind::Agent => "agent",
            Kind::GuardCli => "guard_cli",
            Kind::Arguments => "arguments",
            Kind::Runner => "runner",
        }
    }
}

/// One built-in entry, read from its compiled form when a name first needs it (decision 0030):
/// a hook call reads the few programs its command names, not whole files. Kinds that are
/// only a list of names (`command_env`, `declaration`, `environment_setter`) need no read.
#[derive(Debug)]
pub(crate) enum Entry {
    Program(Rc<Program>),
    Wrapper(Box<Wrapper>),
    Shell(Box<Shell>),
    Interpreter(Box<Interpreter>),
    Writer(Box<Writer>),
    Agent(Box<Agent>),
    GuardCli(Box<GuardCli>),
    Arguments(Box<Arguments>),
    Runner(Box<Runner>),
    Names,
}

pub(crate) fn built_in_entry(kind: Kind, entry: &'static str) -> Entry {
    fn read<T: serde::Deserialize<'static>>(entry: &'static str) -> T {
        // build.rs read every file with the crate's schema, and every compiled entry back as
        // its TOML; if one ever did not read here, the panic is caught and the hook refuses
        // (it never guards with nothing).
        embedded::read(entry).unwrap_or_else(|e| {
            let name = std::any::type_name::<T>();
            panic!("the built-in rules do not read as {name}: {e}")
        })
    }
    match kind {
        Kind::Program => Entry::Program(Rc::new(read(entry))),
        Kind::Wrapper => Entry::Wrapper(Box::new(read(entry))),
        Kind::Shell => Entry::Shell(Box::new(read(entry))),
        Kind::Interpreter => Entry::Interpreter(Box::new(read(entry))),
        Kind::Writer => Entry::Writer(Box::new(read(entry))),
        Kind::Agent => Entry::Agent(Box::new(read(entry))),
        Kind::GuardCli => Entry::GuardCli(Box::new(read(entry))),
        Kind::Arguments => Entry::Arguments(Box::new(read(entry))),
        Kind::Runner => Entry::Runner(Box::new(read(entry))),
        Kind::CommandEnv | Kind::Declaration | Kind::EnvironmentSetter => Entry::Names,
    }
}

pub(crate) fn parse_toml(name: &str, text: &str) -> Result<RulesFile, RulesError> {
    validate::parse(name, text).map_err(RulesError::Toml)
}

impl super::Rules {
    /// The task runner `program` is when its arguments are `args` (`cargo make …`), if any.
    /// Where a subcommand stands is for the runner's words to say (`cargo --color never
    /// make`): here it need only be among them.
    pub fn runner(&self, program: &str, args: &[String]) -> Option<&Runner> {
        self.lookup(
            Kind::Runner,
            program,
            |t| &t.runners,
            |e| match e {
                Entry::Runner(r) => Some(r),
                _ => None,
            },
        )
        .filter(|r| {
            r.subcommand
                .as_ref()
                .is_none_or(|sub| args.iter().any(|a| a == sub))
        })
    }
}
