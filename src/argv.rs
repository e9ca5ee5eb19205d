//! Reading a program's arguments the way its own option parser would: short options in
//! groups (`-fu unit`), values attached or separate, `--long=value`, `--` ending options.

use crate::rules::Syntax;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `-J` or `--host`, with its value when the option takes one.
    Option {
        name: String,
        value: Option<String>,
    },
    Operand(String),
}

/// Splits `args` into options and operands by `syntax`; an option it does not know is
/// read as a flag (see `ambiguous` for the options whose reading is not certain).
pub fn scan(syntax: &Syntax, args: &[String]) -> Vec<Arg> {
    scan_as(syntax, args, &[])
}

/// `scan`, with the options named in `valued` (`-Z`, `--frob`) taking a value.
pub fn scan_as(syntax: &Syntax, args: &[String], valued: &[String]) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.iter();
    let mut operands_seen = 0;
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.extend(rest.by_ref().map(|a| Arg::Operand(a.clone())));
            break;
        }
        let long = match arg.strip_prefix("--") {
            Some(long) => Some(long),
            // Go's flags: `-address=x` is one option, not `-a -d -d …`.
            None if syntax.single_dash_long => arg.strip_prefix('-').filter(|l| !l.is_empty()),
            None => None,
        };
        if let Some(long) = long {
            let dashes = if syntax.single_dash_long { "-" } else { "--" };
            if !long.contains('=') && syntax.long_two_values.iter().any(|l| l == long) {
                // Each value is read in the option's role (`bwrap --bind SRC DEST`).
                for _ in 0..2 {
                    out.push(Arg::Option {
                        name: format!("{dashes}{long}"),
                        value: rest.next().cloned(),
                    });
                }
                continue;
            }
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value.to_string())),
                None => (long, None),
            };
            let name = full_long_name(syntax, name);
            let value = match value {
                None if syntax.long_value.iter().any(|l| l == name)
                    || valued.iter().any(|v| v.strip_prefix(dashes) == Some(name)) =>
                {
                    rest.next().cloned()
                }
                value => value,
            };
            out.push(Arg::Option {
                name: format!("{dashes}{name}"),
                value,
            });
            continue;
        }
        if let Some(group) = arg.strip_prefix('-').filter(|g| !g.is_empty()) {
            for (i, c) in group.char_indices() {
                let attached = &group[i + c.len_utf8()..];
                // `-n5`: an optional value is only ever attached.
                if !attached.is_empty() && syntax.optional_value.contains(&format!("-{c}")) {
                    out.push(Arg::Option {
                        name: format!("-{c}"),
                        value: Some(attached.to_string()),
                    });
                    break;
                }
                if syntax.short_value.contains(c)
                    || valued.iter().any(|v| {
                        v.strip_prefix('-')
                            .is_some_and(|l| l.len() == c.len_utf8() && l.starts_with(c))
                    })
                {
                    let value = if attached.is_empty() {
                        rest.next().cloned()
                    } else {
                        Some(attached.to_string())
                    };
                    out.push(Arg::Option {
                        name: format!("-{c}"),
                        value,
                    });
                    break;
                }
                out.push(Arg::Option {
                    name: format!("-{c}"),
                    value: None,
                });
            }
            continue;
        }
        out.push(Arg::Operand(arg.clone()));
        operands_seen += 1;
        let allowed = if syntax.options_after_first_operand {
            2
        } else {
            1
        };
        if syntax.stop_at_operand && operands_seen >= allowed {
            out.extend(rest.by_ref().map(|a| Arg::Operand(a.clone())));
            break;
        }
    }
    out
}

/// A long option as getopt_long reads it: an exact name, or the one long option an
/// unambiguous prefix abbreviates, when the program accepts abbreviations.
fn full_long_name<'a>(syntax: &'a Syntax, name: &'a str) -> &'a str {
    if !syntax.abbreviations || !syntax.exact() || name.is_empty() {
        return name;
    }
    let known = || {
        syntax
            .long_value
            .iter()
            .chain(&syntax.long_flag)
            .chain(&syntax.long_two_values)
            .map(String::as_str)
            .chain(
                syntax
                    .optional_value
                    .iter()
                    .filter_map(|o| o.strip_prefix("--")),
            )
    };
    if known().any(|l| l == name) {
        return name;
    }
    let mut matches = known().filter(|l| l.starts_with(name));
    match (matches.next(), matches.next()) {
        (Some(only), None) => only,
        _ => name,
    }
}

/// The options of `args` whose reading is not certain: in an exact syntax, one it does not
/// know (it may take the next word as its value, or not), and one whose value is optional.
/// Each is named as `scan_as` takes it (`-Z`, `--frob`); each appears once.
pub fn ambiguous(syntax: &Syntax, args: &[Arg]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for arg in args {
        let Arg::Option { name, value: None } = arg else {
            continue;
        };
        let unknown = syntax.exact() && !knows(syntax, name);
        let optional = syntax.optional_value.contains(name);
        if (unknown || optional) && !found.contains(name) {
            found.push(name.clone());
        }
    }
    found
}

/// Uncertain options taken in every combination, at most; past them, one more reading.
const MAX_AMBIGUOUS: usize = 3;

/// The sets of uncertain options (from `ambiguous`) that take a value, one per reading
/// other than "each is a flag" (decision 0053); past `MAX_AMBIGUOUS`, one where all do.
pub fn readings(ambiguous: &[String]) -> Vec<Vec<String>> {
    let each = &ambiguous[..ambiguous.len().min(MAX_AMBIGUOUS)];
    let mut out: Vec<Vec<String>> = (1..1u32 << each.len())
        .map(|mask| {
            each.iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, o)| o.clone())
                .collect()
        })
        .collect();
    if ambiguous.len() > MAX_AMBIGUOUS {
        out.push(ambiguous.to_vec());
    }
    out
}

/// Whether an exact syntax lists the option `name` (`-d`, `--detach`).
fn knows(syntax: &Syntax, name: &str) -> bool {
    if syntax.optional_value.iter().any(|o| o == name) {
        return true;
    }
    if let Some(long) = name.strip_prefix("--") {
        return [
            &syntax.long_value,
            &syntax.long_flag,
            &syntax.long_two_values,
        ]
        .iter()
        .any(|list| list.iter().any(|l| l == long));
    }
    let mut letters = name.strip_prefix('-').unwrap_or(name).chars();
    match (letters.next(), letters.next()) {
        (Some(c), None) => syntax.short_value.contains(c) || syntax.short_flag.contains(c),
        _ => false,
    }
}

/// The operands, in order.
pub fn operands(args: &[Arg]) -> impl Iterator<Item = &str> {
    args.iter().filter_map(|a| match a {
        Arg::Operand(o) => Some(o.as_str()),
        Arg::Option { .. } => None,
    })
}

/// Whether an option is present (`-V`, `--list`).
pub fn has(args: &[Arg], names: &[String]) -> bool {
    args.iter()
        .any(|a| matches!(a, Arg::Option { name, .. } if names.contains(name)))
}

/// Every value the options `names` take: `--settings X` and `--settings=X`.
pub fn option_values(args: &[String], names: &[String]) -> Vec<String> {
    let mut values = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        for name in names {
            if arg == name {
                values.extend(args.get(i + 1).cloned());
            } else if let Some(value) = arg
                .strip_prefix(name.as_str())
                .and_then(|r| r.strip_prefix('='))
            {
                values.push(value.to_string());
            }
        }
    }
    values
}

/// The base name of a program word: `/usr/bin/ssh` → `ssh`.
pub fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax(short: &str, long: &[&str], stop: bool) -> Syntax {
        Syntax {
            short_value: short.into(),
            long_value: long.iter().map(|s| s.to_string()).collect(),
            stop_at_operand: stop,
            ..Syntax::default()
        }
    }

    fn s(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn groups_attached_values_and_long_forms() {
        let args = scan(
            &syntax("uJ", &["unit"], false),
            &s(&[
                "-fu", "x", "-Jatlas", "--unit=y", "--unit", "z", "op", "--", "-v",
            ]),
        );
        let opt = |n: &str, v: Option<&str>| Arg::Option {
            name: n.into(),
            value: v.map(String::from),
        };
        assert_eq!(
            args,
            vec![
                opt("-f", None),
                opt("-u", Some("x")),
                opt("-J", Some("atlas")),
                opt("--unit", Some("y")),
                opt("--unit", Some("z")),
                Arg::Operand("op".into()),
                Arg::Operand("-v".into())
            ]
        );
    }

    #[test]
    fn go_flags_are_long_options_with_one_dash() {
        let go = Syntax {
            long_value: s(&["address", "region"]),
            single_dash_long: true,
            ..Syntax::default()
        };
        let args = scan(
            &go,
            &s(&[
                "-address=http://atlas:4646",
                "--region",
                "eu",
                "-detach",
                "job",
                "status",
            ]),
        );
        let opt = |n: &str, v: Option<&str>| Arg::Option {
            name: n.into(),
            value: v.map(String::from),
        };
        assert_eq!(
            args,
            vec![
                opt("-address", Some("http://atlas:4646")),
                opt("-region", Some("eu")),
                opt("-detach", None),
                Arg::Operand("job".into()),
                Arg::Operand("status".into()),
            ]
        );
    }

    #[test]
    fn an_option_may_take_two_values() {
        let bwrap = Syntax {
            long_two_values: s(&["bind"]),
            stop_at_operand: true,
            ..Syntax::default()
        };
        let args = scan(&bwrap, &s(&["--bind", "/", "/", "ssh", "atlas"]));
        assert_eq!(operands(&args).collect::<Vec<_>>(), ["ssh", "atlas"]);
        assert_eq!(args.len(), 4);
    }

    #[test]
    fn an_exact_syntax_names_the_options_it_does_not_know() {
        let exec = Syntax {
            short_value: "euw".into(),
            short_flag: "dit".into(),
            long_value: s(&["user"]),
            long_flag: s(&["detach"]),
            stop_at_operand: true,
            ..Syntax::default()
        };
        let args = s(&["-dZ", "--frob", "redis", "ls"]);
        let scanned = scan(&exec, &args);
        assert_eq!(ambiguous(&exec, &scanned), ["-Z", "--frob"]);
        assert_eq!(operands(&scanned).collect::<Vec<_>>(), ["redis", "ls"]);
        // The reading where `--frob` takes a value moves the container one word on.
        let valued = scan_as(&exec, &args, &s(&["--frob"]));
        assert_eq!(operands(&valued).collect::<Vec<_>>(), ["ls"]);
        // `-Z` taking a value takes the rest of its group, and nothing else.
        let valued = scan_as(&exec, &s(&["-Zx", "redis"]), &s(&["-Z"]));
        assert_eq!(operands(&valued).collect::<Vec<_>>(), ["redis"]);
        // A syntax that lists no flags knows nothing it does not list: nothing is ambiguous.
        let loose = syntax("u", &[], false);
        assert!(ambiguous(&loose, &scan(&loose, &args)).is_empty());
    }

    #[test]
    fn getopt_long_abbreviations_and_optional_values() {
        let journalctl = Syntax {
            short_value: "u".into(),
            short_flag: "f".into(),
            long_value: s(&["unit", "until", "user-unit"]),
            long_flag: s(&["follow", "utc"]),
            optional_value: s(&["-n", "--lines"]),
            abbreviations: true,
            ..Syntax::default()
        };
        let opt = |n: &str, v: Option<&str>| Arg::Option {
            name: n.into(),
            value: v.map(String::from),
        };
        assert_eq!(
            scan(&journalctl, &s(&["--uni", "x"])),
            [opt("--unit", Some("x"))]
        );
        // `--u` could be four options: it stays as written, and unknown.
        let scanned = scan(&journalctl, &s(&["--u", "x"]));
        assert_eq!(scanned[0], opt("--u", None));
        assert_eq!(ambiguous(&journalctl, &scanned), ["--u"]);
        // An optional value is attached, or both readings are taken.
        assert_eq!(scan(&journalctl, &s(&["-n5"])), [opt("-n", Some("5"))]);
        assert_eq!(
            ambiguous(&journalctl, &scan(&journalctl, &s(&["-n", "5"]))),
            ["-n"]
        );
    }

    #[test]
    fn posix_programs_stop_at_the_first_operand() {
        let args = scan(
            &syntax("p", &[], true),
            &s(&["-p", "22", "atlas", "ls", "-l"]),
        );
        assert_eq!(operands(&args).collect::<Vec<_>>(), ["atlas", "ls", "-l"]);
    }
}
