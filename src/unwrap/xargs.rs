//! `xargs` and `parallel`: the commands they build from their input, one per job.

use super::shell::file_text;
use super::{Step, payload, unwrap_run, with_words};
use crate::argv::{self, Arg};
use crate::rules::{Rules, WrapperKind};
use crate::shell::{Command, Stdin, UNKNOWN};

/// Jobs built from one input, at most; past it the rest is one unknown job.
const MAX_JOBS: usize = 4096;

/// `xargs [-I R] [-n N] [-L N] PROGRAM ARGS…` runs PROGRAM with words read from its input,
/// as many jobs as the grouping makes; `parallel PROGRAM ::: A B` runs one job per input
/// (per combination of the `:::` sources).
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
    let option = |names: &[&str]| {
        scanned.iter().find_map(|a| match a {
            Arg::Option { name, value } if names.contains(&name.as_str()) => {
                Some(value.clone().unwrap_or_default())
            }
            _ => None,
        })
    };
    let replace = option(&["-I", "--replace"])
        .map(|v| if v.is_empty() { "{}".into() } else { v })
        .or_else(|| option(&["-i"]).map(|_| "{}".to_string()));
    let reads_file = argv::has(&scanned, &["-a".to_string(), "--arg-file".to_string()]);
    let mut words: Vec<String> = argv::operands(&scanned).map(str::to_string).collect();
    // parallel puts each argument where `{}` (or `{1}`, `{.}`…) is, without being asked.
    let parallel = wrapper.kind == WrapperKind::Parallel;
    let replace = replace.or_else(|| {
        (parallel && words.iter().any(|w| has_placeholder(w))).then(|| "{}".to_string())
    });
    let jobs: Vec<Vec<String>> = if let Some(at) = words.iter().position(|w| w.starts_with(":::")) {
        let tail = words.split_off(at);
        parallel_sources(&command, &tail)
    } else {
        let items = xargs_items(&command, &scanned, reads_file, replace.is_some());
        let per_args = option(&["-n", "--max-args"]).and_then(|v| v.parse::<usize>().ok());
        let per_lines = option(&["-L", "--max-lines", "-l"])
            .map(|v| v.parse::<usize>().unwrap_or(1))
            .or((wrapper.kind == WrapperKind::Parallel || replace.is_some()).then_some(1));
        match items {
            Items::Unknown => vec![vec![UNKNOWN.to_string()]],
            Items::Lines(lines) => {
                let words_of = |lines: &[Vec<String>]| -> Vec<Vec<String>> {
                    lines.iter().flatten().map(|w| vec![w.clone()]).collect()
                };
                let mut jobs = match (per_lines, per_args) {
                    (Some(n), _) => group(lines.clone(), n.max(1)),
                    (None, Some(n)) => group(words_of(&lines), n.max(1)),
                    (None, None) => vec![lines.iter().flatten().cloned().collect()],
                };
                // `-n1 -I%`: which one wins depends on their order and the xargs; both
                // ways are judged.
                if let (Some(_), Some(n)) = (&replace, per_args) {
                    let blanks: Vec<Vec<String>> = lines
                        .iter()
                        .flatten()
                        .flat_map(|line| line.split_whitespace().map(|w| vec![w.to_string()]))
                        .collect();
                    jobs.extend(group(blanks, n.max(1)));
                }
                jobs
            }
        }
    };
    if words.is_empty() {
        words.push("echo".into());
    }
    let invocations: Vec<Vec<String>> = jobs
        .iter()
        .map(|items| match &replace {
            Some(_) if parallel => words.iter().map(|w| placed(w, items)).collect(),
            Some(r) => {
                let joined = items.join(" ");
                words
                    .iter()
                    .map(|w| w.replace(r.as_str(), &joined))
                    .collect()
            }
            None => words.iter().chain(items).cloned().collect(),
        })
        .collect();
    for words in invocations {
        // parallel runs its words as a shell command line.
        if wrapper.kind == WrapperKind::Parallel {
            out.push(payload(&command, words.join(" ")));
        } else {
            let mut run = with_words(&command, words);
            // Lines of `find -type f`: the words built from them name regular files.
            if command.stdin_regular_files && matches!(command.stdin, Stdin::Text(_)) {
                run.regular_files = run
                    .words
                    .iter()
                    .filter(|w| w.contains(UNKNOWN))
                    .cloned()
                    .collect();
            }
            unwrap_run(rules, run, out);
        }
    }
    out.push(Step::Run(command));
}

/// GNU parallel's replacement strings: `{}`, `{1}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`.
fn has_placeholder(word: &str) -> bool {
    word.contains("{}") || placeholders(word).next().is_some()
}

fn placeholders(word: &str) -> impl Iterator<Item = &str> {
    word.match_indices('{').filter_map(move |(at, _)| {
        let rest = &word[at + 1..];
        let end = rest.find('}')?;
        let inner = &rest[..end];
        (!inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '/' | '#' | '%')))
        .then_some(inner)
    })
}

/// One word of a parallel job: `{}` is the job's inputs, `{N}` its Nth; the forms that
/// edit an input (`{.}`, `{/}`…) are unknown.
fn placed(word: &str, items: &[String]) -> String {
    let mut out = word.replace("{}", &items.join(" "));
    let found: Vec<String> = placeholders(word).map(str::to_string).collect();
    for inner in found {
        let value = inner
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|n| items.get(n))
            .cloned()
            .unwrap_or_else(|| UNKNOWN.to_string());
        out = out.replace(&format!("{{{inner}}}"), &value);
    }
    out
}

enum Items {
    /// The input's lines, each its words (or one item per line where lines are items).
    Lines(Vec<Vec<String>>),
    Unknown,
}

/// What xargs reads: its standard input when the command text gave it.
fn xargs_items(command: &Command, scanned: &[Arg], reads_file: bool, whole_lines: bool) -> Items {
    // `-a FILE`: the file's lines, where the walk knows its text (read from disk, or
    // written by the command).
    let from_file = scanned.iter().find_map(|a| match a {
        Arg::Option {
            name,
            value: Some(path),
        } if name == "-a" || name == "--arg-file" => Some(path),
        _ => None,
    });
    let text = match (reads_file, &command.stdin) {
        (true, _) => match from_file.and_then(|path| file_text(command, path)) {
            Some(text) => text,
            None => return Items::Unknown,
        },
        (false, Stdin::Text(text)) => text.clone(),
        (false, _) => return Items::Unknown,
    };
    let text = &text;
    // `-0`/`-d X` split the input there, each piece one item.
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
    // With `-0` a NUL in the text cannot be told from a part that cannot be known (the walk
    // marks those with NUL): the items are unknown, not split away into nothing.
    if delimiter == Some('\0') && text.contains(UNKNOWN) {
        return Items::Unknown;
    }
    let lines: Vec<Vec<String>> = match delimiter {
        Some(d) => text
            .split(d)
            .filter(|i| !i.is_empty())
            .map(|i| vec![i.to_string()])
            .collect(),
        // `-I`: each line is one item, leading blanks dropped.
        None if whole_lines => text
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.is_empty())
            .map(|l| vec![l.to_string()])
            .collect(),
        None => text
            .lines()
            .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .filter(|l| !l.is_empty())
            .collect(),
    };
    Items::Lines(lines)
}

/// Groups of `n` entries, each group one job's words.
fn group(entries: Vec<Vec<String>>, n: usize) -> Vec<Vec<String>> {
    let mut jobs: Vec<Vec<String>> = entries.chunks(n).map(|c| c.concat()).collect();
    bound(&mut jobs);
    jobs
}

/// `::: A B ::: C D` runs every combination. `:::+` (linked to the source before it, with
/// GNU parallel's wrapping) and `:::: FILE` (a file's lines) are unknown here.
fn parallel_sources(command: &Command, tail: &[String]) -> Vec<Vec<String>> {
    let mut sources: Vec<Vec<String>> = Vec::new();
    let mut files = false;
    for word in tail {
        match word.as_str() {
            ":::" => {
                files = false;
                sources.push(Vec::new());
            }
            // `:::: FILE…`: each file's lines are one source.
            "::::" => files = true,
            w if files && !w.starts_with(":::") => match file_text(command, w) {
                Some(text) => sources.push(text.lines().map(str::to_string).collect()),
                None => return vec![vec![UNKNOWN.to_string()]],
            },
            w if w.starts_with(":::") => return vec![vec![UNKNOWN.to_string()]],
            w => match sources.last_mut() {
                Some(values) => values.push(w.to_string()),
                None => return vec![vec![UNKNOWN.to_string()]],
            },
        }
    }
    let mut jobs: Vec<Vec<String>> = vec![Vec::new()];
    for values in sources {
        if jobs.len().saturating_mul(values.len()) > MAX_JOBS {
            return vec![vec![UNKNOWN.to_string()]];
        }
        jobs = jobs
            .iter()
            .flat_map(|job| {
                values.iter().map(move |v| {
                    let mut job = job.clone();
                    job.push(v.clone());
                    job
                })
            })
            .collect();
    }
    jobs
}

fn bound(jobs: &mut Vec<Vec<String>>) {
    if jobs.len() > MAX_JOBS {
        jobs.truncate(MAX_JOBS);
        jobs.push(vec![UNKNOWN.to_string()]);
    }
}
