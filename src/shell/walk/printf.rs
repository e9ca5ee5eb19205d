//! What `echo`/`printf` print, for commands that feed their output to a shell.

use crate::bash_eval::{self, Value};
use crate::shell::{Command, Stdin};

/// What a command writes on its standard output, when the command text alone tells.
pub(crate) fn output_of(command: &Command) -> Stdin {
    let program = command
        .words
        .first()
        .map(|w| w.rsplit('/').next().unwrap_or(w));
    let args = command.words.get(1..).unwrap_or_default();
    match program {
        Some("echo") => echo(args),
        Some("printf") => match args.split_first() {
            // `printf -v NAME …` prints nothing: it assigns (see the walk).
            Some((flag, _)) if flag == "-v" => Stdin::Text(String::new()),
            Some((flag, rest)) if flag == "--" => printed(rest),
            Some(_) => printed(args),
            None => Stdin::Unknown,
        },
        // `cat` of nothing, or of files the command wrote, and `tee`, pass text on.
        Some("cat") if args.is_empty() => command.stdin.clone(),
        Some("cat") => {
            let known: Option<Vec<&str>> = args
                .iter()
                .map(|a| {
                    command
                        .files
                        .iter()
                        .find(|(p, _)| p == a)
                        .map(|(_, t)| t.as_str())
                })
                .collect();
            known.map_or(Stdin::Unknown, |texts| Stdin::Text(texts.concat()))
        }
        Some(edge @ ("head" | "tail")) => lines_of(edge, args, command),
        Some("find") => super::find_output::find_output(command).unwrap_or(Stdin::Unknown),
        Some("tee") => match &command.stdin {
            Stdin::Text(text) => Stdin::Text(text.clone()),
            Stdin::Bytes(bytes) => Stdin::Bytes(bytes.clone()),
            _ => Stdin::Unknown,
        },
        Some(program) => decoded(program, args, &command.stdin),
        None => Stdin::Unknown,
    }
}

/// A decoder's output for the input the command gave it (`… | base64 -d`): text, bytes
/// that are not text (`… | base64 -d | gunzip`), or unknown.
fn decoded(program: &str, args: &[String], stdin: &Stdin) -> Stdin {
    let input = match stdin {
        Stdin::Text(text) if crate::shell::is_known(text) => text.as_bytes(),
        Stdin::Bytes(bytes) => bytes,
        _ => return Stdin::Unknown,
    };
    match super::decode::decoded(program, args, input).flatten() {
        Some(bytes) if !bytes.contains(&0) => match String::from_utf8(bytes) {
            Ok(text) => Stdin::Text(text),
            Err(error) => Stdin::Bytes(error.into_bytes()),
        },
        Some(bytes) => Stdin::Bytes(bytes),
        None => Stdin::Unknown,
    }
}

/// What a command substitution's body prints, from its commands as walked: a lone
/// command's output, or one pipeline's last command's (`$(echo … | base64 -d)`).
pub(crate) fn output_of_body(body: &shuck_ast::StmtSeq, commands: &[Command]) -> Stdin {
    use shuck_ast::{BinaryOp, Command as Node};
    let one_pipeline = matches!(body.iter().collect::<Vec<_>>().as_slice(),
        [stmt] if stmt.redirects.is_empty() && matches!(&stmt.command,
            Node::Binary(b) if b.op == BinaryOp::Pipe
                && matches!(&b.right.command, Node::Simple(_))));
    match commands {
        [only] => output_of(only),
        [.., last] if one_pipeline => output_of(last),
        _ => Stdin::Unknown,
    }
}

/// `echo [-neE]… ARGS`: the words, decoded with `-e` as bash's echo does (the trailing
/// newline is left out, as a command substitution drops it).
fn echo(args: &[String]) -> Stdin {
    let mut decode = false;
    let mut at = 0;
    for arg in args {
        let Some(flags) = arg.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for c in flags.chars() {
            match c {
                'e' => decode = true,
                'E' => decode = false,
                _ => {}
            }
        }
        at += 1;
    }
    let words = &args[at..];
    if !decode {
        return Stdin::Text(words.join(" "));
    }
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let decoded = bash_eval::escape::echo_e(word);
        match decoded.text {
            Value::Known(text) => out.push_str(&text),
            Value::Unknown => return Stdin::Unknown,
        }
        if decoded.stop {
            break;
        }
    }
    Stdin::Text(out)
}

/// `printf FORMAT ARGS…` as bash prints it.
fn printed(args: &[String]) -> Stdin {
    match args.split_first() {
        Some((format, rest)) => printf(format, rest).map_or(Stdin::Unknown, Stdin::Text),
        None => Stdin::Unknown,
    }
}

/// bash's printf of words the walk knows (an unknown word makes the output unknown).
pub(crate) fn printf(format: &str, args: &[String]) -> Option<String> {
    if format.contains(crate::shell::UNKNOWN) {
        return None;
    }
    let args: Vec<Value> = args.iter().map(|a| Value::from_marked(a)).collect();
    bash_eval::printf::printf(format, &args)
        .as_known()
        .map(str::to_string)
}

/// `head`/`tail` `[-n N | -N]` of one file the walk knows, or of the input: its first or
/// last lines (10 unless told). Other options (`-c`, `tail -n +N`, `-f`) are unknown.
fn lines_of(edge: &str, args: &[String], command: &Command) -> Stdin {
    let (mut count, mut file) = (10usize, None);
    let mut words = args.iter();
    while let Some(arg) = words.next() {
        let number = match arg.as_str() {
            "-n" | "--lines" => words.next().map(String::as_str),
            a if a.starts_with("--lines=") => Some(&a["--lines=".len()..]),
            a if a.starts_with("-n") => Some(&a[2..]),
            a if a.starts_with('-') && a.len() > 1 => Some(&a[1..]),
            a if file.is_none() => {
                file = Some(a);
                continue;
            }
            _ => return Stdin::Unknown,
        };
        match number.and_then(|n| n.parse().ok()) {
            Some(n) => count = n,
            None => return Stdin::Unknown,
        }
    }
    let text = match file {
        Some(path) => match command.files.iter().find(|(p, _)| p == path) {
            Some((_, text)) => text.as_str(),
            None => return Stdin::Unknown,
        },
        None => match &command.stdin {
            Stdin::Text(text) => text.as_str(),
            _ => return Stdin::Unknown,
        },
    };
    let lines: Vec<&str> = text.lines().collect();
    let kept = match edge {
        "head" => &lines[..count.min(lines.len())],
        _ => &lines[lines.len().saturating_sub(count)..],
    };
    Stdin::Text(kept.join("\n"))
}

#[cfg(test)]
mod printf_tests {
    use super::*;

    fn p(format: &str, args: &[&str]) -> Option<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        printf(format, &args)
    }

    #[test]
    fn formats_like_bash() {
        assert_eq!(p(r"%s\n", &["atlas", "orion"]).unwrap(), "atlas\norion\n");
        assert_eq!(p("ssh %s", &["atlas"]).unwrap(), "ssh atlas");
        assert_eq!(p("%-5s|%%", &["a"]).unwrap(), "a    |%");
        assert_eq!(p("plain", &["x"]).unwrap(), "plain");
        assert_eq!(p(r"\x61tl%s", &["as"]).unwrap(), "atlas");
        assert_eq!(p(r"\141tlas", &[]).unwrap(), "atlas");
        assert_eq!(p("node-%04d", &["2"]).unwrap(), "node-0002");
        assert_eq!(p("%s", &["\0"]), None);
    }

    #[test]
    fn echo_decodes_only_with_e() {
        let words = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            echo(&words(&["-e", r"\x61tlas"])),
            Stdin::Text("atlas".into())
        );
        assert_eq!(
            echo(&words(&[r"\x61tlas"])),
            Stdin::Text(r"\x61tlas".into())
        );
        assert_eq!(
            echo(&words(&["-ne", r"a\cb", "c"])),
            Stdin::Text("a".into())
        );
        assert_eq!(echo(&words(&["-x", "a"])), Stdin::Text("-x a".into()));
    }
}
