//! An operator's `[[program]]` over the built-in ones: a program the guard does not know is
//! added; naming a built-in program extends it (more names, options, environment variables,
//! value-taking options, D-Bus methods, subcommands); redefining one needs `replace = true`. A redefinition
//! without it is an error, so a file that would silently stop guarding ssh stops every
//! command instead (fail closed). The other kinds (wrappers, shells, interpreters, writers,
//! agents, arguments) have no `replace`: an operator's entry may not take a built-in name at
//! all, nor may any entry give a name a second kind (a `[[declaration]]` named `ssh`).

use super::*;
use std::rc::Rc;

/// The keys that say what a program is, rather than add to it: set on a built-in program
/// without `replace = true`, they redefine it.
const DEFINING: [&str; 10] = [
    "over",
    "abbreviations",
    "ranks_as",
    "operands",
    "stop_at_operand",
    "options_after_first_operand",
    "single_dash_long",
    "same_as",
    "only_by_target",
    "parent_subcommands",
];

impl Rules {
    /// `file` (named `name`, read from `text`) with each program that names a built-in one
    /// either merged into it or checked to replace it on purpose.
    pub(crate) fn layer(
        &self,
        name: &str,
        text: &str,
        mut file: RulesFile,
    ) -> Result<RulesFile, RulesError> {
        no_built_in_redefined(name, text, &file)?;
        let table: toml::Table = text.parse().unwrap_or_default();
        let entries = table.get("program").and_then(toml::Value::as_array);
        let headers = header_lines(text, Kind::Program);
        for (at, program) in file.program.iter_mut().enumerate() {
            let line = headers.get(at).copied().unwrap_or(1);
            let here = |clash: Clash| RulesError::BuiltIn {
                file: name.to_string(),
                line,
                clash: Box::new(clash),
            };
            let keys: Vec<&str> = entries
                .and_then(|e| e.get(at))
                .and_then(toml::Value::as_table)
                .map(|t| t.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut built_in: Vec<(&str, &Rc<Program>)> = Vec::new();
            for n in &program.names {
                if let Some(found) = self.built_in_program(n)
                    && !built_in.iter().any(|(_, b)| Rc::ptr_eq(b, found))
                {
                    built_in.push((n, found));
                }
            }
            if program.replace {
                if built_in.is_empty() {
                    return Err(here(Clash::ReplacesNothing {
                        names: program.names.clone(),
                    }));
                }
                continue;
            }
            let [(first, base)] = built_in[..] else {
                if built_in.is_empty() {
                    continue;
                }
                let names: Vec<String> = built_in.iter().map(|(n, _)| n.to_string()).collect();
                return Err(here(Clash::SeveralPrograms { names }));
            };
            if let Some(key) = DEFINING.iter().find(|k| keys.contains(k)) {
                return Err(here(Clash::Redefines {
                    program: first.to_string(),
                    key: key.to_string(),
                }));
            }
            *program = extended(base, program).map_err(|change| {
                here(Clash::Changes {
                    program: first.to_string(),
                    change,
                })
            })?;
        }
        Ok(file)
    }
}

/// An error for the first entry of `file` that takes a built-in name in a way that would
/// change what the guard sees behind it. A `[[program]]` may name a built-in program (it is
/// extended or replaced: `Rules::layer`); a name list (`[[command_env]]`, `[[declaration]]`,
/// `[[environment_setter]]`) may repeat a name of its own kind; an `[[arguments]]` entry
/// may annotate only a name nothing built in defines; nothing else may name a built-in name: a second shell named `bash` whose `-c` is lost, or a declaration named
/// `ssh`, would let commands through unseen.
fn no_built_in_redefined(name: &str, text: &str, file: &RulesFile) -> Result<(), RulesError> {
    fn names_of<T>(items: &[T], names: impl Fn(&T) -> &[String]) -> Vec<&[String]> {
        items.iter().map(names).collect()
    }
    let entries = [
        (Kind::Program, names_of(&file.program, |e| &e.names)),
        (Kind::Wrapper, names_of(&file.wrapper, |e| &e.names)),
        (Kind::Shell, names_of(&file.shell, |e| &e.names)),
        (Kind::Interpreter, names_of(&file.interpreter, |e| &e.names)),
        (Kind::CommandEnv, names_of(&file.command_env, |e| &e.names)),
        (Kind::Declaration, names_of(&file.declaration, |e| &e.names)),
        (
            Kind::EnvironmentSetter,
            names_of(&file.environment_setter, |e| &e.names),
        ),
        (Kind::Writer, names_of(&file.writer, |e| &e.names)),
        (Kind::Agent, names_of(&file.agent, |e| &e.names)),
        (Kind::Arguments, names_of(&file.arguments, |e| &e.names)),
        (Kind::Runner, names_of(&file.runner, |e| &e.names)),
    ];
    for (kind, lists) in entries {
        let headers = header_lines(text, kind);
        for (at, names) in lists.iter().enumerate() {
            for n in names.iter() {
                let mut built_in = Rules::built_in_kinds(n);
                // `[[arguments]]` annotates a name of any kind; only another one clashes.
                if !matches!(kind, Kind::Arguments) {
                    built_in.retain(|k| *k != Kind::Arguments.key());
                }
                // A runner is read for its recipes beside what else its name is (`cargo`):
                // only another runner of the name clashes.
                if !matches!(kind, Kind::Runner) {
                    built_in.retain(|k| *k != Kind::Runner.key());
                }
                let allowed = match kind {
                    Kind::Program
                    | Kind::CommandEnv
                    | Kind::Declaration
                    | Kind::EnvironmentSetter => built_in.iter().all(|k| *k == kind.key()),
                    _ => built_in.is_empty(),
                };
                if allowed {
                    continue;
                }
                let line = headers.get(at).copied().unwrap_or(1);
                return Err(RulesError::BuiltIn {
                    file: name.to_string(),
                    line,
                    clash: Box::new(Clash::TakesName {
                        name: n.to_string(),
                        built_in_as: built_in.iter().map(|k| k.to_string()).collect(),
                        kind: kind.key(),
                    }),
                });
            }
        }
    }
    Ok(())
}

/// `base` with `more`'s additions; an option or variable whose role it would change is
/// a redefinition.
fn extended(base: &Program, more: &Program) -> Result<Program, Change> {
    let mut out = base.clone();
    for n in &more.names {
        if !out.names.contains(n) {
            out.names.push(n.clone());
        }
    }
    for (table, added, what) in [
        (&mut out.options, &more.options, "option"),
        (&mut out.env, &more.env, "variable"),
    ] {
        for (key, role) in added {
            match table.get(key) {
                Some(had) if had != role => {
                    return Err(Change::Role {
                        what,
                        key: key.clone(),
                        had: role_name(*had),
                        given: role_name(*role),
                    });
                }
                _ => {
                    table.insert(key.clone(), *role);
                }
            }
        }
    }
    for (letters, added) in [
        (&mut out.syntax.short_value, &more.syntax.short_value),
        (&mut out.syntax.short_flag, &more.syntax.short_flag),
    ] {
        for c in added.chars() {
            if !letters.contains(c) {
                letters.push(c);
            }
        }
    }
    for (list, added) in [
        (&mut out.syntax.long_value, &more.syntax.long_value),
        (
            &mut out.syntax.long_two_values,
            &more.syntax.long_two_values,
        ),
        (&mut out.syntax.long_flag, &more.syntax.long_flag),
        (&mut out.syntax.optional_value, &more.syntax.optional_value),
        (&mut out.inert, &more.inert),
    ] {
        list.extend(
            added
                .iter()
                .filter(|a| !list.contains(a))
                .cloned()
                .collect::<Vec<_>>(),
        );
    }
    for (method, command) in &more.methods {
        match out.methods.get(method) {
            Some(had) if had != command => {
                return Err(Change::Method {
                    method: method.clone(),
                    had: had.clone(),
                    given: command.clone(),
                });
            }
            _ => {
                out.methods.insert(method.clone(), command.clone());
            }
        }
    }
    out.subcommand.extend(more.subcommand.iter().cloned());
    Ok(out)
}

/// A role as the rules spell it (`remote-command`).
fn role_name(role: Role) -> String {
    let debug = format!("{role:?}");
    let mut out = String::new();
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The line of each `[[kind]]` header, in order.
fn header_lines(text: &str, kind: Kind) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim_start();
            l.strip_prefix("[[")
                .and_then(|r| r.split(']').next())
                .is_some_and(|k| k.trim() == kind.key())
        })
        .map(|(i, _)| i + 1)
        .collect()
}
