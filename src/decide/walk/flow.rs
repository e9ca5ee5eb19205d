//! Which words can flow into a target the command does not give (issue 13, item 6): the
//! same command's arguments, values assigned or read, text fed on stdin, and the words of
//! commands whose output becomes part of its words. A sibling command of a list (`cargo
//! build` after `systemctl status "$SVC"`) and path segments (`/mnt/backup/`) do not.

use crate::decide::*;

impl Walk {
    /// What a command adds to the words that can flow into another's target.
    pub(in crate::decide) fn note_flows(&mut self, command: &Command) {
        self.flows
            .extend(command.env.iter().map(|(_, value)| value.clone()));
        if let Stdin::Text(text) = &command.stdin {
            self.flows
                .extend(text.split_whitespace().map(str::to_string));
        }
        // `$(docker ps -qf name=redis)`, `echo atlas > h`: what it prints or writes is read
        // by another command. A compose query's words are services of the local project,
        // never a container's or machine's name.
        // `f() { ssh "$@"; }; f atlas`: a function's arguments are its body's.
        let calls_function = command
            .words
            .first()
            .is_some_and(|p| self.functions.contains(p));
        let writes_file = command.writes.iter().any(|w| !w.starts_with("/dev/"));
        if calls_function || assigns(&command.words) {
            self.flows.extend(command.words[1..].iter().cloned());
        }
        if (command.feeds || writes_file) && !is_compose(&command.words) {
            self.flows.extend(command.words.iter().cloned());
            // `printf 'desk\0db\0'`: an escape in a word it prints separates what it names.
            self.flows.extend(
                command
                    .words
                    .iter()
                    .skip(1)
                    .filter(|w| w.contains('\\'))
                    .map(|w| escapes_as_blanks(w)),
            );
        }
    }
}

/// The words of a candidate's command that could be its target. The command a container
/// runs (`docker exec "$C" psql -U postgres`) names things inside it, never the container;
/// a remote command's words stay (a mesh unit it names says the machine is the mesh's).
pub(in crate::decide) fn own_words(c: &Candidate) -> &[String] {
    let words = c.command.as_slice();
    if c.role.placeholder() != "container" {
        return words;
    }
    let inner = &c.carried.inner;
    if inner.is_empty() {
        return words;
    }
    (0..words.len())
        .find(|&at| words[at..] == inner[..])
        .map_or(words, |at| &words[..at])
}

/// `desk\0db\n` → `desk  db `: each backslash escape (`\0`, `\n`, `\x41`, `\101`) a blank.
fn escapes_as_blanks(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(' ');
        match chars.next() {
            Some('x') => {
                for _ in 0..2 {
                    chars.next_if(char::is_ascii_hexdigit);
                }
            }
            Some(d) if d.is_digit(8) => {
                for _ in 0..3 {
                    chars.next_if(|c| c.is_digit(8));
                }
            }
            _ => {}
        }
    }
    out
}

/// Builtins that assign what their arguments say to variables (`printf -v h '%s' x`,
/// `set -- x`, `: "${h:=x}"`, `declare h=x`): their words can become a target.
fn assigns(words: &[String]) -> bool {
    match words.first().map(String::as_str) {
        Some("printf") => words.get(1).is_some_and(|w| w.starts_with("-v")),
        Some(program) => matches!(
            program,
            "read"
                | "set"
                | "mapfile"
                | "readarray"
                | "declare"
                | "typeset"
                | "local"
                | "export"
                | "readonly"
                | ":"
                | "let"
                | "getopts"
                | "shift"
        ),
        None => false,
    }
}

/// `docker compose …`, `podman compose …`, `docker-compose …`.
fn is_compose(words: &[String]) -> bool {
    let Some(program) = words.first().map(|w| base_name(w)) else {
        return false;
    };
    matches!(program, "docker-compose" | "podman-compose")
        || (matches!(program, "docker" | "podman" | "nerdctl")
            && words[1..]
                .iter()
                .find(|w| !w.starts_with('-'))
                .is_some_and(|w| w == "compose"))
}

/// The pieces of a word that could be a target: the word itself, the host of `user@host`,
/// `host:path` and `scheme://host/…`, and the value of `name=value`. Never a path segment.
pub(in crate::decide) fn target_pieces(word: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    // Lists and quoted text (`x,atlas` read with `IFS=,`) hold several words.
    let separators = |c: char| {
        c == UNKNOWN || c.is_whitespace() || matches!(c, ',' | ';' | '\'' | '"' | '(' | ')')
    };
    for part in word.split(separators) {
        piece_of(part, &mut pieces);
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

fn piece_of<'w>(part: &'w str, out: &mut Vec<&'w str>) {
    if part.is_empty() {
        return;
    }
    if let Some((_, rest)) = part.split_once("://") {
        let authority = rest.split('/').next().unwrap_or(rest);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        out.push(host.split(':').next().unwrap_or(host));
        return;
    }
    if let Some((name, value)) = part.split_once('=')
        && !name.contains('/')
    {
        out.push(name);
        piece_of(value, out);
        return;
    }
    let host = match part.rsplit_once('@') {
        Some((_, host)) => host,
        None => part,
    };
    match host.split_once(':') {
        // `host:path`; a bare IPv6 address is kept whole.
        Some((name, _)) if host.matches(':').count() == 1 || host.contains(":/") => {
            out.extend((!name.contains('/')).then_some(name));
        }
        _ if !host.contains('/') => out.push(host),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces() {
        assert_eq!(target_pieces("/mnt/backup/"), Vec::<&str>::new());
        assert_eq!(target_pieces("backup:/mnt/"), vec!["backup"]);
        assert_eq!(target_pieces("\0@api"), vec!["api"]);
        assert_eq!(target_pieces("\0@backup:/srv/"), vec!["backup"]);
        assert_eq!(target_pieces("ssh://me@build:22/x"), vec!["build"]);
        assert_eq!(target_pieces("name=redis"), vec!["name", "redis"]);
        assert_eq!(
            target_pieces("ControlPath=~/.ssh/cm-build"),
            vec!["ControlPath"]
        );
        assert_eq!(
            target_pieces("tail -f /var/log/api/app.log"),
            vec!["tail", "-f"]
        );
        assert_eq!(target_pieces("fd00:77::10"), vec!["fd00:77::10"]);
        assert_eq!(target_pieces("build"), vec!["build"]);
    }
}
