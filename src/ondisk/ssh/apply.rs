//! Reading the configuration's lines into the options, as ssh's `readconf.c` does: first
//! obtained value wins, `Host`/`Match` switch applicability, `Include` nests.

use super::super::Value;
use super::super::pattern::{self, ListMatch};
use super::super::read::Read;
use super::lex::{self, Line};
use super::{Applies, MAX_INCLUDE_DEPTH, Slot, Source, State, dest::percent};

impl State<'_, '_> {
    pub(super) fn set(&mut self, key: &str, line: Line, maybe: bool) {
        if self.options.contains_key(key) {
            return;
        }
        // `Match exec … HostName build`: the host may be build. The words such a block
        // gives the connection are kept, so a mesh name among them can be seen.
        if maybe && matches!(key, "hostname" | "proxy") {
            self.possible.extend(line.args.iter().cloned());
        }
        let slot = if maybe || self.poisoned {
            Slot::Unknown
        } else {
            Slot::Known(line)
        };
        self.options.insert(key.to_string(), slot);
    }

    /// `HostName` as obtained so far (`%h` is the destination), or the destination itself.
    pub(super) fn hostname(&self, destination: &str) -> Value {
        match self.options.get("hostname") {
            Some(Slot::Known(line)) => match line.args.first() {
                Some(name) => match percent(name, &[('h', Some(destination))]) {
                    (name, true) => Value::Known(name),
                    (_, false) => Value::Unknown,
                },
                None => Value::Unknown,
            },
            Some(Slot::Unknown) => Value::Unknown,
            None if self.poisoned => Value::Unknown,
            None => Value::Known(destination.to_string()),
        }
    }

    pub(super) fn read_sources(&mut self, sources: &[Source]) {
        for source in sources {
            match source {
                Source::Options(lines) => {
                    for line in lines {
                        self.text(line, true, 0, Applies::Yes);
                    }
                }
                Source::User(path) => self.file(path, true, 0, Applies::Yes),
                Source::System(path) => self.file(path, false, 0, Applies::Yes),
            }
        }
    }

    fn file(&mut self, path: &str, user: bool, depth: usize, outer: Applies) {
        match self.files.read(path) {
            Read::Text(text) => self.text(&text, user, depth, outer),
            Read::Absent => {}
            // What an unread file under a block that cannot apply sets changes nothing.
            Read::Unreadable => self.poisoned |= outer != Applies::No,
        }
    }

    fn text(&mut self, text: &str, user: bool, depth: usize, outer: Applies) {
        let mut applies = outer;
        for raw in text.lines() {
            let line = match lex::line(raw) {
                Ok(Some(line)) => line,
                Ok(None) => continue,
                Err(_) => {
                    // ssh refuses the whole configuration: nothing below can be trusted.
                    self.poisoned = true;
                    return;
                }
            };
            match line.keyword.as_str() {
                "host" => applies = outer.and(self.host_line(&line.args)),
                "match" => applies = outer.and(self.match_line(&line.args)),
                "include" => self.include(&line.args, user, depth, applies),
                _ if applies == Applies::No => {}
                "proxycommand" | "proxyjump" => self.set("proxy", line, applies == Applies::Maybe),
                _ => {
                    let key = line.keyword.clone();
                    self.set(&key, line, applies == Applies::Maybe);
                }
            }
        }
    }

    fn include(&mut self, args: &[String], user: bool, depth: usize, applies: Applies) {
        if depth + 1 > MAX_INCLUDE_DEPTH {
            // ssh stops with an error here (this also ends an Include cycle).
            self.poisoned = true;
            return;
        }
        for arg in args {
            // Tokens and `${VAR}` in the path need ssh's own state or environment.
            if arg.contains(['%', '$']) {
                self.poisoned |= applies != Applies::No;
                continue;
            }
            let path = if let Some(rest) = arg.strip_prefix("~/") {
                format!("{}/{rest}", self.context.home)
            } else if arg.starts_with('/') {
                arg.clone()
            } else if arg.starts_with('~') {
                // `~other/…` needs another user's passwd entry.
                self.poisoned |= applies != Applies::No;
                continue;
            } else if user {
                format!("{}/.ssh/{arg}", self.context.home)
            } else {
                format!("/etc/ssh/{arg}")
            };
            let Some(paths) = self.files.glob(&path) else {
                self.poisoned |= applies != Applies::No;
                continue;
            };
            for path in paths {
                self.file(&path, user, depth + 1, applies);
            }
        }
    }

    /// `Host` patterns: any positive match, and no negated one, against the host.
    fn host_line(&self, patterns: &[String]) -> Applies {
        let mut matched = false;
        for pattern in patterns {
            match pattern.strip_prefix('!') {
                Some(negated) if pattern::wildcard(negated, &self.host) => return Applies::No,
                Some(_) => {}
                None => matched |= pattern::wildcard(pattern, &self.host),
            }
        }
        Applies::from(matched)
    }

    /// `Match` criteria, all of which must hold; what only running something (or the
    /// network) could decide is `Maybe`.
    fn match_line(&mut self, args: &[String]) -> Applies {
        let mut result = Applies::Yes;
        let mut args = args.iter();
        if args.len() == 0 {
            self.poisoned = true;
            return Applies::Maybe;
        }
        while let Some(attribute) = args.next() {
            let lower = attribute.to_ascii_lowercase();
            let (negate, name) = match lower.strip_prefix('!') {
                Some(name) => (true, name),
                None => (false, lower.as_str()),
            };
            let criterion = match name {
                "all" => Applies::Yes,
                "canonical" | "final" => {
                    // Only a plain `final` asks for the second pass.
                    self.want_final |= name == "final" && !negate;
                    Applies::from(self.final_pass)
                }
                _ => {
                    // `host=pattern` is the same as `host pattern`.
                    let (name, arg) = match name.split_once('=') {
                        Some((name, _)) => (name, attribute.split_once('=').map(|(_, a)| a)),
                        None => (name, args.next().map(String::as_str)),
                    };
                    let Some(arg) = arg.filter(|a| !a.is_empty()) else {
                        self.poisoned = true;
                        return Applies::Maybe;
                    };
                    self.criterion(name, arg)
                }
            };
            let criterion = match (negate, criterion) {
                (true, Applies::Yes) => Applies::No,
                (true, Applies::No) => Applies::Yes,
                (_, criterion) => criterion,
            };
            result = result.and(criterion);
        }
        result
    }

    fn criterion(&mut self, name: &str, arg: &str) -> Applies {
        let subject = match name {
            "host" => self.hostname(&self.original).known().map(String::from),
            "originalhost" => Some(self.original.clone()),
            "user" => match self.options.get("user") {
                Some(Slot::Known(line)) => line.args.first().cloned(),
                Some(Slot::Unknown) => None,
                None => self.context.local_user.map(String::from),
            },
            "localuser" => self.context.local_user.map(String::from),
            // exec runs a command; the others need the network, the session or tags.
            "exec" | "tagged" | "command" | "localnetwork" | "version" | "sessiontype"
            | "address" | "localaddress" | "localport" | "rdomain" => None,
            _ => {
                self.poisoned = true;
                None
            }
        };
        let lower = matches!(name, "host" | "originalhost");
        match subject {
            Some(subject) => {
                Applies::from(pattern::list(arg, &subject, lower) == ListMatch::Matched)
            }
            None => Applies::Maybe,
        }
    }
}
