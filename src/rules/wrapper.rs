//! The rules' format for a wrapper: a program that runs another (decision 0063).

use super::Syntax;
use serde::Deserialize;

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

with_syntax! {
    pub struct Wrapper as WrapperToml("WrapperToml") {
        pub names: Vec<String>,
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
        /// Spellings the wrapper turns into a line end in the text it reads as a shell
        /// command (screen's `stuff 'CMD\n'`, `CMD^M`): each ends a command there too.
        #[serde(default)]
        pub line_ends: Vec<String>,
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
        /// Its options are read after operands too (GNU getopt without `+`). Without it, a
        /// wrapper's options end at its first operand, the program it runs (decision 0063).
        #[serde(default)]
        pub permute: bool,
        /// With `shell_rest`: options after which the words are a program and its arguments,
        /// not a shell command (`watch -x`).
        #[serde(default)]
        pub program_flags: Vec<String>,
        /// Options without which its operands are no program (`runuser -u USER PROGRAM…`;
        /// `runuser USER` is su's form, whose operands go to the user's shell).
        #[serde(default)]
        pub program_options: Vec<String>,
        /// Words that, first among the operands after `skip`, make the next operand a shell
        /// command: `flock FILE -c CMD`, `sg GROUP -c CMD` (read as words, not options).
        #[serde(default)]
        pub shell_word: Vec<String>,
        /// Where the table was read from, with the version (`sudo 1.9.15p5 --help`).
        #[serde(default)]
        pub source: String,
    }
}
