//! Bash source → the simple commands bash would run, with their words expanded as far as
//! the command itself tells (assignments, loop lists, quoting), and the rest marked unknown.
//!
//! The parse is `shuck-parser`'s (docs/decisions/0001-shell-parser.md); this module only walks
//! its tree. Anything whose value cannot be known statically is written as [`UNKNOWN`], a
//! character bash strings cannot hold, so later steps can tell a known `atlas` from a
//! `$host` they must not trust.

mod expand;
pub mod quote;
mod walk;
#[cfg(test)]
mod walk_tests;

pub(crate) use expand::SPLIT;
pub use walk::find_output::{find_reading, found_under};
pub use walk::is_socket_path;

use std::collections::HashMap;

/// Stands for a part of a word whose value cannot be known from the command text.
pub const UNKNOWN: char = '\0';

/// Whether a word holds no part that cannot be known.
pub fn is_known(word: &str) -> bool {
    !word.contains(UNKNOWN)
}

/// What a shell reads of bytes a decoder printed, as its script or a substitution's value:
/// bash and dash drop NUL bytes there, so a NUL is no way to hide a payload from the walk.
pub(crate) fn shell_text(bytes: &[u8]) -> Option<String> {
    String::from_utf8(bytes.iter().copied().filter(|&b| b != 0).collect()).ok()
}

/// Limits that keep every input cheap; past them the command is unverifiable.
pub const MAX_COMMANDS: usize = 4096;
pub const MAX_ALTERNATIVES: usize = 256;

/// What a command reads on standard input, as far as the command text tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// The terminal or the parent's input.
    Inherited,
    /// Text from a heredoc, here-string or a pipe from `echo`/`printf`; may hold [`UNKNOWN`].
    Text(String),
    /// Bytes a decoder printed that are not text (`base64 -d` of a gzip stream): input for
    /// the next decoder; to a shell, code that cannot be read.
    Bytes(Vec<u8>),
    /// A pipe or file whose content cannot be known.
    Unknown,
}

/// One simple command bash would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Program and arguments after expansion and field splitting.
    pub words: Vec<String>,
    /// Its own assignments: prefix assignments (`X=1 cmd`), or what `export`/a bare
    /// assignment sets. The whole script's variables are in [`Script::variables`].
    pub env: Vec<(String, String)>,
    pub stdin: Stdin,
    /// Files its redirections write to.
    pub writes: Vec<String>,
    /// What the files its words name hold, where the command itself wrote them: a process
    /// substitution's output (`bash <(echo …)`), a file written earlier (`echo … > s.sh`).
    pub files: Vec<(String, String)>,
    /// How many payloads (`bash -c`, `eval`, ssh remote commands) it sits inside.
    pub depth: usize,
    /// Each word holding an [`UNKNOWN`] part, with the text the command wrote for it
    /// (`"$APP_DIR"`): a refusal shows an unknown value as the agent wrote it.
    pub written: Vec<(String, String)>,
    /// It runs inside a command or process substitution: its output becomes part of
    /// another command's words, so what it names can flow into that command.
    pub feeds: bool,
    /// Its input is the paths `find -type f` prints: each line names a regular file.
    pub stdin_regular_files: bool,
    /// Words known to name regular files, never directories (`find -type f`'s `{}`).
    pub regular_files: Vec<String>,
}

/// Every simple command of a shell source, in the order bash would meet them.
#[derive(Debug, Default, Clone)]
pub struct Script {
    pub commands: Vec<Command>,
    /// Names of variables assigned anywhere, with every value seen (assignments, loops).
    pub variables: HashMap<String, Vec<String>>,
    /// Every value assigned to a variable, loop lists included, for "does the command name
    /// the mesh" (bounded).
    pub mentioned: Vec<String>,
    /// Set when a limit was reached: the command cannot be fully verified.
    pub incomplete: Option<String>,
    /// Names of the functions it defines: a call's arguments reach the body's `$@`.
    pub functions: Vec<String>,
    /// Files it reads whose content it did not write (`< hosts.txt`, `cat hosts.txt`,
    /// `xargs -a hosts.txt`, `parallel :::: hosts.txt`), as written: a caller that has read
    /// them may walk it again with their text ([`parse_reading`]).
    pub inputs: Vec<String>,
}

/// Why a source could not be walked at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

/// Parses `source` as bash and lists the simple commands it would run.
///
/// `inherited` holds variables known from an enclosing command (a payload inherits
/// the assignments made before `bash -c`).
pub fn parse(
    source: &str,
    depth: usize,
    inherited: &HashMap<String, Vec<String>>,
) -> Result<Script, ParseError> {
    parse_reading(source, depth, inherited, &HashMap::new())
}

/// [`parse`], with the text of files the command reads (by path as written) known.
pub fn parse_reading(
    source: &str,
    depth: usize,
    inherited: &HashMap<String, Vec<String>>,
    read: &HashMap<String, String>,
) -> Result<Script, ParseError> {
    let result = shuck_parser::parser::Parser::new(source).parse();
    if let Some(error) = result.terminal_error {
        return Err(ParseError(error.to_string()));
    }
    // A recovered parse skipped text it did not understand: `(a=(x)); ssh db` comes back
    // with no command at all. What was skipped may run, so the source is not walked.
    if result.status != shuck_parser::parser::ParseStatus::Clean {
        let why = result.diagnostics.first().map_or_else(
            || "the command is not valid bash".to_string(),
            |d| d.message.clone(),
        );
        return Err(ParseError(why));
    }
    Ok(walked(source, depth, inherited, read, &result.file.body))
}

/// The parsed source walked into its commands. Not inlined into `parse_reading`, whose frame
/// is on the stack under the parser (the deepest the hook goes): the walker's state is not.
#[inline(never)]
fn walked(
    source: &str,
    depth: usize,
    inherited: &HashMap<String, Vec<String>>,
    read: &HashMap<String, String>,
    body: &shuck_ast::StmtSeq,
) -> Script {
    let mut walker = walk::Walker::new(source, depth, inherited.clone());
    walker.files.clone_from(read);
    walker.seq(body);
    walker.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(source: &str) -> Vec<Vec<String>> {
        let script = parse(source, 0, &HashMap::new()).expect("parses");
        script.commands.into_iter().map(|c| c.words).collect()
    }

    fn w(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn quoting_and_escapes_in_the_program_word() {
        assert_eq!(
            words(r#"\ssh "a"tl'as'$'\x41'"#),
            vec![w(&["ssh", "atlasA"])]
        );
        assert_eq!(words(r#"s''sh "x\"y""#), vec![w(&["ssh", "x\"y"])]);
        assert_eq!(words("ss\\\nh atlas"), vec![w(&["ssh", "atlas"])]);
    }

    #[test]
    fn lists_pipes_and_substitutions() {
        let found = words("a; b && c || d | e & f $(g) `h` <(i)");
        let programs: Vec<&str> = found.iter().map(|c| c[0].as_str()).collect();
        assert_eq!(programs, ["a", "b", "c", "d", "e", "g", "h", "i", "f"]);
    }

    #[test]
    fn variables_from_the_command_itself() {
        assert_eq!(words("H=atlas; ssh $H")[1], w(&["ssh", "atlas"]));
        assert_eq!(
            words("for h in atlas orion; do ssh $h; done"),
            vec![w(&["ssh", "atlas"]), w(&["ssh", "orion"])]
        );
        assert_eq!(
            words("C='ssh atlas'; $C uptime")[1],
            w(&["ssh", "atlas", "uptime"])
        );
        assert_eq!(
            words("ssh \"$X\"")[0],
            vec!["ssh".to_string(), UNKNOWN.to_string()]
        );
        assert_eq!(words("X=; $X ssh atlas")[1], w(&["ssh", "atlas"]));
        assert_eq!(words("s{s,}h atlas")[0], w(&["ssh", "sh", "atlas"]));
        assert_eq!(words("$(echo ssh) atlas")[1], w(&["ssh", "atlas"]));
        assert_eq!(
            words("echo atlas | while read h; do ssh $h; done")[2],
            w(&["ssh", "atlas"])
        );
    }

    #[test]
    fn heredocs_and_here_strings_feed_stdin() {
        let script = parse(
            "bash <<'EOF'\nssh atlas\nEOF\nsh <<< 'ssh orion'",
            0,
            &HashMap::new(),
        )
        .unwrap();
        assert_eq!(script.commands[0].stdin, Stdin::Text("ssh atlas\n".into()));
        assert_eq!(script.commands[1].stdin, Stdin::Text("ssh orion".into()));
        let script = parse(
            "git commit -m \"$(cat <<'EOF'\nfix (the) thing)\nEOF\n)\"",
            0,
            &HashMap::new(),
        )
        .unwrap();
        assert_eq!(script.commands.last().unwrap().words[0], "git");
    }

    #[test]
    fn functions_and_compound_commands_are_walked() {
        let programs: Vec<String> = words("f() { ssh atlas; }; if x; then y; elif z; then q; else r; fi; case a in b) c;; esac; (s); { t; }; while u; do v; done")
            .into_iter()
            .map(|c| c[0].clone())
            .collect();
        // `f` is never called: its body runs nothing.
        assert_eq!(programs, ["x", "y", "z", "q", "r", "c", "s", "t", "u", "v"]);
    }

    #[test]
    fn a_function_runs_where_it_is_called_or_may_be() {
        let programs = |source: &str| -> Vec<String> {
            words(source).into_iter().map(|c| c[0].clone()).collect()
        };
        assert_eq!(programs("f() { ssh atlas; }; f"), ["f", "ssh"]);
        // Called where the walk cannot follow: by name elsewhere, or by an unknown program.
        assert!(programs("f() { ssh atlas; }; trap f EXIT").contains(&"ssh".to_string()));
        assert!(programs("f() { ssh atlas; }; $(cat x)").contains(&"ssh".to_string()));
        // `ff` and `f-x` are other names.
        assert!(!programs("f() { ssh atlas; }; ff; f-x").contains(&"ssh".to_string()));
    }

    #[test]
    fn a_parse_that_skipped_text_is_no_parse() {
        // shuck recovers from `))` by dropping every command of the source.
        for source in ["(a=(x)); ssh atlas", "ssh atlas; (a=(x))"] {
            assert!(parse(source, 0, &HashMap::new()).is_err(), "{source}");
        }
        assert!(parse("( a=(x) ); ssh atlas", 0, &HashMap::new()).is_ok());
    }
}
#[cfg(test)]
mod input_tests {
    #[test]
    fn a_file_read_is_noted_and_its_lines_are_the_values_once_known() {
        let source = "for h in $(< hosts.txt); do ssh $h; done; xargs -a list ssh";
        let script = super::parse(source, 0, &Default::default()).unwrap();
        assert_eq!(script.inputs, ["hosts.txt", "list"]);
        let read = [("hosts.txt".to_string(), "db\ncache\n".to_string())].into();
        let script = super::parse_reading(source, 0, &Default::default(), &read).unwrap();
        let hosts: Vec<&str> = script
            .commands
            .iter()
            .map(|c| c.words[1].as_str())
            .collect();
        assert_eq!(&hosts[..2], ["db", "cache"]);
    }
}
