//! What `find` prints and puts for `{}`: paths that begin with a start point it was given
//! (GNU findutils' find(1): "the starting points … each file name begins with it"), so never
//! an option; with `-type f` alone in the expression, paths of regular files.

use super::super::{Command, Stdin, UNKNOWN};

/// A `find` command's reading: its start points and what its expression keeps.
pub struct FindReading {
    pub starts: Vec<String>,
    /// Only regular files are found (`-type f`, with no `-o`, `,`, `!` that could let
    /// others through).
    pub regular_files: bool,
    /// It prints the paths one a line (no action, or `-print`), as a pipe reads them.
    pub prints_lines: bool,
}

/// At most this many start points are followed one by one.
const MAX_STARTS: usize = 8;

pub fn find_reading(args: &[String]) -> FindReading {
    let mut rest = args.iter().peekable();
    // `-H`, `-L`, `-P`, `-D LIST`, `-O3` come before the start points.
    while let Some(arg) = rest.peek() {
        match arg.as_str() {
            "-H" | "-L" | "-P" => {
                rest.next();
            }
            "-D" => {
                rest.next();
                rest.next();
            }
            o if o.starts_with("-O") => {
                rest.next();
            }
            _ => break,
        }
    }
    let mut starts = Vec::new();
    while let Some(arg) =
        rest.next_if(|a| !a.starts_with(['-', '(', '!', ',']) && a.as_str() != ")")
    {
        starts.push(arg.clone());
    }
    if starts.is_empty() {
        starts.push(".".to_string());
    }
    let expression: Vec<&str> = rest.map(String::as_str).collect();
    let widens = |w: &&str| matches!(*w, "-o" | "-or" | "," | "!" | "-not");
    let types: Vec<&str> = expression
        .windows(2)
        .filter(|w| matches!(w[0], "-type" | "-xtype"))
        .map(|w| w[1])
        .collect();
    let regular_files = types == ["f"] && !expression.iter().any(widens);
    let prints_lines = expression
        .iter()
        .filter(|w| w.starts_with('-'))
        .all(|w| !is_action(w) || *w == "-print");
    starts.truncate(MAX_STARTS);
    FindReading {
        starts,
        regular_files,
        prints_lines,
    }
}

fn is_action(word: &str) -> bool {
    matches!(
        word,
        "-exec"
            | "-execdir"
            | "-ok"
            | "-okdir"
            | "-print"
            | "-print0"
            | "-printf"
            | "-fprint"
            | "-fprint0"
            | "-fprintf"
            | "-ls"
            | "-fls"
            | "-delete"
            | "-quit"
            | "-prune"
    )
}

/// A path under `start` whose rest cannot be known: what find puts for one file it found.
pub fn found_under(start: &str) -> String {
    let start = if start == "/" {
        ""
    } else {
        start.trim_end_matches('/')
    };
    format!("{start}/{UNKNOWN}")
}

fn is_find(command: &Command) -> bool {
    command
        .words
        .first()
        .is_some_and(|w| w.rsplit('/').next() == Some("find"))
}

/// `find START… [-type f] [-print]`: one line per start point, its paths under it.
pub(crate) fn find_output(command: &Command) -> Option<Stdin> {
    if !is_find(command) {
        return None;
    }
    let reading = find_reading(&command.words[1..]);
    if !reading.prints_lines || reading.starts.iter().any(|s| s.contains(UNKNOWN)) {
        return Some(Stdin::Unknown);
    }
    let lines: Vec<String> = reading.starts.iter().map(|s| found_under(s)).collect();
    Some(Stdin::Text(lines.join("\n")))
}

/// Whether the command is a `find` that prints only regular files' paths.
pub(crate) fn prints_regular_files(command: &Command) -> bool {
    is_find(command) && {
        let reading = find_reading(&command.words[1..]);
        reading.prints_lines && reading.regular_files
    }
}
