//! ssh's pattern matching (`ssh_config(5)` PATTERNS): `*` and `?` wildcards, `!` negation,
//! comma-separated lists. Also serves the glob of `Include`, whose wildcards are the same.

/// Whether `subject` matches `pattern` as a whole; `*` matches any run, `?` one character.
pub fn wildcard(pattern: &str, subject: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let subject: Vec<char> = subject.chars().collect();
    // Iterative with one backtrack point: linear in practice, no recursion depth to bound.
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < subject.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == subject[s]) {
            p += 1;
            s += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, s));
            p += 1;
        } else if let Some((star_p, star_s)) = star {
            p = star_p + 1;
            s = star_s + 1;
            star = Some((star_p, star_s + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// How a list of patterns met a subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListMatch {
    Matched,
    /// A `!pattern` matched: the whole list fails, whatever else matched.
    Negated,
    NoMatch,
}

/// ssh's `match_pattern_list`: the patterns are comma-separated; `lower` compares both sides
/// in lower case (host names), as ssh does for `Match host`.
pub fn list(patterns: &str, subject: &str, lower: bool) -> ListMatch {
    let subject = if lower {
        subject.to_lowercase()
    } else {
        subject.to_string()
    };
    let mut matched = false;
    for pattern in patterns.split(',').filter(|p| !p.is_empty()) {
        let (negated, pattern) = match pattern.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, pattern),
        };
        let pattern = if lower {
            pattern.to_lowercase()
        } else {
            pattern.to_string()
        };
        if wildcard(&pattern, &subject) {
            if negated {
                return ListMatch::Negated;
            }
            matched = true;
        }
    }
    if matched {
        ListMatch::Matched
    } else {
        ListMatch::NoMatch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard("*", ""));
        assert!(wildcard("prod-*", "prod-db"));
        assert!(!wildcard("prod-*", "staging-db"));
        assert!(wildcard("node-0?", "node-01"));
        assert!(!wildcard("node-0?", "node-012"));
        assert!(wildcard("*.grid.*", "a.grid.internal"));
        assert!(wildcard("a*b*c", "aXbYbZc"));
        assert!(!wildcard("a*b*c", "aXbYbZ"));
        assert!(wildcard("fd00:77::*", "fd00:77::15"));
    }

    #[test]
    fn lists_and_negation() {
        assert_eq!(list("a,b", "b", false), ListMatch::Matched);
        assert_eq!(list("*,!b", "b", false), ListMatch::Negated);
        assert_eq!(list("!b,*", "b", false), ListMatch::Negated);
        assert_eq!(list("!b", "c", false), ListMatch::NoMatch);
        assert_eq!(list("DB", "db", true), ListMatch::Matched);
        assert_eq!(list("DB", "db", false), ListMatch::NoMatch);
    }
}
