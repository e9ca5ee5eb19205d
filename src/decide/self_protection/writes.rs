//! What a writer writes, read by its own option grammar (`rules/self.toml`, issue 40): the
//! options that name a file or a directory it writes are found where its parser finds
//! them, in a group (`curl -sSo FILE`, `tar -xzC DIR`), with the value attached (`-oFILE`,
//! `--output=FILE`), as an unambiguous abbreviation (`--dir`), in tar's old style (`tar xfC
//! A.tar DIR`) and in 7-Zip's one-switch words (`-oDIR`).

use super::files::Reach;
use crate::argv::{self, Arg};
use crate::rules::Writer;

/// Whether the writer's rule reads its words by these keys (else by its operands).
pub(in crate::decide) fn by_grammar(writer: &Writer) -> bool {
    !writer.output_options.is_empty()
        || !writer.output_dir_options.is_empty()
        || !writer.remote_name_options.is_empty()
        || writer.saves_urls
        || !writer.also_writes.is_empty()
        || !writer.into_options.is_empty()
        || writer.output_operand > 0
        || writer.into_operand > 0
        || !writer.written_when.is_empty()
}

/// `args` as the writer's parser reads them; every option its keys name takes a value.
pub(in crate::decide) fn scanned(writer: &Writer, args: &[String]) -> Vec<Arg> {
    let valued: Vec<String> = [
        &writer.output_options,
        &writer.also_writes,
        &writer.output_dir_options,
        &writer.into_options,
        &writer.target_options,
        &writer.base_dir_options,
    ]
    .into_iter()
    .flatten()
    .filter(|o| o.starts_with('-'))
    .cloned()
    .collect();
    if writer.switches {
        return switches(&valued, args);
    }
    if writer.old_style {
        return argv::scan_as(&writer.syntax, &old_style(writer, args), &valued);
    }
    argv::scan_as(&writer.syntax, args, &valued)
}

/// Whether one of `only_with` is among the writer's words: as written (`git checkout`), an
/// option its parser reads (`tar -xzf`, `ssh-keygen -Hf`), or its first operand (`7z x`).
pub(in crate::decide) fn only_with(writer: &Writer, args: &[String]) -> bool {
    if args.iter().any(|a| writer.only_with.contains(a)) {
        return true;
    }
    let scanned = scanned(writer, args);
    scanned
        .iter()
        .any(|a| matches!(a, Arg::Option { name, .. } if writer.only_with.contains(name)))
        || argv::operands(&scanned)
            .next()
            .is_some_and(|first| writer.only_with.iter().any(|w| w == first))
}

/// The files and directories the writer's words say it writes: its output options' values
/// (under its output directory), a tree into each `into_options` directory, its output
/// operand, and each URL's own file name where it saves URLs by name. The rest is read.
pub(in crate::decide) fn written(writer: &Writer, args: &[String]) -> Vec<(String, Reach)> {
    let scanned = scanned(writer, args);
    let present = |wanted: &[String]| {
        scanned
            .iter()
            .any(|a| matches!(a, Arg::Option { name, .. } if wanted.contains(name)))
            || argv::operands(&scanned)
                .next()
                .is_some_and(|first| wanted.iter().any(|w| w == first))
    };
    let values = |names: &[String]| -> Vec<String> {
        scanned
            .iter()
            .filter_map(|a| match a {
                Arg::Option {
                    name,
                    value: Some(value),
                } if names.contains(name)
                    && writer
                        .written_when
                        .get(name)
                        .is_none_or(|wanted| present(wanted)) =>
                {
                    Some(value.clone())
                }
                _ => None,
            })
            .collect()
    };
    let dir = values(&writer.output_dir_options).pop();
    let under = |file: String| match &dir {
        Some(dir) if !file.starts_with(['/', '~']) => {
            format!("{}/{file}", dir.trim_end_matches('/'))
        }
        _ => file,
    };
    let outputs: Vec<String> = values(&writer.output_options)
        .into_iter()
        .filter(|file| file != "-")
        .collect();
    let by_name = scanned.iter().any(
        |a| matches!(a, Arg::Option { name, .. } if writer.remote_name_options.contains(name)),
    ) || (writer.saves_urls && outputs.is_empty());
    let mut out: Vec<(String, Reach)> = outputs
        .into_iter()
        .chain(values(&writer.also_writes).into_iter().filter(|f| f != "-"))
        .map(|file| (under(file), Reach::Whole))
        .collect();
    // An archive's members land anywhere under the directory: a guard file's directory, or
    // one above it, is written.
    out.extend(
        values(&writer.into_options)
            .into_iter()
            .map(|dir| (dir, Reach::Tree)),
    );
    let operand_written = writer
        .written_when
        .get("operand")
        .is_none_or(|wanted| present(wanted));
    if writer.output_operand > 0
        && operand_written
        && let Some(file) = argv::operands(&scanned).nth(writer.output_operand - 1)
        && file != "-"
    {
        out.push((file.to_string(), Reach::Whole));
    }
    if writer.into_operand > 0
        && operand_written
        && let Some(dir) = argv::operands(&scanned).nth(writer.into_operand - 1)
    {
        out.push((dir.to_string(), Reach::Tree));
    }
    if by_name {
        for url in argv::operands(&scanned).filter(|a| a.contains("://")) {
            let path = url.split(['?', '#']).next().unwrap_or(url);
            let name = path.rsplit('/').next().unwrap_or("");
            if !name.is_empty() && !path.ends_with("://") {
                out.push((under(name.to_string()), Reach::Whole));
            }
        }
    }
    out
}

/// tar's old style: a first word without a dash is its letters as options, each that takes
/// a value taking the next word after the group (`xfC A.tar DIR` is `-x -f A.tar -C DIR`).
fn old_style(writer: &Writer, args: &[String]) -> Vec<String> {
    let Some(first) = args
        .first()
        .filter(|f| !f.is_empty() && !f.starts_with('-'))
    else {
        return args.to_vec();
    };
    let mut rest = args[1..].iter();
    let mut out = Vec::with_capacity(args.len() + first.len());
    for letter in first.chars() {
        out.push(format!("-{letter}"));
        if writer.syntax.short_value.contains(letter)
            && let Some(value) = rest.next()
        {
            out.push(value.clone());
        }
    }
    out.extend(rest.cloned());
    out
}

/// 7-Zip's command line: each word that begins with a dash is one switch; one that begins
/// with a valued option's name carries its value attached (`-o/tmp/out`), where 7-Zip takes
/// it. `--` ends the switches.
fn switches(valued: &[String], args: &[String]) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.iter();
    while let Some(word) = rest.next() {
        if word == "--" {
            out.extend(rest.by_ref().map(|a| Arg::Operand(a.clone())));
            break;
        }
        if !word.starts_with('-') || word == "-" {
            out.push(Arg::Operand(word.clone()));
            continue;
        }
        let option = valued
            .iter()
            .filter(|v| word.starts_with(v.as_str()))
            .max_by_key(|v| v.len());
        out.push(match option {
            Some(name) => Arg::Option {
                name: name.clone(),
                value: Some(word[name.len()..].to_string()),
            },
            None => Arg::Option {
                name: word.clone(),
                value: None,
            },
        });
    }
    out
}
