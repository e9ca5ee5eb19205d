//! The rules' format: how a program's arguments are read, and what wrappers, shells,
//! interpreters, writers and agents are. Data only.

pub use super::agent::{Agent, GuardCli};
use super::role::*;
use super::runner::Runner;
use super::syntax::Syntax;
use serde::Deserialize;
use std::collections::HashMap;

/// Declares a rules table twice: the type the guard reads (its option syntax gathered in
/// `syntax`), and its TOML form, in which every key is checked. Serde cannot refuse an
/// unknown key through `#[serde(flatten)]`, so the syntax keys are written out here once.
macro_rules! with_syntax {
    (
        $(#[$meta:meta])*
        pub struct $name:ident as $form:ident($form_str:literal) {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, Deserialize)]
        #[serde(from = $form_str)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            pub syntax: Syntax,
        }

        #[doc(hidden)]
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $form {
            $( $(#[$fmeta])* $field: $ty, )*
            #[serde(default)]
            short_value: String,
            #[serde(default)]
            long_value: Vec<String>,
            #[serde(default)]
            stop_at_operand: bool,
            #[serde(default)]
            options_after_first_operand: bool,
            #[serde(default)]
            single_dash_long: bool,
            #[serde(default)]
            long_two_values: Vec<String>,
            #[serde(default)]
            short_flag: String,
            #[serde(default)]
            long_flag: Vec<String>,
            #[serde(default)]
            optional_value: Vec<String>,
            #[serde(default)]
            abbreviations: bool,
        }

        impl From<$form> for $name {
            fn from(f: $form) -> $name {
                $name {
                    $( $field: f.$field, )*
                    syntax: Syntax {
                        short_value: f.short_value,
                        long_value: f.long_value,
                        stop_at_operand: f.stop_at_operand,
                        options_after_first_operand: f.options_after_first_operand,
                        single_dash_long: f.single_dash_long,
                        long_two_values: f.long_two_values,
                        short_flag: f.short_flag,
                        long_flag: f.long_flag,
                        optional_value: f.optional_value,
                        abbreviations: f.abbreviations,
                    },
                }
            }
        }
    };
}

#[derive(Debug, Clone, Deserialize)]
pub struct Operand {
    pub role: Role,
    /// This role takes every remaining operand.
    pub rest: bool,
}

pub(crate) fn operands<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Operand>, D::Error> {
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

with_syntax! {
    /// A guarded program (or one of its subcommands).
    pub struct Program as ProgramToml("ProgramToml") {
        pub names: Vec<String>,
        /// How the message says it reaches its target: "ssh", "the container engine".
        #[serde(default)]
        pub over: String,
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
        /// Another program whose `replaces` shapes this one ranks against, in its place:
        /// `rsh atlas uptime` as `ssh atlas uptime`.
        #[serde(default)]
        pub ranks_as: String,
        /// The program reaches a machine only through a target it names (`git commit` names
        /// none): run without one, it needs no catalog, and a broken catalog does not stop it.
        #[serde(default)]
        pub only_by_target: bool,
        /// In an operator's `--rules` file: this program replaces the built-in one of the
        /// same name whole. Without it, naming a built-in program extends it (more names,
        /// options, environment variables), and redefining it is an error.
        #[serde(default)]
        pub replace: bool,
        /// D-Bus methods (or busctl verbs, or a container engine API path's actions) and the
        /// command each does to the unit or container it is called on: `RestartUnit =
        /// "systemctl restart"`, `logs = "docker logs"`. A call ranks as that command on its
        /// object, so the tool that replaces the command is offered for the call.
        #[serde(default)]
        pub methods: HashMap<String, String>,
    }
}

// A wrapper's table, beside: this file holds the macro its form is declared with.
#[path = "wrapper.rs"]
mod wrapper;
pub use wrapper::*;

with_syntax! {
    pub struct Shell as ShellToml("ShellToml") {
        pub names: Vec<String>,
        pub command_flag: char,
        /// POSIX: the operands after the command string are `$0`, `$1`, … of the script.
        #[serde(default)]
        pub positional: bool,
    }
}

with_syntax! {
    pub struct Interpreter as InterpreterToml("InterpreterToml") {
        pub names: Vec<String>,
        #[serde(default)]
        pub code_options: Vec<String>,
        /// The first operand is the code (`awk 'PROGRAM'`).
        #[serde(default)]
        pub code_operand: bool,
        pub runs: Vec<String>,
        /// Calls that only print or log their arguments (`print`, `console.log`): a literal
        /// given to one is data (decision 0054).
        #[serde(default)]
        pub prints: Vec<String>,
        /// Words after which the statement is a program and its arguments (Tcl's `exec`).
        #[serde(default)]
        pub command_words: Vec<String>,
    }
}

with_syntax! {
/// A program that changes the files its words name (self-protection: which words of a
/// command are written). Its option syntax, when given, is how the keys below that name
/// options are read: bundled (`curl -sSo FILE`), attached (`-oFILE`), `--long=value`.
pub struct Writer as WriterToml("WriterToml") {
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
    /// Options whose value is the one file it writes (`curl -o FILE`, `wget -O FILE`); its
    /// other words are what it reads (URLs), not files it writes.
    #[serde(default)]
    pub output_options: Vec<String>,
    /// Options whose value is the directory its output lands in (`curl --output-dir`,
    /// `wget -P`).
    #[serde(default)]
    pub output_dir_options: Vec<String>,
    /// Options after which each URL it fetches is saved under the URL's own file name
    /// (`curl -O`).
    #[serde(default)]
    pub remote_name_options: Vec<String>,
    /// Without an output option, each URL it fetches is saved under its own file name
    /// (`wget URL`).
    #[serde(default)]
    pub saves_urls: bool,
    /// Options whose value is the directory its file operands are relative to (`git -C DIR`,
    /// `git --work-tree DIR`).
    #[serde(default)]
    pub base_dir_options: Vec<String>,
    /// Options whose value is a file written besides the output (`curl --cookie-jar`,
    /// `wget --output-file`): unlike `output_options`, they leave the URLs saved by name.
    #[serde(default)]
    pub also_writes: Vec<String>,
    /// Options whose value is a directory it writes files into whose names its words do not
    /// say (an archive's members: `tar -x -C DIR`, `cpio -i -D DIR`, `7z x -oDIR`).
    #[serde(default)]
    pub into_options: Vec<String>,
    /// The operand, counted from 1, that is the file it writes (`uniq IN OUT`: 2).
    #[serde(default)]
    pub output_operand: usize,
    /// A first word without a dash is a group of its short options whose values are the
    /// words after it, in order (tar's old style: `tar xfC A.tar DIR`).
    #[serde(default)]
    pub old_style: bool,
    /// Each word is one switch, its value attached, named by the option it begins with
    /// (7-Zip's command line: `-oDIR`, `-y`).
    #[serde(default)]
    pub switches: bool,
    /// The operand, counted from 1, that is a directory it writes unnamed files into
    /// (`cpio -p DIR`).
    #[serde(default)]
    pub into_operand: usize,
    /// An option's value (or, keyed `"operand"`, the output or into operand) is written only
    /// with one of these, options or the first operand: tar's `-f` when it creates (`-c`),
    /// its `-C` when it extracts (`-x`).
    #[serde(default)]
    pub written_when: HashMap<String, Vec<String>>,
}
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulesFile {
    #[serde(default)]
    pub(crate) program: Vec<Program>,
    #[serde(default)]
    pub(crate) wrapper: Vec<Wrapper>,
    #[serde(default)]
    pub(crate) shell: Vec<Shell>,
    #[serde(default)]
    pub(crate) interpreter: Vec<Interpreter>,
    #[serde(default)]
    pub(crate) command_env: Vec<CommandEnv>,
    #[serde(default)]
    pub(crate) writer: Vec<Writer>,
    #[serde(default)]
    pub(crate) agent: Vec<Agent>,
    #[serde(default)]
    pub(crate) guard_cli: Vec<GuardCli>,
    #[serde(default)]
    pub(crate) declaration: Vec<Declaration>,
    #[serde(default)]
    pub(crate) environment_setter: Vec<Declaration>,
    /// Policy tests kept beside the rules they test (`mesh-guard test`): not rules.
    #[serde(default, rename = "case")]
    pub(crate) _policy_cases: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    pub(crate) arguments: Vec<Arguments>,
    #[serde(default)]
    pub(crate) runner: Vec<Runner>,
}

with_syntax! {
    /// What a program does with its argument words, for the check that finds a guarded program
    /// or shell code among any program's arguments (`pkexec ssh atlas`, `hyperfine 'ssh atlas'`).
    pub struct Arguments as ArgumentsToml("ArgumentsToml") {
        pub names: Vec<String>,
        /// Every argument is data (`echo`, `grep`): nothing in it runs.
        #[serde(default)]
        pub data: bool,
        /// Only these options' values are data (`git commit -m`, `gh --body`); a short one
        /// is read in a group too (`git commit -am MSG`).
        #[serde(default)]
        pub data_options: Vec<String>,
        /// Subcommands (its first operand, by its option syntax) whose operands are data
        /// (`git grep PATTERN`); their options are still read.
        #[serde(default)]
        pub data_subcommands: Vec<String>,
        /// Its standard input is shell code it runs later (`at`, `batch`, `crontab -`).
        #[serde(default)]
        pub stdin_code: bool,
    }
}

/// A list of names: shell builtins whose `NAME=VALUE` words assign variables (`export`,
/// `declare`), or programs that set variables for sessions to come (`launchctl setenv`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Declaration {
    pub(crate) names: Vec<String>,
}

/// Environment variables whose value is a command line another program runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CommandEnv {
    pub(crate) names: Vec<String>,
}
