//! Wrappers and payloads → the commands that really run: `sudo -E env X=1 timeout 5 ssh …`
//! is `ssh …`; `bash -c '…'`, `eval …`, `sh <<EOF`, `find -exec`, `xargs` and interpreters'
//! inline code hold commands of their own.

use crate::argv::{self, Arg, base_name};
use crate::rules::{Rules, WrapperKind};
use crate::shell::{Command, Stdin, UNKNOWN};

/// What a command comes to once its wrappers are taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A program runs with these words (program first).
    Run(Command),
    /// Shell source that will be parsed and run: a payload.
    Shell {
        source: String,
        depth: usize,
        env: Vec<(String, String)>,
    },
    /// The program word cannot be known statically.
    UnknownProgram(Command),
}

/// Wrappers taken off one command, at most.
const MAX_WRAPPERS: usize = 64;

/// Takes wrappers off `command` and lists what runs.
pub fn unwrap(rules: &Rules, mut command: Command, out: &mut Vec<Step>) {
    // Each turn takes one wrapper off; a word list only shrinks, so this ends. Each turn
    // also reads the rest of the words, so past a bound (`sudo sudo … ssh`, thousands deep)
    // the program is not looked for: it cannot be known, which is what the caller is told.
    for _ in 0..MAX_WRAPPERS {
        let Some(first) = command.words.first() else {
            return;
        };
        if first.contains(UNKNOWN) {
            out.push(Step::UnknownProgram(command));
            return;
        }
        let program = base_name(first).to_string();
        let args: Vec<String> = command.words[1..].to_vec();
        if let Some(wrapper) = rules.wrapper(&program) {
            match wrapper.kind {
                // `systemd-run -H atlas PROGRAM`: a wrapper that is also a guarded program
                // is checked as itself too.
                WrapperKind::Prefix if rules.program(&program).is_some() => {
                    out.push(Step::Run(command.clone()));
                }
                WrapperKind::Prefix => {}
                WrapperKind::Find => return find_exec(rules, &command, &args, out),
                WrapperKind::Fd => return fd_exec(rules, &command, wrapper, &args, out),
                WrapperKind::Xargs | WrapperKind::Parallel => {
                    return xargs(rules, command, wrapper, &args, out);
                }
            }
            // `xterm -geometry 80x24 -e PROGRAM…`: where the option is, the program begins.
            if !wrapper.command_option.is_empty() {
                match args.iter().position(|a| wrapper.command_option.contains(a)) {
                    // `xfce4-terminal -e 'CMD ARGS'`: one word is a command line.
                    Some(at) if args.len() == at + 2 => {
                        out.push(payload(&command, args[at + 1].clone()));
                        return;
                    }
                    Some(at) => {
                        command.words = args[at + 1..].to_vec();
                        continue;
                    }
                    None => return,
                }
            }
            let scanned = argv::scan(&wrapper.syntax, &args);
            if argv::has(&scanned, &wrapper.inert) {
                return;
            }
            for arg in &scanned {
                if let Arg::Option {
                    name,
                    value: Some(value),
                } = arg
                    && (wrapper.shell_option.contains(name) || wrapper.split_option.contains(name))
                {
                    out.push(payload(&command, value.clone()));
                }
            }
            if wrapper.shell_operands {
                // Options are read anywhere: `tmux new -d 'CMD'`, `trap 'CMD' INT TERM`.
                for source in argv::operands(&scanned) {
                    out.push(payload(&command, source.to_string()));
                }
                return;
            }
            if wrapper.no_program {
                return;
            }
            let mut operands = operands_after_options(&wrapper.syntax, &args);
            if wrapper.assignments {
                while let Some(first) = operands.first() {
                    match first.split_once('=') {
                        Some((name, value)) if is_name(name) => {
                            command.env.push((name.to_string(), value.to_string()));
                            operands.remove(0);
                        }
                        _ => break,
                    }
                }
            }
            let operands: Vec<String> = operands.into_iter().skip(wrapper.skip).collect();
            if wrapper.shell_rest || argv::has(&scanned, &wrapper.shell_flags) {
                if !operands.is_empty() {
                    out.push(payload(&command, operands.join(" ")));
                }
                return;
            }
            command.words = operands;
            continue;
        }
        if program == "eval" {
            out.push(payload(&command, args.join(" ")));
            return;
        }
        if program == "source" || program == "." {
            if let Some(text) = args.first().and_then(|path| file_text(&command, path)) {
                out.push(payload(&command, text));
            }
            out.push(Step::Run(command));
            return;
        }
        if let Some(shell) = rules.shell(&program) {
            let scanned = argv::scan(&shell.syntax, &args);
            let has_command_flag = scanned.iter().any(|a| matches!(a, Arg::Option { name, .. } if name.len() == 2 && name.ends_with(shell.command_flag)));
            let mut ops = argv::operands(&scanned);
            if has_command_flag {
                if let Some(source) = ops.next() {
                    out.push(payload(&command, source.to_string()));
                }
            } else {
                let reads_stdin = scanned
                    .iter()
                    .any(|a| matches!(a, Arg::Option { name, .. } if name == "-s"));
                let script = match ops.next() {
                    // No script file (or `-s`, `-`, `/dev/stdin`): the shell runs its input.
                    None | Some("-" | "/dev/stdin") => stdin_text(&command),
                    Some(_) if reads_stdin => stdin_text(&command),
                    // A script the command itself wrote: `bash <(echo …)`, `echo … > s.sh; sh s.sh`.
                    Some(path) => file_text(&command, path),
                };
                if let Some(text) = script {
                    out.push(payload(&command, text));
                }
            }
            out.push(Step::Run(command));
            return;
        }
        if let Some(interpreter) = rules.interpreter(&program) {
            let code = interpreter_code(interpreter, &command, &args);
            if let Some(code) = code
                && interpreter
                    .runs
                    .iter()
                    .any(|marker| code.contains(marker.as_str()))
            {
                inline_code(&command, &code, out);
            }
            out.push(Step::Run(command));
            return;
        }
        out.push(Step::Run(command));
        return;
    }
    // The last wrapper taken off may have been the last word: nothing runs, as below the bound.
    if !command.words.is_empty() {
        out.push(Step::UnknownProgram(command));
    }
}

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

fn stdin_text(command: &Command) -> Option<String> {
    match &command.stdin {
        Stdin::Text(text) => Some(text.clone()),
        Stdin::Unknown | Stdin::Inherited => None,
    }
}

/// The content of a file the command itself wrote, if `path` names one.
fn file_text(command: &Command, path: &str) -> Option<String> {
    command
        .files
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, text)| text.clone())
}

fn payload(command: &Command, source: String) -> Step {
    Step::Shell {
        source,
        depth: command.depth + 1,
        env: command.env.clone(),
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// A wrapper's operands: where its options end, the program begins.
fn operands_after_options(syntax: &crate::rules::Syntax, args: &[String]) -> Vec<String> {
    let stop = crate::rules::Syntax {
        stop_at_operand: true,
        ..syntax.clone()
    };
    argv::operands(&argv::scan(&stop, args))
        .map(str::to_string)
        .collect()
}

fn with_words(command: &Command, words: Vec<String>) -> Command {
    Command {
        words,
        depth: command.depth + 1,
        ..command.clone()
    }
}

/// `find … -exec PROGRAM ARGS… ;` (also `+`, `-execdir`, `-ok`, `-okdir`).
fn find_exec(rules: &Rules, command: &Command, args: &[String], out: &mut Vec<Step>) {
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = args[i + 1..]
                .iter()
                .position(|a| a == ";" || a == "+")
                .map_or(args.len(), |p| i + 1 + p);
            let words: Vec<String> = args[i + 1..end]
                .iter()
                .map(|a| a.replace("{}", UNKNOWN.encode_utf8(&mut [0; 4])))
                .collect();
            unwrap(rules, with_words(command, words), out);
            i = end;
        }
        i += 1;
    }
    out.push(Step::Run(command.clone()));
}

/// `fd PATTERN -x PROGRAM ARGS…`: the rest after `-x`/`--exec` is a command.
fn fd_exec(
    rules: &Rules,
    command: &Command,
    _wrapper: &crate::rules::Wrapper,
    args: &[String],
    out: &mut Vec<Step>,
) {
    if let Some(at) = args
        .iter()
        .position(|a| matches!(a.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
    {
        unwrap(rules, with_words(command, args[at + 1..].to_vec()), out);
    }
    out.push(Step::Run(command.clone()));
}

/// `xargs [-I R] PROGRAM ARGS…` runs PROGRAM with words read from its input;
/// `parallel PROGRAM ::: ARGS` with the words after `:::`.
fn xargs(
    rules: &Rules,
    command: Command,
    wrapper: &crate::rules::Wrapper,
    args: &[String],
    out: &mut Vec<Step>,
) {
    let scanned = argv::scan(
        &crate::rules::Syntax {
            stop_at_operand: true,
            ..wrapper.syntax.clone()
        },
        args,
    );
    let replace = scanned.iter().find_map(|a| match a {
        Arg::Option { name, value } if name == "-I" || name == "--replace" => {
            Some(value.clone().unwrap_or_else(|| "{}".into()))
        }
        Arg::Option { name, .. } if name == "-i" => Some("{}".into()),
        _ => None,
    });
    let reads_file = argv::has(&scanned, &["-a".to_string(), "--arg-file".to_string()]);
    let mut words: Vec<String> = argv::operands(&scanned).map(str::to_string).collect();
    // parallel puts each argument where `{}` is, without being asked to.
    let replace = replace.or_else(|| {
        (wrapper.kind == WrapperKind::Parallel && words.iter().any(|w| w.contains("{}")))
            .then(|| "{}".to_string())
    });
    let input: Vec<String> = if let Some(at) = words.iter().position(|w| w == ":::" || w == "::::")
    {
        let tail = words.split_off(at);
        tail[1..]
            .iter()
            .filter(|w| !w.starts_with(":::"))
            .cloned()
            .collect()
    } else {
        // `-0`/`-d X` split the input there; otherwise on blanks (and, with `-I`, lines).
        let delimiter = scanned.iter().find_map(|a| match a {
            Arg::Option { name, .. } if name == "-0" || name == "--null" => Some('\0'),
            Arg::Option {
                name,
                value: Some(v),
            } if name == "-d" || name == "--delimiter" => Some(if v == "\\n" {
                '\n'
            } else {
                v.chars().next().unwrap_or('\n')
            }),
            _ => None,
        });
        match (&command.stdin, reads_file, delimiter) {
            (Stdin::Text(text), false, Some(d)) => text
                .split(d)
                .filter(|i| !i.is_empty())
                .map(str::to_string)
                .collect(),
            (Stdin::Text(text), false, None) => {
                text.split_whitespace().map(str::to_string).collect()
            }
            _ => vec![UNKNOWN.to_string()],
        }
    };
    if words.is_empty() {
        words.push("echo".into());
    }
    let invocations: Vec<Vec<String>> = match &replace {
        Some(r) => input
            .iter()
            .map(|item| words.iter().map(|w| w.replace(r.as_str(), item)).collect())
            .collect(),
        None => {
            let mut all = words.clone();
            all.extend(input);
            vec![all]
        }
    };
    // parallel runs its words as a shell command line.
    for words in invocations {
        if wrapper.kind == WrapperKind::Parallel {
            out.push(payload(&command, words.join(" ")));
        } else {
            unwrap(rules, with_words(&command, words), out);
        }
    }
    out.push(Step::Run(command));
}

/// Interpreter code that runs programs: each string literal is read as a shell command,
/// and runs of literals (`["ssh", "atlas"]`) as a program and its arguments.
fn inline_code(command: &Command, code: &str, out: &mut Vec<Step>) {
    let literals = string_literals(code);
    for literal in &literals {
        out.push(payload(command, literal.clone()));
    }
    // Any literal may start an argument list; a bounded number keeps this linear enough.
    for start in 0..literals.len().min(64) {
        if literals.len() - start > 1 {
            let argv: Vec<String> = literals[start..]
                .iter()
                .map(|l| shell_words::quote(l).into_owned())
                .collect();
            out.push(payload(command, argv.join(" ")));
        }
    }
}

/// The contents of '…', "…" and `…` literals, escapes taken as the next character.
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
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
        let Some(close) = close else { continue };
        let mut literal = String::new();
        while let Some(d) = chars.next() {
            match d {
                '\\' => literal.extend(chars.next()),
                d if d == close => break,
                d => literal.push(d),
            }
        }
        out.push(literal);
        previous = None;
    }
    out
}

/// The closing delimiter of a bracketing pair (`(` → `)`); others close themselves.
fn closing(open: char) -> char {
    match open {
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '<' => '>',
        other => other,
    }
}
