//! A forwarded event's forms: journald's fields, an RFC 5424 line, a one-line summary.

use super::SD_ID;
use crate::record::Row;
use std::path::Path;

/// Severity by kind: an override is what an operator looks for first.
pub(crate) fn severity(row: &Row) -> u8 {
    match row.event.kind {
        crate::record::Kind::Refusal
        | crate::record::Kind::OverrideAttempt
        | crate::record::Kind::Gap => 4,
        _ => 5,
    }
}

/// authpriv, like sudo: refused commands can hold secrets, and authpriv files are not
/// world-readable.
pub(crate) const FACILITY: u8 = 10;

pub(crate) fn fields<'a>(
    row: &'a Row,
    prev_hash: &'a str,
    record: &'a Path,
) -> [(&'static str, String); 12] {
    let e = &row.event;
    [
        ("ID", row.id.to_string()),
        ("KIND", e.kind.as_str().to_string()),
        ("RULE", e.rule.clone()),
        ("TARGET", e.target.clone()),
        ("SESSION", e.session_id.clone()),
        ("HASH", row.hash.clone()),
        ("PREV_HASH", prev_hash.to_string()),
        ("COMMAND", e.command.clone()),
        ("REASON", e.reason.clone()),
        ("AGENT", e.agent.clone()),
        ("USER", e.user.clone()),
        // Absolute, so `verify --log` run from anywhere finds this record's events.
        (
            "RECORD",
            std::path::absolute(record)
                .unwrap_or_else(|_| record.to_path_buf())
                .display()
                .to_string(),
        ),
    ]
}

/// The free-text message. It repeats the id and hashes as `key=value` words because syslog
/// servers' default file formats keep the message and drop the structured data, and
/// `audit verify --log` must still read them there.
pub(crate) fn summary(row: &Row, prev_hash: &str) -> String {
    let e = &row.event;
    let mut s = format!(
        "mesh-guard {} id={} hash={} prev_hash={prev_hash}",
        e.kind, row.id, row.hash
    );
    if !e.rule.is_empty() {
        s.push_str(&format!(" rule={}", header_word(&e.rule)));
    }
    if !e.target.is_empty() {
        s.push_str(&format!(" target={}", header_word(&e.target)));
    }
    s
}

/// journald's native protocol: `KEY=value` lines, or for a value holding a newline,
/// `KEY`, newline, its length as 64-bit little-endian, the value, newline.
pub(crate) fn journald(row: &Row, prev_hash: &str, record: &Path) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + row.event.command.len());
    let mut field = |key: &str, value: &str| {
        if value.contains('\n') {
            out.extend_from_slice(key.as_bytes());
            out.push(b'\n');
            out.extend_from_slice(&(value.len() as u64).to_le_bytes());
            out.extend_from_slice(value.as_bytes());
        } else {
            out.extend_from_slice(key.as_bytes());
            out.push(b'=');
            out.extend_from_slice(value.as_bytes());
        }
        out.push(b'\n');
    };
    field("MESSAGE", &summary(row, prev_hash));
    field("PRIORITY", &severity(row).to_string());
    field("SYSLOG_FACILITY", &FACILITY.to_string());
    field("SYSLOG_IDENTIFIER", "mesh-guard");
    for (k, v) in fields(row, prev_hash, record) {
        field(&format!("MESH_GUARD_{k}"), &v);
    }
    out
}

/// One RFC 5424 message: header, the row's fields as structured data, a short summary.
pub(crate) fn rfc5424(row: &Row, prev_hash: &str, record: &Path) -> String {
    let e = &row.event;
    let pri = u16::from(FACILITY) * 8 + u16::from(severity(row));
    let host = if e.host.is_empty() {
        "-".to_string()
    } else {
        header_word(&e.host)
    };
    let mut sd = format!("[{SD_ID}");
    for (k, v) in fields(row, prev_hash, record) {
        sd.push(' ');
        sd.push_str(&k.to_ascii_lowercase());
        sd.push_str("=\"");
        sd.push_str(&sd_escape(&v));
        sd.push('"');
    }
    sd.push(']');
    format!(
        "<{pri}>1 {} {host} mesh-guard {} {} {sd} {}",
        crate::time::format_time(e.time_ms, true),
        std::process::id(),
        e.kind.as_str(),
        summary(row, prev_hash)
    )
}

/// A header field is printable ASCII without spaces (RFC 5424 §6).
pub(crate) fn header_word(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_graphic() { c } else { '_' })
        .take(255)
        .collect()
}

/// PARAM-VALUE escaping (RFC 5424 §6.3.3): `"`, `\` and `]`. Newlines become `\n` so each
/// event stays one line in a syslog server's file.
pub(crate) fn sd_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' | '\\' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ => out.push(c),
        }
    }
    out
}
