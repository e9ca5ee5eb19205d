//! Simple commands: their assignments, redirections and `read`, emitted as commands.

use super::*;
use crate::shell::expand::{literal_globs, unknown_globs};
use crate::shell::{Command, MAX_COMMANDS, Stdin, UNKNOWN};
use shuck_ast::{AssignmentValue, Redirect, RedirectKind, RedirectTarget, SimpleCommand};

impl Walker<'_> {
    pub(crate) fn simple(&mut self, simple: &SimpleCommand, writes: Vec<String>) {
        let env = self.prefix_assignments(&simple.assignments);
        let mut program = self.fields_with_globs(&simple.name);
        for alternative in &mut program {
            for (i, field) in alternative.iter_mut().enumerate() {
                let word = std::mem::take(field);
                *field = if i == 0 {
                    unknown_globs(word)
                } else {
                    literal_globs(word)
                };
            }
        }
        let mut alternatives: Vec<Vec<String>> = vec![Vec::new()];
        alternatives = self.product(alternatives, program);
        let mut written = Vec::new();
        for word in &simple.args {
            let fields = self.fields(word);
            // An unknown part, or the session's home (a host path a message never shows).
            let raw = word.span.slice(self.src);
            let home = raw.contains("$HOME") || raw.contains("${HOME");
            for field in fields
                .iter()
                .flatten()
                .filter(|f| home || f.contains(UNKNOWN))
            {
                written.push((field.clone(), raw.to_string()));
            }
            alternatives = self.product(alternatives, fields);
        }
        // `> file` with no command still opens (and empties) the file: kept for its writes.
        alternatives.retain(|a| !a.is_empty() || !env.is_empty() || !writes.is_empty());
        if alternatives.iter().all(|a| a.is_empty()) {
            // A bare assignment sets the variable for the rest of the command.
            for (name, value) in &env {
                self.assign(name.clone(), [value.clone()]);
            }
        }
        // `alias s=ssh` earlier in the command: an unquoted program word that names an alias
        // is its value, as bash expands it where aliases are on.
        let plain_name = matches!(simple.name.parts.as_slice(), [part] if matches!(part.kind, shuck_ast::WordPart::Literal(_)));
        for words in &mut alternatives {
            if words.first().is_some_and(|w| w == "alias") {
                for definition in &words[1..] {
                    if let Some((name, value)) = definition.split_once('=') {
                        self.aliases.insert(name.to_string(), value.to_string());
                    }
                }
            } else if plain_name
                && let Some(value) = words.first().and_then(|w| self.aliases.get(w))
            {
                let expanded = shell_words::split(value)
                    .unwrap_or_else(|_| value.split_whitespace().map(str::to_string).collect());
                words.splice(0..1, expanded);
            }
        }
        let stdin = self.next_stdin.take();
        let stdin_files = std::mem::take(&mut self.next_stdin_files);
        for words in alternatives {
            match words.first().map(String::as_str) {
                Some("read") => self.read_builtin(&words, stdin.as_ref()),
                Some("printf") if words.get(1).is_some_and(|w| w == "-v") => self.printf_v(&words),
                Some("shift") if self.positional.is_some() => self.shift(&words),
                Some("set") if words.get(1).is_some_and(|w| w == "--") => {
                    self.set_positional(Some(words[2..].to_vec()))
                }
                _ => {}
            }
            self.next_stdin = stdin.clone();
            self.next_stdin_files = stdin_files;
            let before = self.commands.len();
            self.emit(words.clone(), env.clone(), writes.clone());
            if self.commands.len() > before
                && let Some(command) = self.commands.last_mut()
            {
                command.written.clone_from(&written);
            }
            if plain_name {
                self.call(&words);
            }
        }
    }

    /// `printf -v NAME FORMAT ARGS…` assigns what it would print.
    fn printf_v(&mut self, words: &[String]) {
        let Some(name) = words.get(2) else { return };
        let value = match words.get(3..) {
            Some([format, args @ ..]) => printf(format, args),
            _ => None,
        };
        // In a loop it may format its own earlier value.
        let again = (self.loops > 0).then(|| UNKNOWN.to_string());
        let value = value.unwrap_or_else(|| UNKNOWN.to_string());
        self.assign(name.clone(), std::iter::once(value).chain(again));
    }

    /// `read NAME…` sets its variables from its input: known lines when the input is known.
    pub(crate) fn read_builtin(&mut self, words: &[String], stdin: Option<&Stdin>) {
        let options: Vec<&String> = words[1..].iter().filter(|w| w.starts_with('-')).collect();
        let one_name = words[1..].len() - options.len() == 1;
        let raw = options.iter().all(|o| *o == "-r");
        let values: Vec<String> = match stdin {
            // `read -r h`: each line, blanks at its ends off (IFS), is a value `h` takes.
            Some(Stdin::Text(text)) if one_name && raw && !options.is_empty() => text
                .lines()
                .map(|line| line.trim_matches([' ', '\t']).to_string())
                .collect(),
            Some(Stdin::Text(text)) => text.split_whitespace().map(str::to_string).collect(),
            _ => vec![UNKNOWN.to_string()],
        };
        // `while read h`: the body sees the line read, whatever `h` held before.
        let uncertain = std::mem::take(&mut self.uncertain);
        self.read_names(words, values);
        self.uncertain = uncertain;
    }

    fn read_names(&mut self, words: &[String], values: Vec<String>) {
        let mut args = words[1..].iter().filter(|w| !w.starts_with('-'));
        if let Some(name) = args.next_back() {
            self.assign(name.clone(), values);
        }
        for name in args {
            self.assign(name.clone(), [UNKNOWN.to_string()]);
        }
    }

    pub(crate) fn prefix_assignments(
        &mut self,
        assignments: &[shuck_ast::Assignment],
    ) -> Vec<(String, String)> {
        let mut env = Vec::new();
        for a in assignments {
            let (name, values) = self.assignment(a);
            env.extend(values.into_iter().map(|v| (name.clone(), v)));
        }
        env
    }

    pub(crate) fn assignment(&mut self, a: &shuck_ast::Assignment) -> (String, Vec<String>) {
        let name = a.target.name.as_str().to_string();
        let values = match &a.value {
            AssignmentValue::Scalar(word) => {
                let mut values = self.joined(word);
                // `h+=x` appends to every value `h` may hold.
                if a.append && a.target.subscript.is_none() {
                    let held = self.variable(&name);
                    values = held
                        .iter()
                        .flat_map(|h| values.iter().map(move |v| format!("{h}{v}")))
                        .collect();
                }
                if self.loops > 0 && (a.append || self.reads_itself(&name, word)) {
                    values.push(UNKNOWN.to_string());
                }
                // `a[i]=x` sets one element: `$a` (element 0) may keep its value.
                if let Some(subscript) = &a.target.subscript {
                    if let Some(word) = subscript.word_ast() {
                        self.fields(word);
                    }
                    self.set_array(&name, None);
                    let mut held = self
                        .vars
                        .get(&name)
                        .cloned()
                        .unwrap_or_else(|| vec![UNKNOWN.to_string()]);
                    held.extend(values);
                    return (name, held);
                }
                values
            }
            AssignmentValue::Compound(array) => {
                let mut keyed = false;
                let mut elements = Vec::new();
                for e in &array.elements {
                    let value = match e {
                        shuck_ast::ArrayElem::Sequential(v) => &v.word,
                        shuck_ast::ArrayElem::Keyed { value, .. }
                        | shuck_ast::ArrayElem::KeyedAppend { value, .. } => {
                            keyed = true;
                            &value.word
                        }
                    };
                    let alternatives = self.fields(value);
                    // An element with several possible values shifts the ones after it.
                    keyed |= alternatives.len() > 1;
                    elements.extend(alternatives.into_iter().flatten());
                }
                if keyed {
                    // Where each element sits is not followed: `${a[1]}` is unknown.
                    self.set_array(&name, None);
                } else {
                    let mut held = match a.append {
                        true => self.arrays.get(&name).cloned().unwrap_or_default(),
                        false => Vec::new(),
                    };
                    held.extend(elements.iter().cloned());
                    self.set_array(&name, Some(held));
                }
                elements
            }
        };
        (name, values)
    }

    pub(crate) fn emit(
        &mut self,
        words: Vec<String>,
        env: Vec<(String, String)>,
        mut writes: Vec<String>,
    ) {
        if self.commands.len() >= MAX_COMMANDS {
            self.incomplete = Some(format!("it runs more than {MAX_COMMANDS} commands"));
            return;
        }
        writes.extend(self.outer_writes.iter().cloned());
        for path in read_paths(&words) {
            self.note_input(&path);
        }
        let stdin = self.next_stdin.take().unwrap_or(Stdin::Inherited);
        let files = words
            .iter()
            .filter_map(|w| self.files.get(w).map(|text| (w.clone(), text.clone())))
            .collect();
        let command = Command {
            words,
            env,
            stdin,
            writes,
            files,
            depth: self.depth,
            written: Vec::new(),
            feeds: self.feeding > 0,
            stdin_regular_files: std::mem::take(&mut self.next_stdin_files),
            regular_files: Vec::new(),
        };
        // `echo 'ssh atlas' > s.sh`: what the command wrote is known to later commands.
        if let Stdin::Text(text) = output_of(&command) {
            for path in command.writes.iter().filter(|w| !w.starts_with("/dev/")) {
                self.files.insert(path.clone(), text.clone());
            }
        }
        self.commands.push(command);
    }

    pub(crate) fn redirects(&mut self, redirects: &[Redirect]) -> (Option<Stdin>, Vec<String>) {
        let mut stdin = None;
        let mut writes = Vec::new();
        for r in redirects {
            match (&r.target, r.kind) {
                (RedirectTarget::Heredoc(heredoc), _) => {
                    stdin = Some(Stdin::Text(self.heredoc(heredoc)));
                }
                (RedirectTarget::Word(word), RedirectKind::HereString) => {
                    stdin = Some(Stdin::Text(self.joined(word).join(" ")));
                }
                (RedirectTarget::Word(word), RedirectKind::Input) => {
                    // `< /dev/tcp/host/port` opens a connection: kept with the files it
                    // touches, for the decision to see.
                    let paths = self.joined(word);
                    if let [path] = paths.as_slice() {
                        self.note_input(path);
                    }
                    stdin = Some(match paths.as_slice() {
                        [path] => self
                            .files
                            .get(path)
                            .map_or(Stdin::Unknown, |t| Stdin::Text(t.clone())),
                        _ => Stdin::Unknown,
                    });
                    writes.extend(paths.into_iter().filter(|w| is_socket_path(w)));
                }
                (
                    RedirectTarget::Word(word),
                    RedirectKind::Output
                    | RedirectKind::Clobber
                    | RedirectKind::Append
                    | RedirectKind::OutputBoth
                    | RedirectKind::ReadWrite,
                ) => {
                    writes.extend(self.joined(word));
                }
                (RedirectTarget::Word(word), _) => {
                    writes.extend(self.joined(word).into_iter().filter(|w| is_socket_path(w)));
                }
            }
        }
        (stdin, writes)
    }
}

impl Walker<'_> {
    /// `$(< hosts.txt)`: bash's shorthand for a file's text, when the body is only that.
    pub(crate) fn file_shorthand(&mut self, body: &shuck_ast::StmtSeq) -> Option<Stdin> {
        let [stmt] = body.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let shuck_ast::Command::Simple(simple) = &stmt.command else {
            return None;
        };
        let [redirect] = &stmt.redirects[..] else {
            return None;
        };
        // The parser gives the missing name as one empty word.
        if !simple.name.span.slice(self.src).is_empty() || !simple.args.is_empty() {
            return None;
        }
        let (RedirectTarget::Word(word), RedirectKind::Input) = (&redirect.target, redirect.kind)
        else {
            return None;
        };
        let paths = self.joined(word);
        let [path] = paths.as_slice() else {
            return Some(Stdin::Unknown);
        };
        self.note_input(path);
        Some(
            self.files
                .get(path)
                .map_or(Stdin::Unknown, |t| Stdin::Text(t.clone())),
        )
    }
}

/// Files at most noted as inputs for one source.
const MAX_INPUTS: usize = 16;

impl Walker<'_> {
    /// A file the command reads: noted when its text is not known yet.
    pub(crate) fn note_input(&mut self, path: &str) {
        if !path.is_empty()
            && crate::shell::is_known(path)
            && !path.starts_with("/dev/")
            && !path.starts_with("/proc/")
            && !self.files.contains_key(path)
            && !self.inputs.iter().any(|p| p == path)
            && self.inputs.len() < MAX_INPUTS
        {
            self.inputs.push(path.to_string());
        }
    }
}

/// The files a program of the walk's own reading reads (`cat F`, `xargs -a F`,
/// `parallel … :::: F`): their text makes its output or its jobs known.
fn read_paths(words: &[String]) -> Vec<String> {
    let Some(program) = words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) else {
        return Vec::new();
    };
    let args = &words[1..];
    match program {
        "cat" | "head" | "tail" => args
            .iter()
            .filter(|a| !a.starts_with('-'))
            .cloned()
            .collect(),
        "xargs" => args
            .windows(2)
            .filter(|pair| pair[0] == "-a" || pair[0] == "--arg-file")
            .map(|pair| pair[1].clone())
            .chain(
                args.iter()
                    .filter_map(|a| a.strip_prefix("--arg-file=").map(String::from)),
            )
            .collect(),
        "parallel" => {
            let mut files = false;
            let mut out = Vec::new();
            for arg in args {
                match arg.as_str() {
                    "::::" => files = true,
                    a if a.starts_with(":::") => files = false,
                    a if files => out.push(a.to_string()),
                    _ => {}
                }
            }
            out
        }
        _ => Vec::new(),
    }
}
