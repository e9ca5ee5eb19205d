//! `xargs` and `parallel`: the command they build from their input.

use super::{Step, payload, unwrap, with_words};
use crate::argv::{self, Arg};
use crate::rules::{Rules, WrapperKind};
use crate::shell::{Command, Stdin, UNKNOWN};

/// `xargs [-I R] PROGRAM ARGS…` runs PROGRAM with words read from its input;
/// `parallel PROGRAM ::: ARGS` with the words after `:::`.
pub(crate) fn xargs(
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
