//! Path patterns: a guard file's pattern matched against a written path, globs expanded
//! (bounded), paths made lexical.

use crate::shell::UNKNOWN;
use std::path::{Component, Path, PathBuf};

/// A user's home directory from the password file; none when the user is not there.
pub(crate) fn home_of(user: &str) -> Option<PathBuf> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() >= 6 && fields[0] == user).then(|| PathBuf::from(fields[5]))
    })
}

pub(crate) fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// At most this many paths are kept at each step of a glob's expansion.
pub(crate) const MAX_GLOB_MATCHES: usize = 256;

/// A glob expanded against the file system as bash would, one component at a time.
pub(crate) fn expand_glob(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::new()];
    for part in pattern.components() {
        let text = part.as_os_str().to_string_lossy();
        if !has_glob(&text) {
            found.iter_mut().for_each(|p| p.push(part));
            continue;
        }
        let mut next = Vec::new();
        for dir in &found {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                // As bash: a leading dot is matched only by a pattern that starts with one.
                if (!name.starts_with('.') || text.starts_with('.')) && matches(&text, &name) {
                    next.push(dir.join(&name));
                }
            }
        }
        // Bounded: `/*/*/*/*` must not walk the whole disk. The guard's paths were already
        // matched against the pattern itself; this only follows links a glob finds.
        next.truncate(MAX_GLOB_MATCHES);
        found = next;
    }
    found
}

/// Shell pattern matching: `*` and `?` within one path component, `[…]` a class, and
/// [`UNKNOWN`] any text at all (a value that could hold slashes).
pub fn matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Positions reachable in the text after each pattern prefix (no backtracking blow-up).
    let mut reach = vec![false; t.len() + 1];
    reach[0] = true;
    let mut i = 0;
    while i < p.len() {
        let mut next = vec![false; t.len() + 1];
        let mut width = 1;
        match p[i] {
            c if c == UNKNOWN || c == '*' => {
                let crosses = c == UNKNOWN;
                for j in 0..=t.len() {
                    if reach[j] || (j > 0 && next[j - 1] && (crosses || t[j - 1] != '/')) {
                        next[j] = true;
                    }
                }
            }
            '?' => (0..t.len()).for_each(|j| next[j + 1] = reach[j] && t[j] != '/'),
            '[' => match p[i + 1..].iter().skip(1).position(|&c| c == ']') {
                Some(end) => {
                    let class = &p[i + 1..i + 2 + end];
                    width = class.len() + 2;
                    let (negate, class) = match class.first() {
                        Some('!' | '^') => (true, &class[1..]),
                        _ => (false, class),
                    };
                    let in_class = |c: char| {
                        let mut k = 0;
                        while k < class.len() {
                            if k + 2 < class.len() && class[k + 1] == '-' {
                                if class[k] <= c && c <= class[k + 2] {
                                    return true;
                                }
                                k += 3;
                            } else {
                                if class[k] == c {
                                    return true;
                                }
                                k += 1;
                            }
                        }
                        false
                    };
                    (0..t.len()).for_each(|j| {
                        next[j + 1] = reach[j] && t[j] != '/' && in_class(t[j]) != negate
                    });
                }
                None => (0..t.len()).for_each(|j| next[j + 1] = reach[j] && t[j] == '['),
            },
            c => (0..t.len()).for_each(|j| next[j + 1] = reach[j] && t[j] == c),
        }
        reach = next;
        i += width;
    }
    reach[t.len()]
}

/// `.` and `..` taken out of a path without the file system.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
