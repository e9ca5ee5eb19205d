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

/// Splits `args` into options and operands by `syntax`.
pub fn scan(syntax: &Syntax, args: &[String]) -> Vec<Arg> {
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
                None if syntax.long_value.iter().any(|l| l == long) => (long, rest.next().cloned()),
                None => (long, None),
            };
            out.push(Arg::Option {
                name: format!("{dashes}{name}"),
                value,
            });
            continue;
        }
        if let Some(group) = arg.strip_prefix('-').filter(|g| !g.is_empty()) {
            let chars = group.char_indices();
            for (i, c) in chars {
                if syntax.short_value.contains(c) {
                    let attached = &group[i + c.len_utf8()..];
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
    fn posix_programs_stop_at_the_first_operand() {
        let args = scan(
            &syntax("p", &[], true),
            &s(&["-p", "22", "atlas", "ls", "-l"]),
        );
        assert_eq!(operands(&args).collect::<Vec<_>>(), ["atlas", "ls", "-l"]);
    }
}
