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
) -> Vec<(&'static str, String)> {
    let e = &row.event;
    vec![
        ("ID", row.id.to_string()),
        ("KIND", e.kind.as_str().to_string()),
        ("RULE", e.rule.to_string()),
        ("TARGET", e.target.clone()),
        ("SESSION", e.session_id.clone()),
        ("HASH", row.hash.clone()),
        ("PREV_HASH", prev_hash.to_string()),
        ("COMMAND", e.command.clone()),
        ("REASON", e.reason.clone()),
        ("AGENT", e.agent.clone()),
        ("USER", e.user.clone()),
        // Absolute, so `verify --log` run from anywhere finds this record's events.
        ("RECORD", absolute(record)),
    ]
}

fn absolute(record: &Path) -> String {
    std::path::absolute(record)
        .unwrap_or_else(|_| record.to_path_buf())
        .display()
        .to_string()
}

/// An event the record could not take: its whole row but no id or hash (it is in no chain,
/// so `audit verify --log` does not look for it in the record), marked `RECORDED=no`, with
/// why (`NOT_RECORDED`) and the key its gap row names it by (`LOST`).
pub(crate) fn unrecorded_fields(
    e: &crate::record::Event,
    record: &Path,
    cause: &str,
    lost: &str,
) -> Vec<(&'static str, String)> {
    vec![
        ("RECORDED", "no".to_string()),
        ("NOT_RECORDED", cause.to_string()),
        ("LOST", lost.to_string()),
        ("KIND", e.kind.as_str().to_string()),
        ("TIME", crate::time::format_time(e.time_ms, true)),
        ("RULE", e.rule.to_string()),
        ("TARGET", e.target.clone()),
        ("SESSION", e.session_id.clone()),
        ("TOOL_USE_ID", e.tool_use_id.clone()),
        ("COMMAND", e.command.clone()),
        ("TOOLS", serde_json::to_string(&e.tools).unwrap_or_default()),
        ("SHAPE", e.shape.clone()),
        ("REASON", e.reason.clone()),
        ("AGENT", e.agent.clone()),
        ("USER", e.user.clone()),
        ("CWD", e.cwd.clone()),
        ("SCOPE", e.scope.clone()),
        ("RECORD", absolute(record)),
    ]
}

/// The message of an unrecorded event: no `id=`, so no reader of the log takes it for a row.
pub(crate) fn unrecorded_summary(e: &crate::record::Event, lost: &str) -> String {
    let mut s = format!("mesh-guard {} not-recorded lost={lost}", e.kind);
    if !e.rule.as_str().is_empty() {
        s.push_str(&format!(" rule={}", header_word(e.rule.as_str())));
    }
    if !e.target.is_empty() {
        s.push_str(&format!(" target={}", header_word(&e.target)));
    }
    s
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
    if !e.rule.as_str().is_empty() {
        s.push_str(&format!(" rule={}", header_word(e.rule.as_str())));
    }
    if !e.target.is_empty() {
        s.push_str(&format!(" target={}", header_word(&e.target)));
    }
    s
}

/// journald's native protocol: `KEY=value` lines, or for a value holding a newline,
/// `KEY`, newline, its length as 64-bit little-endian, the value, newline.
pub(crate) fn journald(row: &Row, prev_hash: &str, record: &Path) -> Vec<u8> {
    journald_of(
        &summary(row, prev_hash),
        severity(row),
        fields(row, prev_hash, record),
    )
}

pub(crate) fn journald_of(
    summary: &str,
    severity: u8,
    fields: Vec<(&'static str, String)>,
) -> Vec<u8> {
    let size: usize = fields.iter().map(|(k, v)| k.len() + v.len() + 24).sum();
    let mut out = Vec::with_capacity(256 + size);
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
    field("MESSAGE", summary);
    field("PRIORITY", &severity.to_string());
    field("SYSLOG_FACILITY", &FACILITY.to_string());
    field("SYSLOG_IDENTIFIER", "mesh-guard");
    for (k, v) in fields {
        field(&format!("MESH_GUARD_{k}"), &v);
    }
    out
}

/// One RFC 5424 message: header, the row's fields as structured data, a short summary.
pub(crate) fn rfc5424(row: &Row, prev_hash: &str, record: &Path) -> String {
    rfc5424_of(
        &row.event,
        &summary(row, prev_hash),
        severity(row),
        fields(row, prev_hash, record),
    )
}

pub(crate) fn rfc5424_of(
    e: &crate::record::Event,
    summary: &str,
    severity: u8,
    fields: Vec<(&'static str, String)>,
) -> String {
    let pri = u16::from(FACILITY) * 8 + u16::from(severity);
    let host = if e.host.is_empty() {
        "-".to_string()
    } else {
        header_word(&e.host)
    };
    let mut sd = format!("[{SD_ID}");
    for (k, v) in fields {
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
        summary
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
