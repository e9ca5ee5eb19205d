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
pub use spill::{MAX_LINE, SpillError, Spilled};

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

/// An event the record could not take, as the system log has it (`RECORDED=no`, decision
/// 0072): no id or hash, but the key (`LOST`) its gap row names it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrecorded {
    pub lost: String,
    pub kind: String,
    /// When it happened (RFC 3339), when the line says.
    pub time: String,
    pub record: String,
}

/// A mesh-guard line of a log: a row's copy, or an event the record could not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Logged {
    Row(Forwarded),
    Unrecorded(Unrecorded),
}

/// Reads every mesh-guard row event in `text`.
pub fn parse(text: &str) -> Vec<Forwarded> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Forwarded> {
    match read_line(line)? {
        Logged::Row(row) => Some(row),
        Logged::Unrecorded(_) => None,
    }
}

/// The mesh-guard event a line holds, if any.
pub(crate) fn read_line(line: &str) -> Option<Logged> {
    let trimmed = line.trim_start();
    let fields = if trimmed.starts_with('{') {
        json_fields(trimmed)?
    } else {
        sd_fields(line)
            .or_else(|| message_fields(line))
            .map(Fields::from_map)?
    };
    let take = |v: Option<String>| v.unwrap_or_default();
    if let Some(id) = fields.id {
        return Some(Logged::Row(Forwarded {
            id: id.parse().ok()?,
            kind: take(fields.kind),
            hash: take(fields.hash).to_ascii_lowercase(),
            prev_hash: take(fields.prev_hash).to_ascii_lowercase(),
            record: take(fields.record),
        }));
    }
    if fields.recorded.as_deref() != Some("no") {
        return None;
    }
    Some(Logged::Unrecorded(Unrecorded {
        lost: take(fields.lost).to_ascii_lowercase(),
        kind: take(fields.kind),
        time: take(fields.time),
        record: take(fields.record),
    }))
}

/// The fields of a mesh-guard event the comparison reads, by their lower-case names; each
/// one the line holds, its last value.
#[derive(Default)]
struct Fields {
    id: Option<String>,
    kind: Option<String>,
    hash: Option<String>,
    prev_hash: Option<String>,
    record: Option<String>,
    recorded: Option<String>,
    lost: Option<String>,
    time: Option<String>,
}

impl Fields {
    fn slot(&mut self, name: &str) -> Option<&mut Option<String>> {
        Some(match name {
            "id" => &mut self.id,
            "kind" => &mut self.kind,
            "hash" => &mut self.hash,
            "prev_hash" => &mut self.prev_hash,
            "record" => &mut self.record,
            "recorded" => &mut self.recorded,
            "lost" => &mut self.lost,
            "time" => &mut self.time,
            _ => return None,
        })
    }

    fn from_map(map: BTreeMap<String, String>) -> Fields {
        let mut fields = Fields::default();
        for (k, v) in map {
            if let Some(slot) = fields.slot(&k) {
                *slot = Some(v);
            }
        }
        fields
    }

    /// An event of a row (an id) or of a lost one (marked not recorded, with its key).
    fn is_event(&self) -> bool {
        self.id.is_some() || (self.recorded.as_deref() == Some("no") && self.lost.is_some())
    }
}

/// The `MESH_GUARD_*` fields of a JSON object, as `journalctl -o json` writes them, read
/// without building the object: the values of other fields are skipped, and only the fields
/// the comparison reads are kept. A field's name after the prefix is compared without regard
/// to case; a value that is neither text nor an array (of bytes) is left out.
fn json_fields(line: &str) -> Option<Fields> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(line);
    let mut fields = Fields::default();
    JournalObject(&mut fields).deserialize(&mut de).ok()?;
    de.end().ok()?;
    fields.is_event().then_some(fields)
}

struct JournalObject<'f>(&'f mut Fields);

impl<'de> serde::de::DeserializeSeed<'de> for JournalObject<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for JournalObject<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key_seed(FieldName)? {
            let slot = name.and_then(|n| self.0.slot(n));
            match slot {
                Some(slot) => {
                    if let Some(text) = map.next_value_seed(JournalValue)? {
                        *slot = Some(text);
                    }
                }
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A key of the object: the lower-case name of a field the comparison reads, or `None`.
struct FieldName;

const FIELD_NAMES: [&str; 8] = [
    "id",
    "kind",
    "hash",
    "prev_hash",
    "record",
    "recorded",
    "lost",
    "time",
];

impl<'de> serde::de::DeserializeSeed<'de> for FieldName {
    type Value = Option<&'static str>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FieldName {
    type Value = Option<&'static str>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a field name")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
        let Some(name) = key.strip_prefix("MESH_GUARD_") else {
            return Ok(None);
        };
        Ok(FIELD_NAMES
            .into_iter()
            .find(|n| n.eq_ignore_ascii_case(name)))
    }
}

/// A field's value: text as it is; an array, as journalctl writes a value that is not
/// printable text, as the bytes its numbers are (lossily UTF-8); anything else `None`.
struct JournalValue;

impl<'de> serde::de::DeserializeSeed<'de> for JournalValue {
    type Value = Option<String>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for JournalValue {
    type Value = Option<String>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Some(s.to_string()))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut bytes = Vec::new();
        while let Some(v) = seq.next_element::<serde_json::Value>()? {
            if let Some(b) = v.as_u64().and_then(|b| u8::try_from(b).ok()) {
                bytes.push(b);
            }
        }
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// The `mesh-guard KIND id=N hash=H prev_hash=P` words of the message, for files whose format
/// kept only the message (rsyslog's default `RSYSLOG_FileFormat` and traditional formats).
/// An event the record could not take says `mesh-guard KIND not-recorded lost=KEY` instead.
fn message_fields(line: &str) -> Option<BTreeMap<String, String>> {
    let at = line.find("mesh-guard ")?;
    let mut words = line[at + "mesh-guard ".len()..].split_whitespace();
    let kind = words.next()?;
    let mut out = BTreeMap::new();
    out.insert("kind".to_string(), kind.to_string());
    let mut words = words.peekable();
    let unrecorded = words.next_if_eq(&"not-recorded").is_some();
    for w in words {
        if let Some((k, v)) = w.split_once('=')
            && matches!(k, "id" | "hash" | "prev_hash" | "lost")
        {
            out.insert(k.to_string(), v.to_string());
        }
    }
    if unrecorded && !out.contains_key("id") && out.contains_key("lost") {
        out.insert("recorded".to_string(), "no".to_string());
        return Some(out);
    }
    out.remove("lost");
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
    let unrecorded =
        out.get("recorded").map(String::as_str) == Some("no") && out.contains_key("lost");
    (out.contains_key("id") || unrecorded).then_some(out)
}

/// A stored row as the comparison sees it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub id: i64,
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
    /// The log has an event marked not recorded (its key `lost`) that no gap row names or
    /// counts: the row that should say it was lost is gone.
    Unaccounted {
        lost: String,
        kind: String,
        time: String,
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
            Finding::Unaccounted { lost, kind, time } => write!(
                f,
                "event {lost} ({kind}{}{time}) is in the log marked not recorded, but no gap row of the database accounts for it",
                if time.is_empty() { "" } else { ", at " }
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
