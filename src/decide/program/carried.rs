//! The command a refused program carries for its target to run (ssh's remote command,
//! `docker exec`'s command): its words as written, and the commands it runs once a shell
//! has parsed it and its wrappers are off, so that it is ranked on what it does.

use crate::decide::*;
use crate::rules::Program;
use crate::shell::Stdin;
use crate::unwrap::{Step, unwrap};

/// What a program carries, and its family, for ranking and filling.
#[derive(Debug, Clone, Default)]
pub(in crate::decide) struct Carried {
    pub inner: Vec<String>,
    pub runs: Vec<Vec<String>>,
    pub family: Vec<String>,
    /// What the call does, as other commands (the rules' `methods`), target left off.
    pub equivalent: Vec<Vec<String>>,
    pub operands: Vec<String>,
}

impl Guard<'_> {
    /// Reads the operands of `spec` for what they carry.
    pub(in crate::decide) fn carry(
        &self,
        spec: &Program,
        operands: &[&str],
        carried: &mut Carried,
        depth: usize,
    ) {
        carried.operands = operands.iter().map(|s| s.to_string()).collect();
        let Some(at) = spec
            .operands
            .iter()
            .position(|o| matches!(o.role, Role::RemoteCommand | Role::Command))
        else {
            return;
        };
        let Some(words) = operands.get(at..).filter(|w| !w.is_empty()) else {
            return;
        };
        // `mosh api -- htop`: the `--` ends mosh's options; it is not part of the command.
        let words = match words.split_first() {
            Some((&"--", rest)) => rest,
            _ => words,
        };
        carried.inner = words.iter().map(|s| s.to_string()).collect();
        carried.runs = match spec.operands[at].role {
            // ssh joins its words with spaces and the remote shell parses the string.
            Role::RemoteCommand => self.runs_of_source(&words.join(" "), depth + 1),
            _ => self.runs_of_words(carried.inner.clone(), depth + 1),
        };
    }

    fn runs_of_source(&self, source: &str, depth: usize) -> Vec<Vec<String>> {
        if depth > MAX_PAYLOAD_DEPTH {
            return Vec::new();
        }
        match shell::parse(source, depth, &HashMap::new()) {
            Ok(script) => script
                .commands
                .into_iter()
                .flat_map(|c| self.runs_of_command(c))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    fn runs_of_words(&self, words: Vec<String>, depth: usize) -> Vec<Vec<String>> {
        let command = Command {
            words,
            env: Vec::new(),
            stdin: Stdin::Inherited,
            writes: Vec::new(),
            files: Vec::new(),
            depth,
            written: Vec::new(),
            feeds: false,
            stdin_regular_files: false,
            regular_files: Vec::new(),
        };
        self.runs_of_command(command)
    }

    fn runs_of_command(&self, command: Command) -> Vec<Vec<String>> {
        let mut steps = Vec::new();
        unwrap(self.rules, command, &mut steps);
        steps
            .into_iter()
            .flat_map(|step| match step {
                Step::Run(c) if !c.words.is_empty() => vec![c.words],
                Step::Shell { source, depth, .. } => self.runs_of_source(&source, depth),
                _ => Vec::new(),
            })
            .collect()
    }
}
