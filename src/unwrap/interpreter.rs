//! Interpreters' inline code (`python3 -c`, `awk`, `node -e`): the shell commands it runs.

use super::sinks::Sinks;
use super::{Step, operands_after_options, payload};
use crate::shell::{Command, Stdin};

/// The code an interpreter runs from its words or its input (`python3 -c CODE`,
/// `awk 'PROGRAM'`, `python3 - <<EOF`), when the command says.
pub fn interpreter_code(
    interpreter: &crate::rules::Interpreter,
    command: &Command,
    args: &[String],
) -> Option<String> {
    let mut code = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if interpreter.code_options.contains(arg) {
            code = rest.next().cloned();
            break;
        }
        // `node --eval=CODE`.
        if let Some(glued) = interpreter.code_options.iter().find_map(|o| {
            (o.starts_with("--"))
                .then(|| arg.strip_prefix(o.as_str())?.strip_prefix('='))
                .flatten()
        }) {
            code = Some(glued.to_string());
            break;
        }
        // `python3 -Sc 'code'`: the code option ends a flag group.
        let ends_group = interpreter.code_options.iter().any(|o| {
            o.len() == 2 && arg.starts_with('-') && !arg.starts_with("--") && arg.ends_with(&o[1..])
        });
        if ends_group {
            code = rest.next().cloned();
            break;
        }
    }
    // `python3 - <<EOF`, `… | perl`: with no code option and no script file, the
    // interpreter runs its standard input; `awk 'PROGRAM'` takes its code as an operand.
    let operands = operands_after_options(&interpreter.syntax, args);
    code.or_else(|| {
        if interpreter.code_operand {
            return operands.first().cloned();
        }
        let reads_stdin = operands.first().is_none_or(|o| o == "-");
        match &command.stdin {
            Stdin::Text(text) if reads_stdin => Some(text.clone()),
            _ => None,
        }
    })
}

/// The script file an interpreter runs (`python3 -u deploy.py`): its first operand, when
/// no code is given on the command line and the code is not an operand (`awk`).
pub fn script_operand(interpreter: &crate::rules::Interpreter, args: &[String]) -> Option<String> {
    if interpreter.code_operand {
        return None;
    }
    let script = operands_after_options(&interpreter.syntax, args)
        .into_iter()
        .next()
        .filter(|o| o != "-" && !o.starts_with("/dev/"))?;
    // Only the options before the script are the interpreter's: `-c` after it is the
    // script's own.
    let before = &args[..args.iter().position(|a| *a == script).unwrap_or(args.len())];
    let inline = before.iter().any(|arg| {
        interpreter.code_options.iter().any(|o| {
            arg == o
                || arg.starts_with(&format!("{o}="))
                || (o.len() == 2
                    && arg.starts_with('-')
                    && !arg.starts_with("--")
                    && arg.ends_with(&o[1..]))
        })
    });
    (!inline).then_some(script)
}

/// The shell commands an interpreter's code runs, as payloads: read only when the code
/// calls one of the interpreter's `runs`.
pub fn code_steps(
    interpreter: &crate::rules::Interpreter,
    command: &Command,
    code: &str,
    out: &mut Vec<Step>,
) {
    if interpreter
        .runs
        .iter()
        .any(|marker| code.contains(marker.as_str()))
    {
        let literals =
            literals_that_may_run(code, &command.words, &interpreter.prints, &interpreter.runs);
        run_literals(command, &literals, out);
        command_statements(command, &interpreter.command_words, code, out);
    }
}

/// Tcl's `exec PROG ARGS…`: after one of the interpreter's `command_words`, the rest of the
/// statement (to `]`, `;` or the line's end) is a program and its arguments.
pub(crate) fn command_statements(
    command: &Command,
    words: &[String],
    code: &str,
    out: &mut Vec<Step>,
) {
    for line in code.split(['\n', ';', '[', ']']) {
        let mut tokens = line.split_whitespace();
        while let Some(token) = tokens.next() {
            if words.iter().any(|w| w == token) {
                let rest: Vec<&str> = tokens.by_ref().collect();
                out.push(payload(command, rest.join(" ")));
            }
        }
    }
}

/// Each literal as a shell command, and runs of them as a program and its arguments.
fn run_literals(command: &Command, literals: &[String], out: &mut Vec<Step>) {
    for literal in literals {
        out.push(payload(command, literal.clone()));
    }
    // Any literal may start an argument list; a bounded number keeps this linear enough.
    for start in 0..literals.len().min(64) {
        if literals.len() - start > 1 {
            // A program and its arguments: the first words after it are enough to judge it.
            let argv: Vec<String> = literals[start..]
                .iter()
                .take(256)
                .map(|l| shell_words::quote(l).into_owned())
                .collect();
            out.push(payload(command, argv.join(" ")));
        }
    }
}

/// The contents of '…', "…" and `…` literals, escapes taken as the next character; then,
/// when the code joins strings (`"s" + "sh"`, perl's `.`, lua's `..`, Python's adjacent
/// literals), the literals again with each joined run as the one value the language
/// computes. A part that is not a literal (`"ssh " + host`) may be any literal of the code
/// (the value a name holds is most often spelled in it: `host = "atlas"`), or something
/// else ([`UNKNOWN`](crate::shell::UNKNOWN)): what the code may run is never less than what
/// it spells.
#[cfg(test)]
pub(crate) fn string_literals(code: &str, arguments: &[String]) -> Vec<String> {
    literals_that_may_run(code, arguments, &[], &[])
}

/// [`string_literals`] without those the code only prints (`prints`: the interpreter's
/// calls that print or log their arguments), nor the joined values made only of them.
/// Backticks run their contents where the interpreter's `runs` say (perl, ruby, php), and
/// `qx`/`%x` always; a literal that interpolates code (`${…}`) or names one of `runs`
/// (`f"{os.system('…')}"`, `"#{`…`}"`) may run what it holds: none is only printed.
pub(crate) fn literals_that_may_run(
    code: &str,
    arguments: &[String],
    prints: &[String],
    runs: &[String],
) -> Vec<String> {
    literals_inside(code, arguments, prints, runs, 0)
}

/// Literals inside an interpolating literal (`f"{os.system('ssh x')}"`) are read again, to
/// this depth.
const MAX_INTERPOLATION_DEPTH: usize = 4;

fn literals_inside(
    code: &str,
    arguments: &[String],
    prints: &[String],
    runs: &[String],
    depth: usize,
) -> Vec<String> {
    let backticks_run = runs.iter().any(|r| r == "`");
    let mut inner: Vec<String> = Vec::new();
    let mut literals: Vec<(String, Option<usize>)> = Vec::new();
    let mut sinks = Sinks::new(prints);
    let mut chains = Chains::default();
    let mut chars = code.chars().peekable();
    let mut previous = None;
    while let Some(c) = chars.next() {
        // perl's `qx(…)` and ruby's `%x(…)` run their contents, whatever the delimiter.
        let quote_like = matches!((previous, c), (Some('q'), 'x') | (Some('%'), 'x'));
        let close = match (c, quote_like) {
            ('\'' | '"' | '`', _) => Some(c),
            (_, true) => chars
                .next_if(|d| !d.is_alphanumeric() && !d.is_whitespace())
                .map(closing),
            _ => None,
        };
        previous = Some(c);
        let Some(close) = close else {
            chains.other(c, chars.peek().copied());
            sinks.other(c);
            continue;
        };
        let runs_itself = quote_like || (close == '`' && backticks_run);
        let print = sinks.literal().filter(|_| !runs_itself);
        let mut literal = String::new();
        while let Some(d) = chars.next() {
            match d {
                '\\' => literal.extend(chars.next()),
                d if d == close => break,
                d => literal.push(d),
            }
        }
        let interpolates =
            literal.contains("${") || runs.iter().any(|r| literal.contains(r.as_str()));
        let print = print.filter(|_| !interpolates);
        if interpolates && depth < MAX_INTERPOLATION_DEPTH {
            inner.extend(literals_inside(
                &literal,
                arguments,
                prints,
                runs,
                depth + 1,
            ));
        }
        chains.literal(&literal, quote_like, print);
        literals.push((literal, print));
        previous = None;
    }
    let only_printed = |print: &Option<usize>| sinks.only_printed(*print);
    let all: Vec<String> = literals.iter().map(|(l, _)| l.clone()).collect();
    let mut out: Vec<String> = literals
        .into_iter()
        .filter(|(_, print)| !only_printed(print))
        .map(|(l, _)| l)
        .collect();
    chains.values(&mut out, &all, arguments, only_printed);
    out.extend(inner);
    out
}

/// A part of a joined run of strings.
enum Part {
    Literal(String),
    Unknown,
}

/// The code's literals grouped into runs joined by an operator, as [`string_literals`]
/// reads them.
#[derive(Default)]
struct Chains {
    runs: Vec<Vec<Part>>,
    /// Per run: the print each of its literals was given to.
    prints: Vec<Vec<Option<usize>>>,
    /// The last thing read was a literal, or a value that is not one (a name, a call).
    after_literal: bool,
    after_value: bool,
    /// A joining operator follows it.
    joining: bool,
}

impl Chains {
    fn literal(&mut self, literal: &str, quote_like: bool, print: Option<usize>) {
        let joins = !quote_like && (self.joining || self.after_literal);
        if joins && self.after_value {
            // `host + "…"`: the run starts with what cannot be known.
            self.runs.push(vec![Part::Unknown]);
            self.prints.push(vec![print]);
        } else if !joins || self.runs.is_empty() {
            self.runs.push(Vec::new());
            self.prints.push(vec![print]);
        } else if let Some(prints) = self.prints.last_mut() {
            prints.push(print);
        }
        if let Some(run) = self.runs.last_mut() {
            run.push(Part::Literal(literal.to_string()));
        }
        self.after_literal = !quote_like;
        self.after_value = false;
        self.joining = false;
    }

    /// Any character outside a literal; `next` is the one after it.
    fn other(&mut self, c: char, next: Option<char>) {
        if c.is_whitespace() {
            return;
        }
        // `+`; `.` and `..` followed by a space, a quote or a variable (`"ssh ".$host`), not
        // a method call (`", ".join`).
        let joins = c == '+'
            || (c == '.' && next.is_none_or(|n| n.is_whitespace() || "'\"`.$".contains(n)));
        if joins && (self.after_literal || self.after_value) {
            self.joining = true;
            return;
        }
        if c == '.' && self.joining {
            return;
        }
        let value = c.is_alphanumeric() || matches!(c, '_' | '$' | '@' | ')' | ']');
        if value && self.joining && self.after_literal {
            // `"ssh " + host`: the run ends with what cannot be known.
            if let Some(run) = self.runs.last_mut() {
                run.push(Part::Unknown);
            }
        }
        self.after_value = value;
        self.after_literal = false;
        self.joining = false;
    }

    /// The literals again with each joined run as one value, then each run with a part
    /// that is not a literal as each literal of the code; nothing when nothing is joined.
    fn values(
        self,
        out: &mut Vec<String>,
        all: &[String],
        arguments: &[String],
        only_printed: impl Fn(&Option<usize>) -> bool,
    ) {
        if self.runs.iter().all(|run| run.len() < 2) {
            return;
        }
        // Bounded, as every value becomes a command to decide: a host's name is short, a
        // run of many parts is not a command line, and the values stop at a total size.
        let mut literals: Vec<String> = Vec::new();
        for literal in all.iter().chain(arguments) {
            if literals.len() == MAX_SUBSTITUTES {
                break;
            }
            if !literal.is_empty() && literal.len() <= MAX_SUBSTITUTE && !literals.contains(literal)
            {
                literals.push(literal.clone());
            }
        }
        let mut budget = Budget {
            values: MAX_JOINED,
            bytes: MAX_JOINED_BYTES,
        };
        let join = |run: &[Part], unknown: &str| -> String {
            run.iter()
                .map(|part| match part {
                    Part::Literal(text) => text.as_str(),
                    Part::Unknown => unknown,
                })
                .collect()
        };
        let runs: Vec<&Vec<Part>> = self
            .runs
            .iter()
            .zip(&self.prints)
            .filter(|(_, prints)| !prints.iter().all(&only_printed))
            .map(|(run, _)| run)
            .collect();
        let known = |run: &&&Vec<Part>| run.iter().all(|p| matches!(p, Part::Literal(_)));
        for run in runs.iter().filter(known) {
            budget.push(out, join(run, ""));
        }
        let with_a_name =
            |r: &&&Vec<Part>| r.len() <= MAX_PARTS && r.iter().any(|p| matches!(p, Part::Unknown));
        for run in runs.iter().filter(with_a_name) {
            for literal in &literals {
                budget.push(out, join(run, literal));
            }
        }
    }
}

/// At most this many joined values, and bytes in all, per piece of code.
const MAX_JOINED: usize = 256;
const MAX_JOINED_BYTES: usize = 64 * 1024;
/// A name's value is tried as each literal up to a host name's length, at most this many.
const MAX_SUBSTITUTE: usize = 255;
const MAX_SUBSTITUTES: usize = 32;
/// A run with a name is tried only up to this many parts (`"ssh " + user + "@" + host`).
const MAX_PARTS: usize = 8;

struct Budget {
    values: usize,
    bytes: usize,
}

impl Budget {
    fn push(&mut self, out: &mut Vec<String>, value: String) {
        if self.values == 0 || value.len() > self.bytes {
            return;
        }
        self.values -= 1;
        self.bytes -= value.len();
        out.push(value);
    }
}

/// The closing delimiter of a bracketing pair (`(` → `)`); others close themselves.
pub(crate) fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}
