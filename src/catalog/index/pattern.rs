//! Names by scheme: `[[machine]] pattern` regexes (anchored, compiled only when a host is no
//! exact name, so the flat cost of a lookup stays a hash probe), and systemd-style globs in a
//! command (`journalctl -u 'redis*'`) matched against the catalog's unit and container names.

use regex::{Regex, RegexBuilder};
use std::sync::OnceLock;

/// A compiled pattern may not grow past this: a catalog cannot make lookups slow.
const SIZE_LIMIT: usize = 1 << 20;

/// The machine patterns of a catalog: their sources kept (they are what the cache stores and
/// what two indexes compare), their compiled forms built on first use.
#[derive(Clone, Default)]
pub(crate) struct Patterns {
    /// (anchored regex source, the machine's catalog name).
    pub(crate) list: Vec<(String, String)>,
    compiled: OnceLock<Vec<Option<Regex>>>,
}

impl std::fmt::Debug for Patterns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.list.iter()).finish()
    }
}

impl Patterns {
    pub(crate) fn new(list: Vec<(String, String)>) -> Patterns {
        Patterns {
            list,
            compiled: OnceLock::new(),
        }
    }

    pub(crate) fn push(&mut self, source: String, machine: String) {
        self.list.push((source, machine));
        self.compiled = OnceLock::new();
    }

    /// Whether a normalized host name is one of the schemes' names.
    pub(crate) fn matches(&self, host: &str) -> bool {
        self.matching(host).next().is_some()
    }

    /// The catalog names of the machines whose scheme a normalized host name matches.
    pub(crate) fn matching<'a>(&'a self, host: &'a str) -> impl Iterator<Item = &'a str> {
        let compiled = self.compiled.get_or_init(|| {
            self.list
                .iter()
                .map(|(source, _)| compile(source).ok())
                .collect()
        });
        // A pattern that no longer compiles (a damaged cache) matches everything: the
        // decision fails closed on a name it cannot rule out.
        compiled
            .iter()
            .zip(&self.list)
            .filter(move |(re, _)| re.as_ref().is_none_or(|re| re.is_match(host)))
            .map(|(_, (_, machine))| machine.as_str())
    }
}

/// A catalog pattern as the guard runs it: anchored at both ends, case-insensitive (host
/// names compare so), bounded in size.
pub(crate) fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&format!("^(?:{pattern})$"))
        .case_insensitive(true)
        .size_limit(SIZE_LIMIT)
        .build()
}

/// Whether a word is a glob (`*`, `?`, `[…]`) rather than a name.
pub fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// The first of `names` the glob matches; a unit's key without a suffix is also tried with
/// `.service` (systemd matches globs against whole unit names).
pub(crate) fn first_glob_match(glob: &str, names: &[String], units: bool) -> Option<String> {
    let re = glob_regex(glob)?;
    names
        .iter()
        .find(|name| {
            re.is_match(name)
                || (units && !name.contains('.') && re.is_match(&format!("{name}.service")))
        })
        .cloned()
}

/// fnmatch(3) as systemd and docker use it: `*`, `?`, `[…]` (`[!…]` negated), `\x` literal.
fn glob_regex(glob: &str) -> Option<Regex> {
    let mut out = String::from("^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                let mut class = String::from("[");
                if chars.peek() == Some(&'!') || chars.peek() == Some(&'^') {
                    chars.next();
                    class.push('^');
                }
                let mut closed = false;
                let mut first = true;
                for k in chars.by_ref() {
                    if k == ']' && !first {
                        closed = true;
                        break;
                    }
                    first = false;
                    if matches!(k, '\\' | '[' | ']' | '&' | '~') {
                        class.push('\\');
                    }
                    class.push(k);
                }
                if !closed {
                    // An unclosed `[` is a literal bracket, as fnmatch reads it.
                    out.push_str(&regex::escape("["));
                    out.push_str(&regex::escape(&class[1..]));
                    continue;
                }
                class.push(']');
                out.push_str(&class);
            }
            '\\' => {
                if let Some(k) = chars.next() {
                    out.push_str(&regex::escape(&k.to_string()));
                }
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out.push('$');
    RegexBuilder::new(&out).size_limit(SIZE_LIMIT).build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn patterns_are_anchored_and_lazy() {
        let p = Patterns::new(vec![("node-[0-9]{4}".into(), "nodes".into())]);
        assert!(p.compiled.get().is_none());
        assert!(p.matches("node-0417"));
        assert!(!p.matches("node-42"));
        assert!(!p.matches("xnode-0001"));
        assert!(!p.matches("node-0417.example.com"));
        assert!(p.compiled.get().is_some());
    }

    #[test]
    fn a_pattern_that_does_not_compile_matches_everything() {
        let p = Patterns::new(vec![("node-[".into(), "nodes".into())]);
        assert!(p.matches("anything"));
    }

    #[test]
    fn globs() {
        let units = names(&["certbot.timer", "prometheus", "redis", "redis-sentinel"]);
        assert_eq!(
            first_glob_match("redis*", &units, true).as_deref(),
            Some("redis")
        );
        assert_eq!(
            first_glob_match("*.timer", &units, true).as_deref(),
            Some("certbot.timer")
        );
        assert_eq!(
            first_glob_match("*.service", &units, true).as_deref(),
            Some("prometheus")
        );
        assert_eq!(
            first_glob_match("prom?theus", &units, true).as_deref(),
            Some("prometheus")
        );
        assert_eq!(
            first_glob_match("[pq]rom*", &units, true).as_deref(),
            Some("prometheus")
        );
        assert_eq!(
            first_glob_match("[!p]edis", &units, true).as_deref(),
            Some("redis")
        );
        assert_eq!(first_glob_match("cups*", &units, true), None);
        assert_eq!(first_glob_match("redis.*", &units, false), None);
        assert_eq!(first_glob_match("re[dis", &units, true), None);
    }
}
