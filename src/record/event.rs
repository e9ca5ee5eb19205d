//! What one row records: its kind, the event, and where it happened (user, host, time).

use crate::rule::Rule;
use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Refusal,
    Override,
    OverrideAttempt,
    SessionStart,
    /// Rows that could not be written before this one (the record was missing or unwritable).
    Gap,
    /// Stands for the rows `audit prune` removed, carrying their chain's head hash.
    Checkpoint,
    /// A refusal in report-only mode: the command passed (decision 0060).
    WouldRefuse,
}

impl Kind {
    /// In the order the documentation, `audit --help` and its errors list them.
    pub const ALL: [Kind; 7] = [
        Kind::Refusal,
        Kind::WouldRefuse,
        Kind::Override,
        Kind::OverrideAttempt,
        Kind::SessionStart,
        Kind::Gap,
        Kind::Checkpoint,
    ];

    /// The stable name stored in the database and accepted by `audit --kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Refusal => "refusal",
            Kind::Override => "override",
            Kind::OverrideAttempt => "override-attempt",
            Kind::SessionStart => "session-start",
            Kind::Gap => "gap",
            Kind::Checkpoint => "checkpoint",
            Kind::WouldRefuse => "would-refuse",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no kind of row: what a corrupt record or `audit --kind` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKind(pub String);

impl fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kinds = Kind::ALL.map(Kind::as_str);
        write!(
            f,
            "unknown kind {:?}: expected one of {}",
            self.0,
            kinds.join(", ")
        )
    }
}

impl std::error::Error for UnknownKind {}

impl FromStr for Kind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Kind, UnknownKind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// A row's `rule`: none (a row no rule decided: a session's start, a gap, a checkpoint), one
/// of the guard's rules, or text no rule of this version spells. The guard writes only the
/// first two; the third is read back from a row another version (or a hand) wrote, and is
/// shown, hashed and forwarded exactly as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RowRule {
    #[default]
    None,
    Rule(Rule),
    Other(String),
}

impl RowRule {
    /// The column's text: empty, the rule's id, or the text as stored.
    pub fn as_str(&self) -> &str {
        match self {
            RowRule::None => "",
            RowRule::Rule(rule) => rule.id(),
            RowRule::Other(text) => text,
        }
    }

    /// The column's text, read back: `as_str` gives it again, byte for byte.
    pub fn stored(text: &str) -> RowRule {
        let mut rule = RowRule::None;
        rule.read(text);
        rule
    }

    /// `stored`, in the room this one has: a view decoding a million rows into one `Row`
    /// allocates only for a rule this version does not spell, and then once.
    pub(crate) fn read(&mut self, text: &str) {
        if text.is_empty() {
            *self = RowRule::None;
        } else if let Some(rule) = Rule::from_id(text) {
            *self = RowRule::Rule(rule);
        } else if let RowRule::Other(room) = self {
            room.clear();
            room.push_str(text);
        } else {
            *self = RowRule::Other(text.to_string());
        }
    }
}

impl From<Rule> for RowRule {
    fn from(rule: Rule) -> RowRule {
        RowRule::Rule(rule)
    }
}

impl fmt::Display for RowRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One recorded event, as the contract lists its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// UTC milliseconds since the Unix epoch.
    pub time_ms: i64,
    pub kind: Kind,
    pub agent: String,
    pub session_id: String,
    pub tool_use_id: String,
    pub cwd: String,
    pub user: String,
    pub host: String,
    /// The whole command, as the agent proposed it.
    pub command: String,
    pub rule: RowRule,
    pub target: String,
    /// The mesh tools the refusal named; empty when one must be created.
    pub tools: Vec<String>,
    /// The command shape that needs a tool (`docker inspect <container>`), independent of the
    /// target, so `missing` can count them.
    pub shape: String,
    /// The operator's override reason, for override kinds.
    pub reason: String,
    /// The override grant's scope terms as the operator signed them; empty when the grant
    /// covers the whole session or there is none.
    pub scope: String,
    /// The fingerprint of the key that signed the grant (`SHA256:…`), once it verified.
    pub signer: String,
    /// The grant's expiry (RFC 3339), once its message could be read.
    pub grant_expires: String,
}

impl Event {
    /// An event of `kind` happening now, by this process's user on this host; the caller fills in
    /// the rest.
    pub fn now(kind: Kind) -> Event {
        Event {
            time_ms: now_ms(),
            user: env_nonempty("USER")
                .or_else(|| env_nonempty("LOGNAME"))
                .or_else(user_from_uid)
                .unwrap_or_default(),
            host: host_name(),
            ..Event::empty(kind)
        }
    }

    /// An event of `kind` with every other field empty (time 0).
    pub(crate) fn empty(kind: Kind) -> Event {
        Event {
            time_ms: 0,
            kind,
            agent: String::new(),
            session_id: String::new(),
            tool_use_id: String::new(),
            cwd: String::new(),
            user: String::new(),
            host: String::new(),
            command: String::new(),
            rule: RowRule::None,
            target: String::new(),
            tools: Vec::new(),
            shape: String::new(),
            reason: String::new(),
            scope: String::new(),
            signer: String::new(),
            grant_expires: String::new(),
        }
    }
}

/// UTC milliseconds since the Unix epoch; 0 if the clock is before it.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

pub(crate) fn env_nonempty(name: &str) -> Option<String> {
    crate::io::var(name).ok().filter(|v| !v.is_empty())
}

/// The process's user when the environment does not say: its uid's name in
/// `/etc/passwd`, or `uid N`. The uid is one system call; the file is read only here, when
/// neither `USER` nor `LOGNAME` is set (not through NSS: the binary is static).
pub(crate) fn user_from_uid() -> Option<String> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() }.to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let name = passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        (fields.nth(1)? == uid).then(|| name.to_string())
    });
    Some(name.unwrap_or_else(|| format!("uid {uid}")))
}

/// The host's name as the kernel has it (`uname`: one system call, where reading
/// `/proc/sys/kernel/hostname` took three).
pub(crate) fn host_name() -> String {
    // SAFETY: `uname` fills the zeroed struct it is given; its fields are NUL-terminated.
    let node = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        (libc::uname(&mut name) == 0).then(|| {
            std::ffi::CStr::from_ptr(name.nodename.as_ptr())
                .to_string_lossy()
                .into_owned()
        })
    };
    node.map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| env_nonempty("HOSTNAME"))
        .unwrap_or_default()
}
