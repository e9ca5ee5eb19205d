//! Loading the rules: the built-in tables (compiled in as JSON by build.rs) layered with an
//! operator's rule files, and their errors.

use super::schema::*;
use super::validate;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

macro_rules! built_in {
    ($name:literal) => {
        (
            concat!($name, ".toml"),
            include_str!(concat!("../../rules/", $name, ".toml")),
            include_str!(concat!(env!("OUT_DIR"), "/", $name, ".json")),
        )
    };
}

/// Each built-in rules file, as written and as converted to JSON by `build.rs`.
pub(crate) const BUILT_IN: [(&str, &str, &str); 8] = [
    built_in!("ssh"),
    built_in!("docker"),
    built_in!("systemd"),
    built_in!("wrappers"),
    built_in!("shells"),
    built_in!("interpreters"),
    built_in!("self"),
    built_in!("arguments"),
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError(pub String);

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

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
}

impl Kind {
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
        }
    }
}

/// A built-in file's tables: from its JSON form (the same data, read faster), or from the
/// TOML, which names the line of a mistake, should the JSON be missing.
pub(crate) fn built_in_tables(at: usize) -> Tables {
    let (name, text, json) = BUILT_IN[at];
    // build.rs refused to build with a file that does not read, so neither fails; if one
    // ever did, the panic is caught and the hook refuses (it never guards with nothing).
    let file = serde_json::from_str::<RulesFile>(json)
        .or_else(|_| parse_toml(name, text))
        .unwrap_or_else(|e| panic!("the built-in rules do not read: {e}"));
    let mut tables = Tables::default();
    tables.merge(file);
    tables
}

pub(crate) fn parse_toml(name: &str, text: &str) -> Result<RulesFile, RulesError> {
    validate::parse(name, text).map_err(RulesError)
}
