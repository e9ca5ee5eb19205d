//! `rules/*.toml` → typed rules: which programs the guard knows, how their options are
//! spelled, and which option or operand names a target in which role.
//!
//! The built-in files are compiled in; `--rules DIR` layers more over them (a later
//! definition of a program name replaces the earlier one; a built-in program is extended,
//! or replaced only with `replace = true`: `layer`).

mod agent;
mod embedded;
mod layer;
mod load;
mod role;
pub mod runner;
mod schema;
mod syntax;
mod validate;

pub use load::*;
pub use role::*;
pub use schema::*;
pub use syntax::Syntax;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

/// The built-in names and entries, as build.rs compiled them.
mod names {
    use super::Kind;

    include!(concat!(env!("OUT_DIR"), "/names.rs"));

    fn name((start, len, _): &(u32, u16, u16)) -> &'static str {
        let start = *start as usize;
        &NAME_TEXT[start..start + usize::from(*len)]
    }

    /// The names built in as `kind`, sorted, each with the entry that defines it.
    pub(crate) fn of(kind: Kind) -> impl Iterator<Item = (&'static str, usize)> {
        NAMES[kind as usize]
            .iter()
            .map(|row| (name(row), usize::from(row.2)))
    }

    /// The entry that defines `name` as a `kind`, if one does (the last, if several).
    pub(crate) fn find(kind: Kind, wanted: &str) -> Option<usize> {
        let table = NAMES[kind as usize];
        let found = table.binary_search_by(|row| name(row).cmp(wanted)).ok()?;
        Some(usize::from(table[found].2))
    }

    /// How many entries there are.
    pub(crate) fn entries() -> usize {
        ENTRY_STARTS.len() - 1
    }

    /// Entry `at`, compiled (`rules::embedded`).
    pub(crate) fn entry(at: usize) -> &'static str {
        &ENTRY_TEXT[ENTRY_STARTS[at] as usize..ENTRY_STARTS[at + 1] as usize]
    }
}

/// Every rule, looked up by program base name.
///
/// A hook call looks up a handful of names, so each built-in file is read only when one of
/// its names is asked for (`ls -la` reads none): the cost of a call does not grow with the
/// rules.
#[derive(Debug, Default)]
pub struct Rules {
    /// The built-in entries (`names::entry`), each read on first use; empty for
    /// `Rules::default()`.
    built_in: Option<Box<[OnceCell<Entry>]>>,
    /// Rules from `--rules`, over the built-in ones.
    extra: Tables,
}

impl Rules {
    /// The built-in rules, then every `*.toml` in `extra` (sorted by name) over them.
    pub fn load(extra: Option<&Path>) -> Result<Rules, RulesError> {
        let mut rules = Rules {
            built_in: Some((0..names::entries()).map(|_| OnceCell::new()).collect()),
            extra: Tables::default(),
        };
        if let Some(dir) = extra {
            let unreadable = |e: std::io::Error| RulesError::Unreadable {
                path: dir.display().to_string(),
                cause: e.to_string(),
            };
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .map_err(unreadable)?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .collect();
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file).map_err(unreadable)?;
                let name = file.display().to_string();
                let parsed = parse_toml(&name, &text)?;
                let parsed = rules.layer(&name, &text, parsed)?;
                rules.extra.merge(parsed);
            }
        }
        Ok(rules)
    }

    /// The built-in program `name`, whatever `--rules` says.
    fn built_in_program(&self, name: &str) -> Option<&Rc<Program>> {
        match self.built_in_for(Kind::Program, name)? {
            Entry::Program(program) => Some(program),
            _ => None,
        }
    }

    /// The kinds `name` is built in as (`program`, `wrapper`, …), read from the index alone.
    /// A versioned interpreter name (`python3.12`) is built in as its interpreter.
    fn built_in_kinds(name: &str) -> Vec<&'static str> {
        let defines = |kind: Kind, name: &str| names::find(kind, name).is_some();
        let mut kinds: Vec<Kind> = Kind::ALL
            .into_iter()
            .filter(|k| defines(*k, name))
            .collect();
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
        if base != name
            && !kinds.iter().any(|k| matches!(k, Kind::Interpreter))
            && defines(Kind::Interpreter, base)
        {
            kinds.push(Kind::Interpreter);
        }
        kinds.into_iter().map(Kind::key).collect()
    }

    /// The last built-in entry that defines `name` as a `kind`.
    fn built_in_for(&self, kind: Kind, name: &str) -> Option<&Entry> {
        let cells = self.built_in.as_ref()?;
        let at = names::find(kind, name)?;
        Some(cells[at].get_or_init(|| built_in_entry(kind, names::entry(at))))
    }

    fn lookup<T>(
        &self,
        kind: Kind,
        name: &str,
        table: impl Fn(&Tables) -> &HashMap<String, Rc<T>>,
        entry: impl Fn(&Entry) -> Option<&T>,
    ) -> Option<&T> {
        if let Some(found) = table(&self.extra).get(name) {
            return Some(found);
        }
        self.built_in_for(kind, name).and_then(entry)
    }

    pub fn program(&self, name: &str) -> Option<&Program> {
        self.lookup(
            Kind::Program,
            name,
            |t| &t.programs,
            |e| match e {
                Entry::Program(p) => Some(p),
                _ => None,
            },
        )
    }

    /// Every name a wrapper table holds, built in or from `--rules`, sorted: what a test
    /// puts in front of commands to see that no wrapper changes a decision.
    pub fn wrapper_names(&self) -> Vec<String> {
        let mut names: Vec<String> = names::of(Kind::Wrapper)
            .map(|(n, _)| n.to_string())
            .chain(self.extra.wrappers.keys().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    pub fn wrapper(&self, name: &str) -> Option<&Wrapper> {
        self.lookup(
            Kind::Wrapper,
            name,
            |t| &t.wrappers,
            |e| match e {
                Entry::Wrapper(w) => Some(w),
                _ => None,
            },
        )
    }

    /// Whether the variable `name` holds a command line (`GIT_SSH_COMMAND`).
    pub fn is_command_env(&self, name: &str) -> bool {
        self.extra.command_env.iter().any(|n| n == name)
            || self.built_in_for(Kind::CommandEnv, name).is_some()
    }

    /// Whether `name` is a declaration builtin (`export`, `declare`): its `NAME=VALUE`
    /// words assign.
    pub fn is_declaration(&self, name: &str) -> bool {
        self.extra.declarations.iter().any(|n| n == name)
            || self.built_in_for(Kind::Declaration, name).is_some()
    }

    /// Whether `name` sets variables for sessions other than its own (`launchctl setenv`).
    pub fn is_environment_setter(&self, name: &str) -> bool {
        self.extra.environment_setters.iter().any(|n| n == name)
            || self.built_in_for(Kind::EnvironmentSetter, name).is_some()
    }

    pub fn shell(&self, name: &str) -> Option<&Shell> {
        self.lookup(
            Kind::Shell,
            name,
            |t| &t.shells,
            |e| match e {
                Entry::Shell(s) => Some(s),
                _ => None,
            },
        )
    }

    /// Interpreters are known by name or versioned name (`python3.12`, `node20`).
    pub fn interpreter(&self, name: &str) -> Option<&Interpreter> {
        fn entry(e: &Entry) -> Option<&Interpreter> {
            match e {
                Entry::Interpreter(i) => Some(i),
                _ => None,
            }
        }
        self.lookup(Kind::Interpreter, name, |t| &t.interpreters, entry)
            .or_else(|| {
                let base =
                    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
                self.lookup(Kind::Interpreter, base, |t| &t.interpreters, entry)
            })
    }

    /// Which words of its command a program writes, if it writes files.
    pub fn writer(&self, name: &str) -> Option<&Writer> {
        self.lookup(
            Kind::Writer,
            name,
            |t| &t.writers,
            |e| match e {
                Entry::Writer(w) => Some(w),
                _ => None,
            },
        )
    }

    /// An agent CLI by program or package name.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.lookup(
            Kind::Agent,
            name,
            |t| &t.agents,
            |e| match e {
                Entry::Agent(a) => Some(a),
                _ => None,
            },
        )
    }

    /// The guard's own command line, by program name.
    pub fn guard_cli(&self, name: &str) -> Option<&GuardCli> {
        self.lookup(
            Kind::GuardCli,
            name,
            |t| &t.guard_clis,
            |e| match e {
                Entry::GuardCli(g) => Some(g),
                _ => None,
            },
        )
    }

    /// Every definition of the guard's command line, for a program word that cannot be
    /// known (`"$G" audit prune`): whichever it is, its refused subcommands are.
    pub fn guard_clis(&self) -> Vec<&GuardCli> {
        let built_in = names::of(Kind::GuardCli).filter_map(|(name, _)| self.guard_cli(name));
        let extra = self.extra.guard_clis.values().map(Rc::as_ref);
        built_in.chain(extra).collect()
    }

    /// What a program does with its argument words (data, or code on its input).
    pub fn arguments(&self, name: &str) -> Option<&Arguments> {
        self.lookup(
            Kind::Arguments,
            name,
            |t| &t.arguments,
            |e| match e {
                Entry::Arguments(a) => Some(a),
                _ => None,
            },
        )
    }

    /// Whether `name` is a program the guard refuses at mesh targets (for the quick pass
    /// that decides whether the catalog is needed at all).
    pub fn is_guarded(&self, name: &str) -> bool {
        self.program(name).is_some_and(|p| !p.only_by_target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map's entries sorted: its `Debug` order is its own, and differs from map to map.
    fn sorted<V: std::fmt::Debug>(map: &HashMap<String, V>) -> Vec<String> {
        let mut entries: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        entries.sort();
        entries
    }

    /// A program as text, through its subcommands: its maps sorted, the rest by `Debug`.
    fn program_text(program: &Program) -> String {
        let mut program = program.clone();
        let mut maps = Vec::new();
        fn apart(p: &mut Program, maps: &mut Vec<Vec<String>>) {
            maps.extend([sorted(&p.options), sorted(&p.env), sorted(&p.methods)]);
            p.options.clear();
            p.env.clear();
            p.methods.clear();
            p.subcommand.iter_mut().for_each(|s| apart(s, maps));
        }
        apart(&mut program, &mut maps);
        format!("{maps:?} {program:?}")
    }

    /// An entry of `kind` read as its rule type from its TOML and from its compiled form,
    /// as text.
    fn read_both_ways(kind: Kind, entry: &toml::Value, compiled: &'static str) -> [String; 2] {
        fn both<T: serde::de::DeserializeOwned>(
            entry: &toml::Value,
            compiled: &'static str,
            text: impl Fn(&T) -> String,
        ) -> [String; 2] {
            let slow: T = entry.clone().try_into().unwrap();
            let fast: T = embedded::read(compiled).unwrap();
            [text(&slow), text(&fast)]
        }
        let debug = |v: &dyn std::fmt::Debug| format!("{v:?}");
        match kind {
            Kind::Program => both(entry, compiled, program_text),
            Kind::Writer => both(entry, compiled, |w: &Writer| {
                let mut w = w.clone();
                let maps = sorted(&w.written_when);
                w.written_when.clear();
                format!("{maps:?} {w:?}")
            }),
            Kind::Wrapper => both(entry, compiled, |v: &Wrapper| debug(v)),
            Kind::Shell => both(entry, compiled, |v: &Shell| debug(v)),
            Kind::Interpreter => both(entry, compiled, |v: &Interpreter| debug(v)),
            Kind::Agent => both(entry, compiled, |v: &Agent| debug(v)),
            Kind::GuardCli => both(entry, compiled, |v: &GuardCli| debug(v)),
            Kind::Arguments => both(entry, compiled, |v: &Arguments| debug(v)),
            Kind::Runner => both(entry, compiled, |v: &runner::Runner| debug(v)),
            Kind::CommandEnv => both(entry, compiled, |v: &CommandEnv| debug(v)),
            Kind::Declaration | Kind::EnvironmentSetter => {
                both(entry, compiled, |v: &Declaration| debug(v))
            }
        }
    }

    #[test]
    fn every_compiled_entry_is_its_toml_entry_and_reads_as_it() {
        let mut at = 0;
        for (file, text) in BUILT_IN {
            let value: toml::Value = toml::from_str(text).unwrap();
            for kind in Kind::ALL {
                let written = value.get(kind.key()).and_then(toml::Value::as_array);
                for entry in written.into_iter().flatten() {
                    let compiled = names::entry(at);
                    let read_back: toml::Value = embedded::read(compiled).unwrap();
                    assert_eq!(&read_back, entry, "{file}: entry {at}");
                    let [slow, fast] = read_both_ways(kind, entry, compiled);
                    assert_eq!(slow, fast, "{file}: entry {at}");
                    at += 1;
                }
            }
        }
        assert_eq!(at, names::entries(), "every compiled entry is in a file");
    }

    #[test]
    fn every_built_in_entry_reads_as_its_kind() {
        let rules = Rules::load(None).unwrap();
        let mut read = 0;
        for kind in Kind::ALL {
            for (name, _) in names::of(kind) {
                let entry = rules.built_in_for(kind, name).unwrap();
                let same = matches!(
                    (kind, entry),
                    (Kind::Program, Entry::Program(_))
                        | (Kind::Wrapper, Entry::Wrapper(_))
                        | (Kind::Shell, Entry::Shell(_))
                        | (Kind::Interpreter, Entry::Interpreter(_))
                        | (Kind::Writer, Entry::Writer(_))
                        | (Kind::Agent, Entry::Agent(_))
                        | (Kind::GuardCli, Entry::GuardCli(_))
                        | (Kind::Arguments, Entry::Arguments(_))
                        | (Kind::Runner, Entry::Runner(_))
                        | (
                            Kind::CommandEnv | Kind::Declaration | Kind::EnvironmentSetter,
                            Entry::Names
                        )
                );
                assert!(same, "{name}: {entry:?}");
                read += 1;
            }
        }
        assert!(read > 200, "{read} names");
    }

    #[test]
    fn built_in_rules_load() {
        let rules = Rules::load(None).expect("built-in rules are valid");
        let ssh = rules.program("ssh").unwrap();
        assert_eq!(ssh.options["-J"], Role::Jump);
        assert_eq!(ssh.operands[1].role, Role::RemoteCommand);
        assert!(ssh.operands[1].rest);
        assert!(rules.wrapper("sudo").unwrap().assignments);
        assert!(rules.interpreter("python3.12").is_some());
        assert!(rules.is_declaration("export") && !rules.is_declaration("grep"));
        assert!(rules.is_environment_setter("launchctl"));
        assert_eq!(rules.wrapper("fd").unwrap().command_option[0], "-x");
        assert_eq!(
            rules.program("docker-compose").unwrap().same_as,
            ["docker", "compose"]
        );
    }

    #[test]
    fn a_bad_rules_file_names_its_line() {
        let dir = std::env::temp_dir().join(format!("mesh-guard-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("x.toml"),
            "[[program]]\nnames = [\"a\"]\noperands = [\"nonsense\"]\n",
        )
        .unwrap();
        let err = Rules::load(Some(&dir)).unwrap_err();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(err.to_string().contains("x.toml:3:"), "{err}");
    }

    #[test]
    fn extra_rules_layer_over_the_built_in_ones() {
        let dir = std::env::temp_dir().join(format!("mesh-guard-extra-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.toml"), "[[program]]\nnames = [\"kubectl\"]\nover = \"kubectl\"\noperands = [\"verb\", \"container...\"]\n[[program]]\nnames = [\"scp\"]\nover = \"a new scp\"\nreplace = true\n").unwrap();
        let rules = Rules::load(Some(&dir)).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(rules.program("kubectl").unwrap().over, "kubectl");
        assert_eq!(rules.program("scp").unwrap().over, "a new scp");
        assert_eq!(rules.program("ssh").unwrap().over, "ssh");
        assert!(Rules::default().program("ssh").is_none());
    }

    #[test]
    fn every_built_in_name_is_found_in_its_file() {
        let rules = Rules::load(None).unwrap();
        for (file, text) in BUILT_IN {
            let parsed: RulesFile = toml::from_str(text).unwrap();
            for p in &parsed.program {
                for n in &p.names {
                    assert!(rules.program(n).is_some(), "{file}: {n}");
                }
            }
            for w in &parsed.wrapper {
                for n in &w.names {
                    assert!(rules.wrapper(n).is_some(), "{file}: {n}");
                }
            }
            for c in &parsed.command_env {
                for n in &c.names {
                    assert!(rules.is_command_env(n), "{file}: {n}");
                }
            }
        }
    }
}
