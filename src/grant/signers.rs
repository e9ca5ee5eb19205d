//! `allowed_signers`, in ssh-keygen's ALLOWED SIGNERS format: who may sign an override
//! grant. `principals [options] keytype base64-key [comment]` a line; `#` comments and
//! blank lines skipped. Options: `namespaces="…"`, `valid-after="…"`, `valid-before="…"`;
//! `cert-authority` is understood and refused (a grant is signed by a plain key).

use ssh_key::PublicKey;

/// One line that names a key.
#[derive(Debug, Clone)]
pub struct Signer {
    /// The line number, from 1.
    pub line: usize,
    pub principals: String,
    pub key: PublicKey,
    /// The line's `namespaces=` pattern list, when it has one.
    pub namespaces: Option<String>,
    pub valid_after_ms: Option<i64>,
    pub valid_before_ms: Option<i64>,
    /// Why the line cannot allow a grant though it names a key (`cert-authority`).
    pub unsupported: Option<NotAllowed>,
}

/// The file read: its signers, and the lines that name no usable key (for `doctor`).
#[derive(Debug, Clone, Default)]
pub struct AllowedSigners {
    pub signers: Vec<Signer>,
    pub errors: Vec<LineError>,
}

/// A line of `allowed_signers` that names no usable key, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// From 1.
    pub line: usize,
    pub why: BadLine,
}

/// Why a line of `allowed_signers` cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadLine {
    NoPrincipalsOrKey,
    NoKey,
    /// The key of this type cannot be read: `ssh-key`'s words.
    Key {
        kind: String,
        cause: String,
    },
    UnsupportedOption(String),
    /// A `valid-after`/`valid-before` that is not `YYYYMMDD[HHMM[SS]]Z`.
    Time(String),
}

/// Why a key that signed is not allowed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotAllowed {
    CertAuthority,
    Namespace(String),
    NotYetValid,
    NoLongerValid,
    NotListed,
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.why)
    }
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadLine::NoPrincipalsOrKey => {
                f.write_str("expected `principals [options] keytype key`")
            }
            BadLine::NoKey => f.write_str("no key type and key"),
            BadLine::Key { kind, cause } => write!(f, "the {kind} key cannot be read ({cause})"),
            BadLine::UnsupportedOption(option) => write!(f, "unsupported option `{option}`"),
            BadLine::Time(text) => write!(
                f,
                "`{text}` is not a time YYYYMMDD[HHMM[SS]]Z (UTC, with the Z)"
            ),
        }
    }
}

impl std::fmt::Display for NotAllowed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotAllowed::CertAuthority => f.write_str(
                "its allowed_signers line is a cert-authority, which mesh-guard does not support: list the operator's own key",
            ),
            NotAllowed::Namespace(namespace) => write!(
                f,
                "its allowed_signers line does not allow the namespace {namespace}"
            ),
            NotAllowed::NotYetValid => {
                f.write_str("its allowed_signers line is not valid yet (valid-after)")
            }
            NotAllowed::NoLongerValid => {
                f.write_str("its allowed_signers line is no longer valid (valid-before)")
            }
            NotAllowed::NotListed => f.write_str("its key is not in allowed_signers"),
        }
    }
}

impl std::error::Error for LineError {}
impl std::error::Error for NotAllowed {}

impl AllowedSigners {
    pub fn parse(text: &str) -> AllowedSigners {
        let mut file = AllowedSigners::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(n + 1, line) {
                Ok(signer) => file.signers.push(signer),
                Err(why) => file.errors.push(LineError { line: n + 1, why }),
            }
        }
        file
    }

    /// Whether `key` may sign in `namespace` at `now_ms`: the first line naming the key that
    /// allows it, or why none does.
    pub fn allows(
        &self,
        key: &ssh_key::public::KeyData,
        namespace: &str,
        now_ms: i64,
    ) -> Result<&Signer, NotAllowed> {
        let mut why = None;
        for signer in self.signers.iter().filter(|s| s.key.key_data() == key) {
            let refused = if let Some(unsupported) = &signer.unsupported {
                Some(unsupported.clone())
            } else if signer
                .namespaces
                .as_deref()
                .is_some_and(|list| !pattern_list_matches(list, namespace))
            {
                Some(NotAllowed::Namespace(namespace.to_string()))
            } else if signer.valid_after_ms.is_some_and(|t| now_ms < t) {
                Some(NotAllowed::NotYetValid)
            } else if signer.valid_before_ms.is_some_and(|t| now_ms >= t) {
                Some(NotAllowed::NoLongerValid)
            } else {
                None
            };
            match refused {
                None => return Ok(signer),
                Some(r) => why = why.or(Some(r)),
            }
        }
        Err(why.unwrap_or(NotAllowed::NotListed))
    }
}

fn parse_line(line: usize, text: &str) -> Result<Signer, BadLine> {
    let (principals, rest) = word(text);
    if principals.is_empty() || rest.is_empty() {
        return Err(BadLine::NoPrincipalsOrKey);
    }
    let (second, after) = word(rest);
    let (options, key_text) = if is_key_type(second) {
        ("", rest)
    } else {
        (second, after)
    };
    let (kind, after) = word(key_text);
    let (base64, _comment) = word(after);
    if !is_key_type(kind) || base64.is_empty() {
        return Err(BadLine::NoKey);
    }
    let key = PublicKey::from_openssh(&format!("{kind} {base64}")).map_err(|e| BadLine::Key {
        kind: kind.to_string(),
        cause: e.to_string(),
    })?;
    let mut signer = Signer {
        line,
        principals: unquote(principals).to_string(),
        key,
        namespaces: None,
        valid_after_ms: None,
        valid_before_ms: None,
        unsupported: None,
    };
    for option in split_options(options) {
        let (name, value) = match option.split_once('=') {
            Some((name, value)) => (name.to_ascii_lowercase(), Some(unquote(value))),
            None => (option.to_ascii_lowercase(), None),
        };
        match (name.as_str(), value) {
            ("cert-authority", None) => {
                signer.unsupported = Some(NotAllowed::CertAuthority);
            }
            ("namespaces", Some(v)) => signer.namespaces = Some(v.to_string()),
            ("valid-after", Some(v)) => signer.valid_after_ms = Some(timestamp(v)?),
            ("valid-before", Some(v)) => signer.valid_before_ms = Some(timestamp(v)?),
            _ => return Err(BadLine::UnsupportedOption(option.to_string())),
        }
    }
    Ok(signer)
}

/// The first word of `text` (double quotes keep spaces in it) and the rest, trimmed.
fn word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    let mut quoted = false;
    for (at, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => return (&text[..at], text[at..].trim_start()),
            _ => {}
        }
    }
    (text, "")
}

fn unquote(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
}

/// The options, split at commas outside double quotes.
fn split_options(options: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (at, c) in options.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&options[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&options[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

fn is_key_type(word: &str) -> bool {
    ["ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"]
        .iter()
        .any(|p| word.starts_with(p))
}

/// ssh-keygen's `YYYYMMDD[HHMM[SS]]Z`. A time without `Z` is local to the signing host
/// there; here it is refused rather than guessed.
fn timestamp(text: &str) -> Result<i64, BadLine> {
    let bad = || BadLine::Time(text.to_string());
    let digits = text.strip_suffix(['Z', 'z']).ok_or_else(bad)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 14].contains(&digits.len()) {
        return Err(bad());
    }
    let part = |from: usize, to: usize| digits.get(from..to).unwrap_or("00");
    let rfc = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &digits[..4],
        &digits[4..6],
        &digits[6..8],
        part(8, 10),
        part(10, 12),
        part(12, 14)
    );
    crate::time::rfc3339_time_ms(&rfc).ok_or_else(bad)
}

/// OpenSSH's pattern lists: comma-separated globs (`*`, `?`); a match of a `!pattern`
/// denies whatever else matches.
fn pattern_list_matches(list: &str, name: &str) -> bool {
    let mut matched = false;
    for pattern in list.split(',').map(str::trim) {
        match pattern.strip_prefix('!') {
            Some(negated) if glob(negated.as_bytes(), name.as_bytes()) => return false,
            Some(_) => {}
            None => matched |= glob(pattern.as_bytes(), name.as_bytes()),
        }
    }
    matched
}

/// `*` and `?` globbing, iterative: a `*` retried one name byte further on a mismatch, so the
/// work is bounded by the lengths' product and no pattern in the file deepens the stack.
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((at, from)) => {
                    p = at + 1;
                    n = from + 1;
                    star = Some((at, from + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtsMgGc8q0LSHpAJ5hZHn76IyG6acytR/UHfWX6XICx";

    #[test]
    fn lines_with_and_without_options() {
        let file = AllowedSigners::parse(&format!(
            "# operators\n\nalice@mesh {KEY} laptop\n\"bob,carol\" namespaces=\"git,mesh-guard-*\",valid-after=\"20260101Z\",valid-before=\"202701011200Z\" {KEY}\nroot cert-authority {KEY}\nbroken\neve no-such-option {KEY}\nmallory valid-after=\"20260101\" {KEY}\n"
        ));
        assert_eq!(file.signers.len(), 3, "{file:?}");
        assert_eq!(file.errors.len(), 3, "{:?}", file.errors);
        assert!(file.errors[1].to_string().contains("unsupported option"));
        assert!(file.errors[2].to_string().contains("with the Z"));
        let bob = &file.signers[1];
        assert_eq!(bob.principals, "bob,carol");
        assert_eq!(bob.namespaces.as_deref(), Some("git,mesh-guard-*"));
        assert_eq!(bob.valid_after_ms, Some(1_767_225_600_000));
        assert_eq!(bob.valid_before_ms, Some(1_798_804_800_000));
        assert!(file.signers[2].unsupported.is_some());
    }

    #[test]
    fn a_key_is_allowed_by_its_first_line_that_allows_it() {
        let key = PublicKey::from_openssh(KEY).unwrap();
        let data = key.key_data();
        let only_git = AllowedSigners::parse(&format!("a namespaces=\"git\" {KEY}"));
        assert!(only_git.allows(data, "mesh-guard-override", 0).is_err());
        let denied = AllowedSigners::parse(&format!("a namespaces=\"*,!mesh-guard-*\" {KEY}"));
        assert!(denied.allows(data, "mesh-guard-override", 0).is_err());
        let later = AllowedSigners::parse(&format!(
            "a valid-before=\"20260101Z\" {KEY}\nb namespaces=\"mesh-guard-override\" {KEY}"
        ));
        let now = 1_800_000_000_000;
        assert_eq!(
            later.allows(data, "mesh-guard-override", now).unwrap().line,
            2
        );
        let expired = AllowedSigners::parse(&format!("a valid-before=\"20260101Z\" {KEY}"));
        assert!(
            expired
                .allows(data, "mesh-guard-override", now)
                .unwrap_err()
                .to_string()
                .contains("valid-before")
        );
        let ca = AllowedSigners::parse(&format!("a cert-authority {KEY}"));
        assert!(
            ca.allows(data, "mesh-guard-override", now)
                .unwrap_err()
                .to_string()
                .contains("cert-authority")
        );
        assert!(
            AllowedSigners::default()
                .allows(data, "mesh-guard-override", now)
                .unwrap_err()
                .to_string()
                .contains("not in allowed_signers")
        );
    }

    #[test]
    fn a_hostile_namespace_pattern_is_matched_in_bounded_work() {
        let key = PublicKey::from_openssh(KEY).unwrap();
        let deep =
            AllowedSigners::parse(&format!("a namespaces=\"{}x\" {KEY}", "*".repeat(500_000)));
        assert!(
            deep.allows(key.key_data(), "mesh-guard-override", 0)
                .is_err()
        );
        let wide = AllowedSigners::parse(&format!("a namespaces=\"{}x\" {KEY}", "*?".repeat(40)));
        assert!(
            wide.allows(key.key_data(), "mesh-guard-override", 0)
                .is_err()
        );
        for (pattern, name, matches) in [
            ("mesh-guard-*", "mesh-guard-override", true),
            ("*-override", "mesh-guard-override", true),
            ("m?sh*over*", "mesh-guard-override", true),
            ("*", "", true),
            ("?", "", false),
            ("mesh", "mesh-guard-override", false),
            ("*guard", "mesh-guard-override", false),
        ] {
            assert_eq!(
                glob(pattern.as_bytes(), name.as_bytes()),
                matches,
                "{pattern}"
            );
        }
    }
}
