//! Each recorded row, copied to the system log as one structured event: the copy the agent
//! cannot erase, and what the fleet's log pipeline reads.
//!
//! Written here rather than taken from a crate (docs/decisions/0012-system-log-forwarding.md):
//! journald's native datagram, RFC 5424 with structured data, and RFC 6587 octet counting are a
//! few lines each, and the hook starts on every command.

mod format;
use format::*;

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Row;

/// The variable that chooses where rows are forwarded: `none`, `journald`, `unix:PATH`,
/// `udp://host:port` or `tcp://host:port`. For the operator's own commands (`audit prune`'s
/// checkpoint) it wins over the catalog's `[record] syslog`; a hook never reads it.
pub const SYSLOG_VAR: &str = "MESH_GUARD_SYSLOG";

/// How long a TCP connect or write may take: forwarding never holds a decision for long.
pub const SEND_TIMEOUT: Duration = Duration::from_millis(150);

/// journald's native socket; where it exists, journald runs.
const JOURNALD_SOCKET: &str = "/run/systemd/journal/socket";
const DEV_LOG: &str = "/dev/log";

/// The structured-data id of the RFC 5424 events. 32473 is the enterprise number RFC 5612
/// reserves for documentation; an operator's own parsers key on the whole id.
pub const SD_ID: &str = "mesh-guard@32473";

/// Where forwarded rows go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    None,
    /// journald's native protocol on its socket.
    Journald(PathBuf),
    /// RFC 5424 datagrams to a local socket (`/dev/log`, or a relay's).
    Unix(PathBuf),
    Udp(String),
    /// RFC 5424 with octet-counted framing (RFC 6587).
    Tcp(String),
}

impl Target {
    /// Parses a configured value; `None` for anything not understood.
    pub fn parse(value: &str) -> Option<Target> {
        let v = value.trim();
        if v.is_empty() {
            return None;
        }
        if v == "none" {
            return Some(Target::None);
        }
        if v == "journald" {
            return Some(Target::Journald(PathBuf::from(JOURNALD_SOCKET)));
        }
        if let Some(p) = v.strip_prefix("unix:").filter(|p| !p.is_empty()) {
            return Some(Target::Unix(PathBuf::from(p)));
        }
        let host_port = |s: &str| {
            (s.rsplit_once(':')
                .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok()))
            .then(|| s.to_string())
        };
        if let Some(a) = v.strip_prefix("udp://") {
            return host_port(a).map(Target::Udp);
        }
        if let Some(a) = v.strip_prefix("tcp://") {
            return host_port(a).map(Target::Tcp);
        }
        None
    }

    /// The target in force: `env` (an operator's command's `MESH_GUARD_SYSLOG`), else the
    /// catalog's setting, else the system's
    /// log where one exists (as sudo does). A value that cannot be parsed is reported as
    /// unreachable rather than silently dropped.
    pub fn resolve(env: Option<&str>, catalog: Option<&str>) -> Result<Target, ForwardError> {
        for value in [env, catalog].into_iter().flatten() {
            if !value.trim().is_empty() {
                return Target::parse(value)
                    .ok_or_else(|| ForwardError::NotATarget(value.to_string()));
            }
        }
        Ok(Target::system_default())
    }

    fn system_default() -> Target {
        if Path::new(JOURNALD_SOCKET).exists() {
            Target::Journald(PathBuf::from(JOURNALD_SOCKET))
        } else if Path::new(DEV_LOG).exists() {
            Target::Unix(PathBuf::from(DEV_LOG))
        } else {
            Target::None
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::None => f.write_str("none"),
            Target::Journald(p) => write!(f, "journald ({})", p.display()),
            Target::Unix(p) => write!(f, "unix:{}", p.display()),
            Target::Udp(a) => write!(f, "udp://{a}"),
            Target::Tcp(a) => write!(f, "tcp://{a}"),
        }
    }
}

/// Why a row did not reach the system log. The system's own words (an `io::Error`'s text)
/// are kept as text: rows and `doctor` show them, and they are compared as nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardError {
    /// The setting names no target.
    NotATarget(String),
    /// The target could not be connected to.
    Unreachable { target: String, cause: String },
    /// The target was connected to, and the send failed.
    Send(String),
    /// `[record] syslog = "none"`: an event the record could not take has no other copy.
    Off,
    /// What the row itself says when the link could not be made before it was written.
    SystemLogUnreachable(Box<ForwardError>),
}

impl std::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForwardError::NotATarget(value) => write!(
                f,
                "{value:?} is not none, journald, unix:PATH, udp://HOST:PORT or tcp://HOST:PORT"
            ),
            ForwardError::Unreachable { target, cause } => write!(f, "{target}: {cause}"),
            ForwardError::Send(cause) => f.write_str(cause),
            ForwardError::Off => f.write_str("forwarding is off (`[record] syslog = \"none\"`)"),
            ForwardError::SystemLogUnreachable(e) => write!(f, "system log unreachable: {e}"),
        }
    }
}

impl std::error::Error for ForwardError {}

/// An open path to the system log, made before the row is written so the row can say when the
/// log was unreachable.
pub enum Link {
    Off,
    Journald(UnixDatagram),
    Unix(UnixDatagram),
    /// A stream socket at a `unix:` path (syslog-ng's `unix-stream()`): newline-framed.
    UnixStream(std::os::unix::net::UnixStream),
    Udp(UdpSocket),
    Tcp(TcpStream),
}

/// Connects to `target` within [`SEND_TIMEOUT`]; the error is the reason the row will carry.
pub fn connect(target: &Target) -> Result<Link, ForwardError> {
    let fail = |e: std::io::Error| ForwardError::Unreachable {
        target: target.to_string(),
        cause: e.to_string(),
    };
    Ok(match target {
        Target::None => Link::Off,
        Target::Journald(path) | Target::Unix(path) => {
            let sock = UnixDatagram::unbound().map_err(fail)?;
            match sock.connect(path) {
                Ok(()) => {}
                // EPROTOTYPE: the path is a stream socket.
                Err(e) if e.raw_os_error() == Some(91) && matches!(target, Target::Unix(_)) => {
                    let stream = std::os::unix::net::UnixStream::connect(path).map_err(fail)?;
                    stream.set_write_timeout(Some(SEND_TIMEOUT)).map_err(fail)?;
                    return Ok(Link::UnixStream(stream));
                }
                Err(e) => return Err(fail(e)),
            }
            // A full receive queue drops the event rather than holding the hook.
            sock.set_nonblocking(true).map_err(fail)?;
            match target {
                Target::Journald(_) => Link::Journald(sock),
                _ => Link::Unix(sock),
            }
        }
        Target::Udp(addr) => {
            let to = first_addr(addr).map_err(fail)?;
            let local = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
            let sock = UdpSocket::bind(local).map_err(fail)?;
            sock.connect(to).map_err(fail)?;
            sock.set_nonblocking(true).map_err(fail)?;
            Link::Udp(sock)
        }
        Target::Tcp(addr) => {
            let to = first_addr(addr).map_err(fail)?;
            let stream = TcpStream::connect_timeout(&to, SEND_TIMEOUT).map_err(fail)?;
            stream.set_write_timeout(Some(SEND_TIMEOUT)).map_err(fail)?;
            let _ = stream.set_nodelay(true);
            Link::Tcp(stream)
        }
    })
}

fn first_addr(addr: &str) -> std::io::Result<std::net::SocketAddr> {
    addr.to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))
}

/// Sends one recorded row; the error says why it was lost (the row itself is already durable).
pub fn send(
    link: &mut Link,
    row: &Row,
    prev_hash: &str,
    record: &Path,
) -> Result<(), ForwardError> {
    let io = |e: std::io::Error| ForwardError::Send(e.to_string());
    match link {
        Link::Off => Ok(()),
        Link::Journald(sock) => sock
            .send(&journald(row, prev_hash, record))
            .map(drop)
            .map_err(io),
        Link::Unix(sock) => sock
            .send(rfc5424(row, prev_hash, record).as_bytes())
            .map(drop)
            .map_err(io),
        Link::UnixStream(stream) => {
            let mut msg = rfc5424(row, prev_hash, record);
            msg.push('\n');
            stream.write_all(msg.as_bytes()).map_err(io)
        }
        Link::Udp(sock) => sock
            .send(rfc5424(row, prev_hash, record).as_bytes())
            .map(drop)
            .map_err(io),
        Link::Tcp(stream) => {
            let msg = rfc5424(row, prev_hash, record);
            // RFC 6587 octet counting: the length, a space, the message.
            let framed = format!("{} {msg}", msg.len());
            stream.write_all(framed.as_bytes()).map_err(io)
        }
    }
}

/// Sends an event the record could not take, whole, marked not recorded (`cause`: why) and
/// keyed by `lost`, the key its gap row will carry. The system log is then the only copy
/// until the gap row is written, and the one the agent cannot erase.
pub fn send_unrecorded(
    link: &mut Link,
    event: &super::Event,
    record: &Path,
    cause: &str,
    lost: &str,
) -> Result<(), ForwardError> {
    let io = |e: std::io::Error| ForwardError::Send(e.to_string());
    let summary = unrecorded_summary(event, lost);
    let fields = || unrecorded_fields(event, record, cause, lost);
    // A warning whatever the kind: evidence is being lost.
    const WARNING: u8 = 4;
    let line = || rfc5424_of(event, &summary, WARNING, fields());
    match link {
        Link::Off => Err(ForwardError::Off),
        Link::Journald(sock) => sock
            .send(&journald_of(&summary, WARNING, fields()))
            .map(drop)
            .map_err(io),
        Link::Unix(sock) => sock.send(line().as_bytes()).map(drop).map_err(io),
        Link::UnixStream(stream) => {
            let mut msg = line();
            msg.push('\n');
            stream.write_all(msg.as_bytes()).map_err(io)
        }
        Link::Udp(sock) => sock.send(line().as_bytes()).map(drop).map_err(io),
        Link::Tcp(stream) => {
            let msg = line();
            stream
                .write_all(format!("{} {msg}", msg.len()).as_bytes())
                .map_err(io)
        }
    }
}

/// What `doctor` shows about forwarding: the target in force and whether it answers now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardingStatus {
    /// The target, as configured or found (`none` when off).
    pub target: String,
    /// `Ok` when the target accepted a connection (or forwarding is off); else why not.
    pub reachable: Result<(), ForwardError>,
}

/// Resolves the target the hook would use (the catalog's `[record] syslog`, else the
/// system's log: never the hook's environment) and tries to connect to it, sending nothing.
pub fn forwarding_status(catalog_setting: Option<&str>) -> ForwardingStatus {
    match Target::resolve(None, catalog_setting) {
        Ok(target) => ForwardingStatus {
            target: target.to_string(),
            reachable: connect(&target).map(drop),
        },
        Err(e) => ForwardingStatus {
            target: "invalid".to_string(),
            reachable: Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        assert_eq!(Target::parse("none"), Some(Target::None));
        assert_eq!(
            Target::parse("unix:/x/s"),
            Some(Target::Unix("/x/s".into()))
        );
        assert_eq!(
            Target::parse("udp://127.0.0.1:514"),
            Some(Target::Udp("127.0.0.1:514".into()))
        );
        assert_eq!(
            Target::parse("tcp://log:6514"),
            Some(Target::Tcp("log:6514".into()))
        );
        assert_eq!(Target::parse("tcp://log"), None);
        assert_eq!(Target::parse("unix:"), None);
        assert!(Target::resolve(Some("bogus"), None).is_err());
        assert_eq!(
            Target::resolve(Some("none"), Some("unix:/a")),
            Ok(Target::None)
        );
        assert_eq!(
            Target::resolve(None, Some("unix:/a")),
            Ok(Target::Unix("/a".into()))
        );
    }

    fn row(command: &str) -> Row {
        let mut event = crate::record::Event::now(crate::record::Kind::Refusal);
        event.command = command.to_string();
        event.rule = crate::rule::Rule::RemoteAccess.into();
        Row {
            id: 7,
            hash: "ab".repeat(32),
            event,
        }
    }

    #[test]
    fn journald_fields_use_the_binary_form_for_multi_line_values() {
        let bytes = journald(
            &row("ssh atlas <<EOF\nuptime\nEOF"),
            "00",
            Path::new("/d/a.db"),
        );
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("MESH_GUARD_ID=7\n"), "{text}");
        assert!(text.contains("MESH_GUARD_RULE=remote-access\n"));
        assert!(text.contains("SYSLOG_IDENTIFIER=mesh-guard\n"));
        let at = bytes
            .windows(19)
            .position(|w| w == b"MESH_GUARD_COMMAND\n")
            .unwrap();
        let len = u64::from_le_bytes(bytes[at + 19..at + 27].try_into().unwrap());
        assert_eq!(len as usize, "ssh atlas <<EOF\nuptime\nEOF".len());
    }

    #[test]
    fn rfc5424_is_one_line_with_the_hash_in_data_and_message() {
        let line = rfc5424(&row("a\nb ] \"c\""), "00", Path::new("/d/a.db"));
        assert!(!line.contains('\n'));
        assert!(line.starts_with("<84>1 "));
        assert_eq!(line.matches(&"ab".repeat(32)).count(), 2);
        let parsed = crate::record::logcheck::parse(&line);
        assert_eq!(parsed.len(), 1);
        assert_eq!(parsed[0].id, 7);
    }

    #[test]
    fn escaping_keeps_the_structured_data_closed() {
        assert_eq!(sd_escape(r#"a"b]c\d"#), r#"a\"b\]c\\d"#);
        assert_eq!(sd_escape("x\ny"), "x\\ny");
    }
}
