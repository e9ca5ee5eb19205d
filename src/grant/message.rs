//! The signed message of a grant: seven lines, in this order, each ending in a newline.
//!
//! ```text
//! mesh-guard override grant 1
//! reason: incident 4711, read atlas's journal
//! scope: machine:atlas rule:remote-access
//! host: build-7
//! issued: 2026-12-06T00:50:00Z
//! expires: 2026-12-06T02:50:00Z
//! nonce: 5f0c2a9e81d4b7c3
//! ```
//!
//! Read strictly: the signature covers these bytes, so there is one way to write each.

const HEADER: &str = "mesh-guard override grant 1";
/// The longest reason: it is shown to the operator and kept in the record.
const MAX_REASON: usize = 500;

/// What is wrong with a grant's message: said after "the grant is malformed: ".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageError {
    NoFinalNewline,
    NotSevenLines,
    NotVersion1,
    /// The line of this field is missing (or out of its place).
    Missing(&'static str),
    Reason,
    ControlCharacter,
    Scope(crate::scope::ScopeError),
    Host,
    /// The `issued` or `expires` time is not written as `render` writes it.
    Time(&'static str),
    ExpiresBeforeIssued,
    TooLong,
    Nonce,
}

impl std::fmt::Display for MessageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MessageError::NoFinalNewline => f.write_str("its message does not end in a newline"),
            MessageError::NotSevenLines => {
                f.write_str("its message is not the seven lines of a grant")
            }
            MessageError::NotVersion1 => {
                f.write_str("its message is not a mesh-guard grant of version 1")
            }
            MessageError::Missing(name) => write!(f, "its `{name}` line is missing"),
            MessageError::Reason => write!(
                f,
                "its reason is empty or longer than {MAX_REASON} characters"
            ),
            MessageError::ControlCharacter => f.write_str("it holds a control character"),
            MessageError::Scope(e) => write!(f, "its scope: {e}"),
            MessageError::Host => f.write_str("its host is empty or holds a space"),
            MessageError::Time(name) => {
                write!(f, "its {name} time is not YYYY-MM-DDTHH:MM:SSZ")
            }
            MessageError::ExpiresBeforeIssued => f.write_str("it expires before it is issued"),
            MessageError::TooLong => f.write_str("it is valid for more than 24 hours"),
            MessageError::Nonce => f.write_str("its nonce is not 16 to 64 hex digits"),
        }
    }
}

impl std::error::Error for MessageError {}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub reason: String,
    /// Scope terms (`machine:`, `module:`, `rule:`), space-separated; empty for the whole
    /// session.
    pub scope: String,
    pub host: String,
    pub issued_ms: i64,
    pub expires_ms: i64,
    /// Makes each grant's bytes its own.
    pub nonce: String,
}

impl Grant {
    /// The message as it is signed.
    pub fn render(&self) -> String {
        format!(
            "{HEADER}\nreason: {}\nscope: {}\nhost: {}\nissued: {}\nexpires: {}\nnonce: {}\n",
            self.reason,
            self.scope,
            self.host,
            crate::time::format_time(self.issued_ms, false),
            crate::time::format_time(self.expires_ms, false),
            self.nonce
        )
    }

    /// Checks what `render` would write, so that a grant is never signed unreadable.
    pub fn check(&self) -> Result<(), MessageError> {
        Grant::parse(&self.render()).map(drop)
    }

    pub fn parse(text: &str) -> Result<Grant, MessageError> {
        use MessageError as E;
        let body = text.strip_suffix('\n').ok_or(E::NoFinalNewline)?;
        let lines: Vec<&str> = body.split('\n').collect();
        let [header, reason, scope, host, issued, expires, nonce] = lines[..] else {
            return Err(E::NotSevenLines);
        };
        if header != HEADER {
            return Err(E::NotVersion1);
        }
        fn field(line: &str, name: &'static str) -> Result<String, MessageError> {
            line.strip_prefix(name)
                .and_then(|l| l.strip_prefix(": "))
                .map(str::to_string)
                .ok_or(MessageError::Missing(name))
        }
        let reason = field(reason, "reason")?;
        if reason.trim().is_empty() || reason.chars().count() > MAX_REASON {
            return Err(E::Reason);
        }
        if reason.chars().chain(host.chars()).any(char::is_control) {
            return Err(E::ControlCharacter);
        }
        let scope = field(scope, "scope")?;
        if !scope.is_empty() {
            crate::scope::parse(&scope).map_err(E::Scope)?;
        }
        let host = field(host, "host")?;
        if host.is_empty() || host.contains(char::is_whitespace) {
            return Err(E::Host);
        }
        let time = |line: &str, name: &'static str| {
            let value = field(line, name)?;
            crate::time::rfc3339_time_ms(&value)
                .filter(|ms| crate::time::format_time(*ms, false) == value)
                .ok_or(E::Time(name))
        };
        let issued_ms = time(issued, "issued")?;
        let expires_ms = time(expires, "expires")?;
        if expires_ms <= issued_ms {
            return Err(E::ExpiresBeforeIssued);
        }
        if expires_ms - issued_ms > super::MAX_LIFETIME_MS {
            return Err(E::TooLong);
        }
        let nonce = field(nonce, "nonce")?;
        if !(16..=64).contains(&nonce.len()) || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(E::Nonce);
        }
        Ok(Grant {
            reason,
            scope,
            host,
            issued_ms,
            expires_ms,
            nonce,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant() -> Grant {
        Grant {
            reason: "incident 4711".into(),
            scope: "machine:atlas rule:remote-access".into(),
            host: "build-7".into(),
            issued_ms: 1_796_000_000_000,
            expires_ms: 1_796_007_200_000,
            nonce: "5f0c2a9e81d4b7c3".into(),
        }
    }

    #[test]
    fn a_rendered_grant_reads_back_and_nothing_else_does() {
        let g = grant();
        assert_eq!(Grant::parse(&g.render()).unwrap(), g);
        let text = g.render();
        for (from, to) in [
            ("reason: incident 4711", "reason: "),
            ("scope: machine:atlas", "scope: host:atlas"),
            ("host: build-7", "host: build 7"),
            ("issued: 2026", "issued: 2025-13"),
            ("expires: 2026-11-30T02", "expires: 2026-11-29T02"),
            ("nonce: 5f0c", "nonce: zz"),
            ("grant 1\n", "grant 2\n"),
            ("\nnonce", "\nextra: x\nnonce"),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            assert!(Grant::parse(&bad).is_err(), "{bad}");
        }
        assert!(Grant::parse(text.trim_end()).is_err());
        let mut long = grant();
        long.expires_ms = long.issued_ms + super::super::MAX_LIFETIME_MS + 1000;
        assert!(long.check().unwrap_err().to_string().contains("24 hours"));
        let mut whole = grant();
        whole.scope.clear();
        assert!(whole.check().is_ok());
    }
}
