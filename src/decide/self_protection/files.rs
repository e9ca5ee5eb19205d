//! Self-protection: the guard's own files are not the agent's to write.

use crate::argv::base_name;
use crate::decide::{Guard, Refusal, Walk, Why, option_values};
use crate::protect::lexical;
use crate::rule::Rule;
use crate::shell::{Command, Stdin, UNKNOWN};
use std::path::{Path, PathBuf};

impl Guard<'_> {
    /// The guard's own catalog, rules, record and plugin are not the agent's to change,
    /// nor may an agent it starts run without the guard.
    pub(in crate::decide) fn self_protection(
        &self,
        command: &Command,
        walk: &Walk,
    ) -> Option<Refusal> {
        if let Some(why) = self
            .agent_without_guard(command, walk)
            .or_else(|| self.guard_subcommand(&command.words))
            .or_else(|| self.copied_guard_subcommand(command, walk))
        {
            return Some(Refusal {
                target: "mesh-guard".into(),
                ..Refusal::plain(Rule::SelfProtection, &self.shown(command), why)
            });
        }
        if self.world.guards_nothing() {
            return None;
        }
        let program = command.words.first().map(|p| base_name(p)).unwrap_or("");
        let mut targets: Vec<(String, Reach)> = command
            .writes
            .iter()
            .map(|w| (w.clone(), Reach::Whole))
            .collect();
        let mut code: Vec<String> = Vec::new();
        let args = command.words.get(1..).unwrap_or_default();
        if let Some(writer) = self.rules.writer(program) {
            targets.extend(self.written(writer, args, &command.regular_files, walk));
            if writer.code_operands {
                code.extend(args.iter().cloned());
            }
            if writer.stdin_script
                && let Stdin::Text(text) = &command.stdin
            {
                code.push(text.clone());
            }
        }
        targets.extend(
            self.hard_linked(program, args)
                .into_iter()
                .map(|w| (w, Reach::Whole)),
        );
        if let Some(interpreter) = self.rules.interpreter(program) {
            code.extend(crate::unwrap::interpreter_code(interpreter, command, args));
            // `python3 fix.py ~/.claude/settings.json`: the script is handed the file.
            code.extend(args.iter().cloned());
        }
        let hit = targets
            .iter()
            .find(|(w, reach)| self.writes_guard_file(w, reach, walk))
            .map(|(w, _)| w.clone())
            .or_else(|| {
                code.iter()
                    .find_map(|c| self.code_names_guard_file(c, walk))
            });
        let hit = hit?;
        let why = if program.starts_with("sqlite") || program == "litecli" {
            Why::OpensRecord
        } else {
            Why::ChangesGuardFiles
        };
        Some(Refusal {
            target: base_name(&hit.replace(UNKNOWN, "…")).to_string(),
            ..Refusal::plain(Rule::SelfProtection, &self.shown(command), why)
        })
    }

    /// The words a writer changes, as its rule says.
    pub(in crate::decide) fn written(
        &self,
        writer: &crate::rules::Writer,
        args: &[String],
        regular_files: &[String],
        walk: &Walk,
    ) -> Vec<(String, Reach)> {
        let runs_writer = args.iter().enumerate().any(|(i, a)| {
            writer.runs_on_found.contains(a)
                && args
                    .get(i + 1)
                    .is_some_and(|p| self.rules.writer(base_name(p)).is_some())
        });
        if !writer.only_with.is_empty() && !runs_writer && !super::writes::only_with(writer, args) {
            return Vec::new();
        }
        if !writer.runs_on_found.is_empty() || !writer.name_tests.is_empty() {
            // The starting points come before the first option (`find DIR… -name X …`).
            let names = option_values(args, &writer.name_tests);
            return args
                .iter()
                .take_while(|a| !a.starts_with(['-', '(', '!']))
                .map(|dir| (dir.clone(), Reach::Named(names.clone())))
                .collect();
        }
        if super::writes::by_grammar(writer) {
            return super::writes::written(writer, args);
        }
        let target = option_values(args, &writer.target_options).pop();
        let base = option_values(args, &writer.base_dir_options).pop();
        let values: Vec<usize> = args
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                writer.target_options.contains(a) || writer.base_dir_options.contains(a)
            })
            .map(|(i, _)| i + 1)
            .collect();
        let words: Vec<String> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| !values.contains(i))
            .map(|(_, w)| {
                writer
                    .value_prefixes
                    .iter()
                    .find_map(|p| w.strip_prefix(p.as_str()))
                    .unwrap_or(w)
                    .to_string()
            })
            .filter(|w| !w.starts_with('-'))
            .map(|w| under(base.as_deref(), w))
            .collect();
        if !writer.into_directory || (words.len() < 2 && target.is_none()) {
            let reach = || {
                if writer.exact {
                    Reach::Exact
                } else {
                    Reach::Whole
                }
            };
            return words.into_iter().map(|w| (w, reach())).collect();
        }
        // Total, though the return above leaves two words or more when there is no target:
        // nothing on the hook's path may panic.
        let (destination, sources) = match (&target, words.split_last()) {
            (Some(dir), _) => (dir, words.as_slice()),
            (None, Some(last_and_rest)) => last_and_rest,
            (None, None) => return Vec::new(),
        };
        let mut out: Vec<(String, Reach)> = Vec::new();
        let into_directory = target.is_some()
            || destination.ends_with('/')
            || sources.len() > 1
            || self.world.is_directory(
                &self
                    .world
                    .resolve(&self.world.expand_tilde(destination), walk.cwd.as_deref()),
            );
        if into_directory {
            // `cp -r evil/mesh-guard ~/.config/` writes `~/.config/mesh-guard`.
            out.push((destination.clone(), Reach::Exact));
            for source in sources {
                // `rsync -a evil/ DIR`, `cp -r evil/. DIR`: the contents land in DIR itself.
                if source.ends_with('/') || source.ends_with("/.") {
                    out.push((destination.clone(), Reach::Contents));
                    continue;
                }
                // A name is one path component: what cannot be known of it holds no `/`.
                let name = base_name(source.trim_end_matches('/')).replace(UNKNOWN, "*");
                // A regular file lands as one file; anything else may be a tree.
                let reach = if regular_files.contains(source) {
                    Reach::Exact
                } else {
                    Reach::Tree
                };
                out.push((
                    format!("{}/{name}", destination.trim_end_matches('/')),
                    reach,
                ));
            }
        } else {
            out.push((destination.clone(), Reach::Whole));
        }
        if !writer.reads_sources {
            out.extend(sources.iter().map(|s| (s.clone(), Reach::Whole)));
        }
        out
    }

    /// Whether writing `word` writes a guard file, from where the command is.
    pub(in crate::decide) fn writes_guard_file(
        &self,
        word: &str,
        reach: &Reach,
        walk: &Walk,
    ) -> bool {
        let world = self.world;
        let word = world.expand_tilde(word);
        let cwd = walk.cwd.as_deref();
        if let Some((target, rest)) = self.through_created_link(&word, walk) {
            // Past a link the command made, the text does not say where the path goes.
            let unknown = format!("{UNKNOWN}/{rest}");
            let pointed = world
                .resolve(&target, None)
                .join(&rest)
                .to_string_lossy()
                .into_owned();
            return world.covers(&unknown, None)
                || target.contains(UNKNOWN)
                || world.covers(&pointed, None);
        }
        let relative = !word.starts_with('/') && !word.starts_with(UNKNOWN);
        if walk.cwd_unknown && relative {
            return world.covers_anywhere(&word);
        }
        match reach {
            Reach::Exact => world.is_or_under(&word, cwd),
            Reach::Whole => world.covers(&word, cwd),
            Reach::Contents => {
                world.is_or_under(&word, cwd) || world.is_guard_parent(&world.resolve(&word, cwd))
            }
            Reach::Tree => world.covers(&word, cwd) || world.would_hold(&world.resolve(&word, cwd)),
            Reach::Named(names) if names.is_empty() => world.covers(&word, cwd),
            Reach::Named(names) => {
                world.is_or_under(&word, cwd)
                    || world.holds_named(&world.resolve(&word, cwd), names)
            }
        }
    }

    /// When `word`, from where the command is, goes through a link the command created:
    /// the link's target (absolute, against the link's directory) and the rest of the path.
    pub(in crate::decide) fn through_created_link(
        &self,
        word: &str,
        walk: &Walk,
    ) -> Option<(String, String)> {
        if walk.links.is_empty() || word.contains(UNKNOWN) {
            return None;
        }
        let base = walk.cwd.clone().or(self.world.cwd.clone())?;
        let raw = if word.starts_with('/') {
            PathBuf::from(word)
        } else {
            base.join(word)
        };
        let parts: Vec<_> = raw.components().collect();
        let mut prefix = PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part);
            let here = lexical(&prefix);
            if let Some((link, target)) = walk.links.iter().find(|(l, _)| *l == here) {
                let rest: PathBuf = parts[i + 1..].iter().collect();
                let target = self.world.expand_tilde(target);
                let target = if target.starts_with('/') || target.starts_with(UNKNOWN) {
                    target
                } else {
                    link.parent()
                        .unwrap_or(Path::new("/"))
                        .join(target)
                        .to_string_lossy()
                        .into_owned()
                };
                return Some((target, rest.to_string_lossy().into_owned()));
            }
        }
        None
    }

    /// Interpreter code or SQL that names a guard file (`open('.claude/settings.local.json',
    /// 'w')`, `ATTACH '~/.local/share/mesh-guard/audit.db'`): the code could do anything
    /// with it, so naming it is enough.
    pub(in crate::decide) fn code_names_guard_file(
        &self,
        code: &str,
        walk: &Walk,
    ) -> Option<String> {
        let pieces = code.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '\'' | '"'
                        | '`'
                        | '('
                        | ')'
                        | ','
                        | ';'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | '+'
                )
        });
        for piece in pieces.filter(|p| p.contains('/') || p.starts_with(['.', '~'])) {
            if matches!(piece, "." | ".." | "./" | "../") {
                continue;
            }
            let word = self.world.expand_tilde(piece);
            if self.writes_guard_file(&word, &Reach::Exact, walk)
                || self
                    .world
                    .is_guard_parent(&self.world.resolve(&word, walk.cwd.as_deref()))
            {
                return Some(piece.to_string());
            }
        }
        // `os.path.join(home, '.claude', 'settings.json')`: a guard file's name and its
        // directory's, named apart.
        self.world.named_in(code)
    }
}

/// How much of what a written word names is written.
pub(in crate::decide) enum Reach {
    /// The file itself (`cp x DIR/`: the directory is not replaced).
    Exact,
    /// The file, or the directory and everything in it (`rm -rf DIR`).
    Whole,
    /// A tree written there, whose files may land where the guard's are or would be
    /// (`cp -r evil/.claude ~/`).
    Tree,
    /// A directory's contents copied into this one (`rsync -a evil/ ~/.claude/`): refused
    /// where a guard file sits directly, not for every directory above one.
    Contents,
    /// What a directory holds whose names match one of these patterns (`find -name`);
    /// everything when there are none.
    Named(Vec<String>),
}

/// `word` as a path under `dir`, when it is relative to it.
fn under(dir: Option<&str>, word: String) -> String {
    match dir {
        Some(dir) if !word.starts_with(['/', '~']) => {
            format!("{}/{word}", dir.trim_end_matches('/'))
        }
        _ => word,
    }
}
