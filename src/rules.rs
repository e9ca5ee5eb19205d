//! `rules/*.toml` → typed rules: which programs the guard knows, how their options are
//! spelled, and which option or operand names a target in which role.
//!
//! The built-in files are compiled in; `--rules DIR` layers more over them (a later
//! definition of a program name replaces the earlier one).

use serde::Deserialize;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::rc::Rc;

mod names {
    include!(concat!(env!("OUT_DIR"), "/names.rs"));
}

macro_rules! built_in {
    ($name:literal) => {
        (
            concat!($name, ".toml"),
            include_str!(concat!("../rules/", $name, ".toml")),
            include_str!(concat!(env!("OUT_DIR"), "/", $name, ".json")),
        )
    };
}

/// Each built-in rules file, as written and as converted to JSON by `build.rs`.
const BUILT_IN: [(&str, &str, &str); 7] = [
    built_in!("ssh"),
    built_in!("docker"),
    built_in!("systemd"),
    built_in!("wrappers"),
    built_in!("shells"),
    built_in!("interpreters"),
    built_in!("self"),
];

/// What a target word is, which decides how it is matched against the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `[user@]host[:port]` or `ssh://[user@]host[:port]`.
    Host,
    /// `[user@]host:path`, `host::module`, `scp://` / `rsync://` URLs; a local path names nothing.
    HostPath,
    /// `-J host1,host2`.
    Jump,
    /// Hosts in a list or pattern: `a,b`, `"a b"`, ansible's `a:b:!c`.
    HostList,
    /// `-o ProxyJump=…`, `-o HostName=…`, `-o ProxyCommand=…`, `-o User=…`.
    SshOption,
    /// A forwarding: `-W host:port`, `-L [bind:]port:host:hostport`.
    Forward,
    /// A socket address: socat's `TCP:host:port`, `EXEC:command`.
    SocketAddress,
    /// `-l user`.
    User,
    /// A remote shell program (`rsync -e`, `mosh --ssh`): a command in its own right.
    Rsh,
    /// A container engine's daemon address: `ssh://host`, `tcp://host:port`.
    DaemonHost,
    /// `docker context create --docker host=ssh://atlas,ca=…`: `host=` is a daemon address.
    DaemonEndpoint,
    /// `docker events --filter container=NAME`: a `container=` filter names a container.
    ContainerFilter,
    /// `journalctl -t ID`: a syslog identifier, named after a container, unit or module.
    Identifier,
    /// A container engine context, named after the machine it reaches.
    Context,
    /// A systemd unit, with or without `.service`.
    Unit,
    /// `journalctl -M` / `systemctl -M`: a machine or a container.
    Machine,
    /// A container name or id.
    Container,
    /// A compose service: named after a module or its container.
    Service,
    /// `docker cp name:path`.
    CopyPath,
    /// `journalctl _SYSTEMD_UNIT=x CONTAINER_NAME=y`.
    JournalMatch,
    /// A git repository: `[user@]host:path`, `ssh://…` (as `host-path`), `ext::COMMAND`
    /// (a shell command); a local path or a remote's name names nothing.
    GitUrl,
    /// git's `-c NAME=VALUE` (or, as operands, `git config NAME VALUE`): a value that git
    /// runs (`core.sshCommand`, a `!` alias) is a shell command; `remote.*.url` a git URL.
    GitConfig,
    /// The rest of the words, joined, is a shell command run on the target.
    RemoteCommand,
    /// The rest of the words are a program and its arguments.
    Command,
    /// A verb (`systemctl restart`): names nothing, but is part of the command's shape.
    Verb,
    Ignore,
}

/// How a program spells its options.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Syntax {
    /// Short options that take a value, as one string of letters.
    #[serde(default)]
    pub short_value: String,
    /// Long options (without `--`) that take a value.
    #[serde(default)]
    pub long_value: Vec<String>,
    /// Options end at the first operand (POSIX getopt) instead of anywhere (GNU).
    #[serde(default)]
    pub stop_at_operand: bool,
    /// With `stop_at_operand`: options may still follow the first operand, and end at the
    /// second (`ssh host -J jump cmd`: ssh reads options again after the destination).
    #[serde(default)]
    pub options_after_first_operand: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Operand {
    pub role: Role,
    /// This role takes every remaining operand.
    pub rest: bool,
}

fn operands<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Operand>, D::Error> {
    let words: Vec<String> = Vec::deserialize(d)?;
    words
        .iter()
        .map(|w| {
            let (name, rest) = match w.strip_suffix("...") {
                Some(name) => (name, true),
                None => (w.as_str(), false),
            };
            let role = Role::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(name))?;
            Ok(Operand { role, rest })
        })
        .collect()
}

/// A guarded program (or one of its subcommands).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Program {
    pub names: Vec<String>,
    /// How the message says it reaches its target: "ssh", "the container engine".
    #[serde(default)]
    pub over: String,
    #[serde(flatten)]
    pub syntax: Syntax,
    /// Options with a role; the option's value (or, for a flag, nothing) is the target.
    #[serde(default)]
    pub options: HashMap<String, Role>,
    /// Environment variables with a role (`DOCKER_HOST`).
    #[serde(default)]
    pub env: HashMap<String, Role>,
    #[serde(default, deserialize_with = "operands")]
    pub operands: Vec<Operand>,
    #[serde(default)]
    pub inert: Vec<String>,
    #[serde(default)]
    pub subcommand: Vec<Program>,
    /// The first operand is one of the enclosing program's subcommands.
    #[serde(default)]
    pub parent_subcommands: bool,
    /// This program is another one's spelling: `docker-compose` is `docker compose`.
    #[serde(default)]
    pub same_as: Vec<String>,
    /// The program reaches a machine only through a target it names (`git commit` names
    /// none): run without one, it needs no catalog, and a broken catalog does not stop it.
    #[serde(default)]
    pub only_by_target: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WrapperKind {
    #[default]
    Prefix,
    Xargs,
    Parallel,
    Find,
    Fd,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Wrapper {
    pub names: Vec<String>,
    #[serde(flatten)]
    pub syntax: Syntax,
    #[serde(default)]
    pub kind: WrapperKind,
    #[serde(default)]
    pub skip: usize,
    #[serde(default)]
    pub assignments: bool,
    #[serde(default)]
    pub shell_option: Vec<String>,
    #[serde(default)]
    pub shell_flags: Vec<String>,
    #[serde(default)]
    pub split_option: Vec<String>,
    #[serde(default)]
    pub shell_rest: bool,
    #[serde(default)]
    pub no_program: bool,
    /// Every operand is a shell command string (`trap 'CMD' EXIT`, `tmux new 'CMD'`); the
    /// wrapper runs no program of its own words.
    #[serde(default)]
    pub shell_operands: bool,
    /// The words after this option are the program and its arguments (`xterm -e PROGRAM…`);
    /// without it the wrapper runs no program.
    #[serde(default)]
    pub command_option: Vec<String>,
    #[serde(default)]
    pub inert: Vec<String>,
    /// Options whose value is the directory the program runs in (`env -C DIR`).
    #[serde(default)]
    pub chdir_option: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Shell {
    pub names: Vec<String>,
    #[serde(flatten)]
    pub syntax: Syntax,
    pub command_flag: char,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Interpreter {
    pub names: Vec<String>,
    #[serde(default)]
    pub code_options: Vec<String>,
    /// The first operand is the code (`awk 'PROGRAM'`).
    #[serde(default)]
    pub code_operand: bool,
    #[serde(flatten)]
    pub syntax: Syntax,
    pub runs: Vec<String>,
}

/// A program that changes the files its words name (self-protection: which words of a
/// command are written).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Writer {
    pub names: Vec<String>,
    /// It writes only with one of these options (`find -delete`, `find -exec`).
    #[serde(default)]
    pub only_with: Vec<String>,
    /// Options after which it runs a program on each file it finds (`find -exec`): it
    /// writes them when that program is a writer.
    #[serde(default)]
    pub runs_on_found: Vec<String>,
    /// Options whose value narrows the files it writes to those so named (`find -name`).
    #[serde(default)]
    pub name_tests: Vec<String>,
    /// A word `PREFIX…` names the file after the prefix (`dd of=FILE`).
    #[serde(default)]
    pub value_prefixes: Vec<String>,
    /// The last operand may be a directory that receives every other operand under its
    /// own name (`cp -r a/mesh-guard ~/.config/`).
    #[serde(default)]
    pub into_directory: bool,
    /// Only the files named are written, never a directory's contents (`git checkout -- .`
    /// leaves untracked files alone).
    #[serde(default)]
    pub exact: bool,
    /// With `into_directory`: options whose value is the destination directory (`cp -t DIR`).
    #[serde(default)]
    pub target_options: Vec<String>,
    /// With `into_directory`: the sources are only read (`cp`), not removed (`mv`).
    #[serde(default)]
    pub reads_sources: bool,
    /// It runs its standard input as a script (`sqlite3 < x.sql`): that text is read for
    /// the paths it names.
    #[serde(default)]
    pub stdin_script: bool,
    /// Its words after the first are code, read for the paths they name (`sqlite3 DB SQL`).
    #[serde(default)]
    pub code_operands: bool,
}

/// An agent CLI: started from inside a session, it must start with the guard's hooks.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Program names, and the package names launchers run it by (`npx @anthropic-ai/claude-code`).
    pub names: Vec<String>,
    /// The words that open its plugin commands (`claude plugin …`).
    #[serde(default)]
    pub plugin_commands: Vec<String>,
    /// The plugin commands that turn a plugin off.
    #[serde(default)]
    pub plugin_off: Vec<String>,
    /// Options whose value is settings JSON, or a settings file (`--settings`).
    #[serde(default)]
    pub settings_options: Vec<String>,
    /// Options whose value lists the settings sources loaded (`--setting-sources user,project`).
    #[serde(default)]
    pub setting_sources_options: Vec<String>,
    /// Options whose value overrides one configuration key (`codex -c key=value`): refused
    /// when the key is about hooks.
    #[serde(default)]
    pub config_options: Vec<String>,
    /// Variables that move where it reads its settings (`CLAUDE_CONFIG_DIR`, `HOME`).
    #[serde(default)]
    pub config_env: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    program: Vec<Program>,
    #[serde(default)]
    wrapper: Vec<Wrapper>,
    #[serde(default)]
    shell: Vec<Shell>,
    #[serde(default)]
    interpreter: Vec<Interpreter>,
    #[serde(default)]
    command_env: Vec<CommandEnv>,
    #[serde(default)]
    writer: Vec<Writer>,
    #[serde(default)]
    agent: Vec<Agent>,
}

/// Environment variables whose value is a command line another program runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandEnv {
    names: Vec<String>,
}

/// One file's rules (or several files' merged), by name.
#[derive(Debug, Default)]
struct Tables {
    programs: HashMap<String, Rc<Program>>,
    wrappers: HashMap<String, Rc<Wrapper>>,
    shells: HashMap<String, Rc<Shell>>,
    interpreters: HashMap<String, Rc<Interpreter>>,
    command_env: Vec<String>,
    writers: HashMap<String, Rc<Writer>>,
    agents: HashMap<String, Rc<Agent>>,
}

impl Tables {
    fn merge(&mut self, file: RulesFile) {
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
        for c in file.command_env {
            self.command_env.extend(c.names);
        }
    }
}

/// Every rule, looked up by program base name.
///
/// A hook call looks up a handful of names, so each built-in file is read only when one of
/// its names is asked for (`ls -la` reads none): the cost of a call does not grow with the
/// rules.
#[derive(Debug, Default)]
pub struct Rules {
    /// The built-in files, each parsed on first use; empty for `Rules::default()`.
    built_in: Option<[OnceCell<Tables>; BUILT_IN.len()]>,
    /// Rules from `--rules`, over the built-in ones.
    extra: Tables,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError(pub String);

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Program,
    Wrapper,
    Shell,
    Interpreter,
    CommandEnv,
    Writer,
    Agent,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Program => "program",
            Kind::Wrapper => "wrapper",
            Kind::Shell => "shell",
            Kind::Interpreter => "interpreter",
            Kind::CommandEnv => "command_env",
            Kind::Writer => "writer",
            Kind::Agent => "agent",
        }
    }
}

impl Rules {
    /// The built-in rules, then every `*.toml` in `extra` (sorted by name) over them.
    pub fn load(extra: Option<&Path>) -> Result<Rules, RulesError> {
        let mut rules = Rules {
            built_in: Some(Default::default()),
            extra: Tables::default(),
        };
        if let Some(dir) = extra {
            let unreadable = |e: std::io::Error| {
                RulesError(format!("{}: cannot read the rules: {e}", dir.display()))
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
                rules
                    .extra
                    .merge(parse_toml(&file.display().to_string(), &text)?);
            }
        }
        Ok(rules)
    }

    /// The tables of the last built-in file that defines `name` as a `kind`.
    fn built_in_for(&self, kind: Kind, name: &str) -> Option<&Tables> {
        let cells = self.built_in.as_ref()?;
        let found = names::NAMES
            .binary_search_by(|(k, n, _)| (*k, *n).cmp(&(kind.key(), name)))
            .ok()?;
        let at = names::NAMES[found].2;
        Some(cells[at].get_or_init(|| built_in_tables(at)))
    }

    fn lookup<T>(
        &self,
        kind: Kind,
        name: &str,
        table: impl Fn(&Tables) -> &HashMap<String, Rc<T>>,
    ) -> Option<&T> {
        if let Some(found) = table(&self.extra).get(name) {
            return Some(found);
        }
        self.built_in_for(kind, name)
            .and_then(|t| table(t).get(name))
            .map(Rc::as_ref)
    }

    pub fn program(&self, name: &str) -> Option<&Program> {
        self.lookup(Kind::Program, name, |t| &t.programs)
    }

    pub fn wrapper(&self, name: &str) -> Option<&Wrapper> {
        self.lookup(Kind::Wrapper, name, |t| &t.wrappers)
    }

    /// Whether the variable `name` holds a command line (`GIT_SSH_COMMAND`).
    pub fn is_command_env(&self, name: &str) -> bool {
        self.extra.command_env.iter().any(|n| n == name)
            || self.built_in_for(Kind::CommandEnv, name).is_some()
    }

    pub fn shell(&self, name: &str) -> Option<&Shell> {
        self.lookup(Kind::Shell, name, |t| &t.shells)
    }

    /// Interpreters are known by name or versioned name (`python3.12`, `node20`).
    pub fn interpreter(&self, name: &str) -> Option<&Interpreter> {
        self.lookup(Kind::Interpreter, name, |t| &t.interpreters)
            .or_else(|| {
                let base =
                    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
                self.lookup(Kind::Interpreter, base, |t| &t.interpreters)
            })
    }

    /// Which words of its command a program writes, if it writes files.
    pub fn writer(&self, name: &str) -> Option<&Writer> {
        self.lookup(Kind::Writer, name, |t| &t.writers)
    }

    /// An agent CLI by program or package name.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.lookup(Kind::Agent, name, |t| &t.agents)
    }

    /// Whether `name` is a program the guard refuses at mesh targets (for the quick pass
    /// that decides whether the catalog is needed at all).
    pub fn is_guarded(&self, name: &str) -> bool {
        self.program(name).is_some_and(|p| !p.only_by_target)
    }
}

/// A built-in file's tables: from its JSON form (the same data, read faster), or from the
/// TOML, which names the line of a mistake, should the JSON be missing.
fn built_in_tables(at: usize) -> Tables {
    let (name, text, json) = BUILT_IN[at];
    let file = serde_json::from_str::<RulesFile>(json)
        .or_else(|_| parse_toml(name, text))
        .unwrap_or_default();
    let mut tables = Tables::default();
    tables.merge(file);
    tables
}

fn parse_toml(name: &str, text: &str) -> Result<RulesFile, RulesError> {
    toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start].matches('\n').count() + 1)
            .unwrap_or(0);
        RulesError(format!("{name}:{line}: {}", e.message().trim()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_rules_are_read_from_json_as_from_toml() {
        for (name, text, json) in BUILT_IN {
            let fast: RulesFile =
                serde_json::from_str(json).unwrap_or_else(|e| panic!("{name}: {e}"));
            let slow: RulesFile = toml::from_str(text).unwrap();
            let names = |f: &RulesFile| {
                let mut all: Vec<String> = f.program.iter().flat_map(|p| p.names.clone()).collect();
                all.extend(f.wrapper.iter().flat_map(|w| w.names.clone()));
                all.extend(f.shell.iter().flat_map(|s| s.names.clone()));
                all.extend(f.interpreter.iter().flat_map(|i| i.names.clone()));
                all
            };
            assert_eq!(names(&fast), names(&slow), "{name}");
            for (a, b) in fast.program.iter().zip(&slow.program) {
                assert_eq!(a.options, b.options, "{name}");
                assert_eq!(a.subcommand.len(), b.subcommand.len(), "{name}");
                assert_eq!(a.syntax.short_value, b.syntax.short_value, "{name}");
            }
        }
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
        assert!(err.0.contains("x.toml:3:"), "{err}");
    }

    #[test]
    fn extra_rules_layer_over_the_built_in_ones() {
        let dir = std::env::temp_dir().join(format!("mesh-guard-extra-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.toml"), "[[program]]\nnames = [\"kubectl\"]\nover = \"kubectl\"\noperands = [\"verb\", \"container...\"]\n[[program]]\nnames = [\"scp\"]\nover = \"a new scp\"\n").unwrap();
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
        for (file, _, json) in BUILT_IN {
            let parsed: RulesFile = serde_json::from_str(json).unwrap();
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
