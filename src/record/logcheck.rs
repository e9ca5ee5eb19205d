//! `audit verify --log FILE`: the events the hook forwarded, read back from what a syslog server
//! or `journalctl -o json` wrote, and compared with the database row by row.
//!
//! Accepted, line by line (other lines are skipped):
//! - any line holding the `[mesh-guard@32473 …]` structured-data element: an RFC 5424 file
//!   (rsyslog's `RSYSLOG_SyslogProtocol23Format`), or rsyslog's default file format when the local
//!   socket left the structured data in the message;
//! - a JSON object with `MESH_GUARD_*` fields, as `journalctl -o json` writes them.

use std::collections::BTreeMap;

mod spill;
pub use spill::{MAX_LINE, Spilled};

/// One forwarded event, as far as the comparison needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    pub id: i64,
    pub kind: String,
    pub hash: String,
    pub prev_hash: String,
    /// The database path the event came from, when it says.
    pub record: String,
}

/// Reads every mesh-guard event in `text`.
pub fn parse(text: &str) -> Vec<Forwarded> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Forwarded> {
    let trimmed = line.trim_start();
    let fields = if trimmed.starts_with('{') {
        json_fields(trimmed)?
    } else {
        sd_fields(line).or_else(|| message_fields(line))?
    };
    let get = |k: &str| fields.get(k).cloned().unwrap_or_default();
    Some(Forwarded {
        id: get("id").parse().ok()?,
        kind: get("kind"),
        hash: get("hash").to_ascii_lowercase(),
        prev_hash: get("prev_hash").to_ascii_lowercase(),
        record: get("record"),
    })
}

fn json_fields(line: &str) -> Option<BTreeMap<String, String>> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let obj = v.as_object()?;
    let mut out = BTreeMap::new();
    for (k, v) in obj {
        let Some(name) = k.strip_prefix("MESH_GUARD_") else {
            continue;
        };
        // journalctl writes a value that is not printable text as an array of bytes.
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(bytes) => {
                let b: Vec<u8> = bytes
                    .iter()
                    .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect();
                String::from_utf8_lossy(&b).into_owned()
            }
            _ => continue,
        };
        out.insert(name.to_ascii_lowercase(), text);
    }
    out.contains_key("id").then_some(out)
}

/// The `mesh-guard KIND id=N hash=H prev_hash=P` words of the message, for files whose format
/// kept only the message (rsyslog's default `RSYSLOG_FileFormat` and traditional formats).
fn message_fields(line: &str) -> Option<BTreeMap<String, String>> {
    let at = line.find("mesh-guard ")?;
    let mut words = line[at + "mesh-guard ".len()..].split_whitespace();
    let kind = words.next()?;
    let mut out = BTreeMap::new();
    out.insert("kind".to_string(), kind.to_string());
    for w in words {
        if let Some((k, v)) = w.split_once('=')
            && matches!(k, "id" | "hash" | "prev_hash")
        {
            out.insert(k.to_string(), v.to_string());
        }
    }
    (out.contains_key("id") && out.contains_key("hash")).then_some(out)
}

/// The PARAM="value" pairs of our structured-data element, unescaped.
fn sd_fields(line: &str) -> Option<BTreeMap<String, String>> {
    let start = line.find(&format!("[{}", super::forward::SD_ID))?;
    let mut chars = line[start + 1 + super::forward::SD_ID.len()..]
        .chars()
        .peekable();
    let mut out = BTreeMap::new();
    loop {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        match chars.peek() {
            Some(']') | None => break,
            _ => {}
        }
        let mut name = String::new();
        for c in chars.by_ref() {
            if c == '=' {
                break;
            }
            name.push(c);
        }
        if chars.next() != Some('"') {
            return None;
        }
        let mut value = String::new();
        loop {
            match chars.next()? {
                '\\' => match chars.next()? {
                    'n' => value.push('\n'),
                    'r' => value.push('\r'),
                    c => value.push(c),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        out.insert(name, value);
    }
    out.contains_key("id").then_some(out)
}

/// A stored row as the comparison sees it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: i64,
    pub kind: String,
    pub hash: String,
}

/// What the log holds that the database does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The log has the row; the database does not.
    Missing { id: i64, kind: String, hash: String },
    /// Both have the row, with different hashes (edited, or the chain rewritten).
    Differs {
        id: i64,
        logged: String,
        stored: String,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::Missing { id, kind, hash } => write!(
                f,
                "row {id} ({kind}, hash {hash}) is in the log but not in the database"
            ),
            Finding::Differs { id, logged, stored } => write!(
                f,
                "row {id} differs: the log has hash {logged}, the database {stored}"
            ),
        }
    }
}

/// Compares the forwarded events of this record with its rows. `pruned_through` is the id of
/// the checkpoint row, if the record was pruned: logged rows before it are gone on purpose.
pub fn compare(logged: &[Forwarded], stored: &[Stored], pruned_through: i64) -> Vec<Finding> {
    let mut seen = BTreeMap::new();
    for e in logged {
        // The same row forwarded twice (a relay's retry) is one row.
        seen.entry(e.id).or_insert(e);
    }
    let mut sorted: Vec<&Stored> = stored.iter().collect();
    sorted.sort_by_key(|s| s.id);
    let mut merge = Merge::new(sorted.into_iter().cloned(), pruned_through);
    let mut out = Vec::new();
    for e in seen.into_values() {
        out.extend(merge.next(e));
    }
    out
}

/// The comparison as a merge of two walks in id order, the log's (one event an id) and the
/// database's, holding one row of each.
pub struct Merge<S: Iterator<Item = Stored>> {
    stored: std::iter::Peekable<S>,
    pruned_through: i64,
}

impl<S: Iterator<Item = Stored>> Merge<S> {
    pub fn new(stored: S, pruned_through: i64) -> Self {
        Merge {
            stored: stored.peekable(),
            pruned_through,
        }
    }

    /// What the next logged event (ids increasing) shows.
    pub fn next(&mut self, e: &Forwarded) -> Option<Finding> {
        let id = e.id;
        while self.stored.next_if(|s| s.id < id).is_some() {}
        let s = self.stored.peek().filter(|s| s.id == id);
        let pruned = self.pruned_through;
        if id < pruned || (id == pruned && e.kind != "checkpoint") {
            // Row `pruned_through` was replaced by the checkpoint carrying its hash.
            return match s {
                Some(s) if id == pruned && s.hash != e.hash => Some(Finding::Differs {
                    id,
                    logged: e.hash.clone(),
                    stored: s.hash.clone(),
                }),
                _ => None,
            };
        }
        match s {
            None => Some(Finding::Missing {
                id,
                kind: e.kind.clone(),
                hash: e.hash.clone(),
            }),
            Some(s) if s.hash != e.hash => Some(Finding::Differs {
                id,
                logged: e.hash.clone(),
                stored: s.hash.clone(),
            }),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rfc5424_rsyslog_and_journal_lines() {
        let h = "a".repeat(64);
        let lines = format!(
            "<84>1 2026-11-30T10:00:00.000Z h mesh-guard 1 refusal [mesh-guard@32473 id=\"3\" kind=\"refusal\" command=\"a \\\"b\\] c\" hash=\"{h}\" prev_hash=\"\" record=\"/d/audit.db\"] mesh-guard refusal\n\
             Nov 30 10:00:00 h mesh-guard[1]: 1 2026-11-30T10:00:00Z h mesh-guard 1 refusal [mesh-guard@32473 id=\"4\" kind=\"refusal\" hash=\"{h}\"] x\n\
             {{\"MESSAGE\":\"x\",\"MESH_GUARD_ID\":\"5\",\"MESH_GUARD_KIND\":\"override\",\"MESH_GUARD_HASH\":\"{h}\",\"MESH_GUARD_COMMAND\":[104,10,105]}}\n\
             2026-11-30T10:00:00+00:00 h mesh-guard[9]: mesh-guard override id=6 hash={h} prev_hash={h} rule=r\n\
             unrelated line\n"
        );
        let got = parse(&lines);
        assert_eq!(
            got.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![3, 4, 5, 6]
        );
        assert_eq!(got[0].record, "/d/audit.db");
        assert_eq!(got[2].kind, "override");
        assert!(got.iter().all(|e| e.hash == h));
    }

    #[test]
    fn names_missing_and_rewritten_rows() {
        let ev = |id, hash: &str| Forwarded {
            id,
            kind: "refusal".into(),
            hash: hash.into(),
            prev_hash: String::new(),
            record: String::new(),
        };
        let st = |id, hash: &str| Stored {
            id,
            kind: "refusal".into(),
            hash: hash.into(),
        };
        let logged = [ev(1, "a"), ev(2, "b"), ev(3, "c")];
        assert!(compare(&logged, &[st(1, "a"), st(2, "b"), st(3, "c")], 0).is_empty());
        let f = compare(&logged, &[st(1, "a"), st(2, "x")], 0);
        assert_eq!(f.len(), 2);
        assert!(matches!(f[0], Finding::Differs { id: 2, .. }));
        assert!(matches!(f[1], Finding::Missing { id: 3, .. }));
        // Pruned through row 2: rows 1 and 2 are gone on purpose, row 2's hash is kept.
        assert!(compare(&logged, &[st(2, "b"), st(3, "c")], 2).is_empty());
    }
}
