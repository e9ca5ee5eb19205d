//! Programs that give a file another name (a hard link): through that name the file can be
//! written later without being named (decision 0070). Linking a guard file is writing it;
//! a symbolic link is not (a write through one resolves to the guard file's own path).

use crate::decide::Guard;

impl Guard<'_> {
    /// The files `program` gives another name: `ln` (not `-s`), `link`, `cp -l`/`--link`,
    /// and the directory `rsync --link-dest` links from.
    pub(in crate::decide) fn hard_linked(&self, program: &str, args: &[String]) -> Vec<String> {
        match program {
            "ln" => linked_sources(args, 'S', "--suffix", |flags| {
                !flags.iter().any(|f| f == "s" || f == "--symbolic")
            }),
            "cp" => linked_sources(args, 'S', "--suffix", |flags| {
                flags.iter().any(|f| f == "l" || f == "--link")
            }),
            "link" => args
                .iter()
                .filter(|a| !a.starts_with('-'))
                .take(1)
                .cloned()
                .collect(),
            "rsync" => link_dest(args),
            _ => Vec::new(),
        }
    }
}

/// The sources of `ln`/`cp` when `linking` holds for its flags (each short flag as a
/// one-letter string, each long option as written, without a value): every operand with
/// `-t DIR`, one alone, else all but the last.
fn linked_sources(
    args: &[String],
    short_value: char,
    long_value: &str,
    linking: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    let mut operands: Vec<String> = Vec::new();
    let mut into_dir = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            operands.extend(words.by_ref().cloned());
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            let name = format!("--{name}");
            if name == "--target-directory" {
                into_dir = true;
            }
            if !inline && (name == "--target-directory" || name == long_value) {
                words.next();
            }
            flags.push(name);
            continue;
        }
        match word.strip_prefix('-').filter(|s| !s.is_empty()) {
            Some(cluster) => {
                for (i, c) in cluster.char_indices() {
                    flags.push(c.to_string());
                    if c == 't' || c == short_value {
                        into_dir |= c == 't';
                        if i + c.len_utf8() == cluster.len() {
                            words.next();
                        }
                        break;
                    }
                }
            }
            None => operands.push(word.clone()),
        }
    }
    if !linking(&flags) {
        return Vec::new();
    }
    if !into_dir && operands.len() > 1 {
        operands.pop();
    }
    operands
}

/// `rsync --link-dest=DIR` (or `--link-dest DIR`): DIR's files get names in the destination.
fn link_dest(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if let Some(dir) = word.strip_prefix("--link-dest=") {
            out.push(dir.to_string());
        } else if word == "--link-dest" {
            out.extend(words.next().cloned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_sources_of_a_hard_link_and_not_of_a_symbolic_one() {
        let ln = |s: &str| {
            linked_sources(&words(s), 'S', "--suffix", |f| {
                !f.iter().any(|f| f == "s" || f == "--symbolic")
            })
        };
        assert_eq!(ln("a /tmp/h"), ["a"]);
        assert_eq!(ln("-f a b /tmp/dir"), ["a", "b"]);
        assert_eq!(ln("a"), ["a"]);
        assert_eq!(ln("-t /tmp a b"), ["a", "b"]);
        assert_eq!(ln("--target-directory=/tmp a"), ["a"]);
        assert_eq!(ln("-S .s a b"), ["a"], "a suffix holding an s is no -s");
        assert!(ln("-sf a b").is_empty());
        assert!(ln("--symbolic a b").is_empty());
        assert_eq!(ln("-- -s b"), ["-s"]);
        let cp = |s: &str| {
            linked_sources(&words(s), 'S', "--suffix", |f| {
                f.iter().any(|f| f == "l" || f == "--link")
            })
        };
        assert_eq!(cp("-al a /tmp/b"), ["a"]);
        assert!(cp("-a a /tmp/b").is_empty());
        assert!(cp("--reflink a b").is_empty());
        assert_eq!(link_dest(&words("-a --link-dest=/x src/ dst/")), ["/x"]);
    }
}
