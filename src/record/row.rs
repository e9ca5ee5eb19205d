//! A stored row: its columns, read and decoded in one place.

use super::chain;
use super::error::RecordError;
use super::event::*;
use rusqlite::types::ValueRef;
use std::path::Path;

/// A stored event with its id and its hash (lower-case hex).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: i64,
    pub hash: String,
    pub event: Event,
}

/// Which rows `query` returns. `None` fields do not filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Rows of any of these kinds (none: every kind).
    pub kinds: Vec<Kind>,
    /// Rows of this rule.
    pub rule: Option<crate::rule::Rule>,
    /// Rows whose target contains this (`atlas` finds `atlas` and `atlas/mesh-controller`).
    pub target: Option<String>,
    /// Rows at or after this time (UTC ms).
    pub since_ms: Option<i64>,
    /// Rows at or before this time (UTC ms).
    pub until_ms: Option<i64>,
    /// A session id, or a prefix of one (the table shows them shortened).
    pub session: Option<String>,
    /// Rows older than this one (id below it): the page after one that ended with it.
    pub below_id: Option<i64>,
    pub limit: Option<u64>,
}

/// The override's columns outside `text_columns!()`: the scope (schema 4), the grant's
/// signer and expiry (schema 6).
pub(crate) struct Granted<T> {
    pub scope: T,
    pub signer: T,
    pub grant_expires: T,
}

/// The columns the table shows, and the id its pages go on from, in the order
/// [`Row::read_table_from`] takes them: a table of a million rows reads nine columns of each,
/// not nineteen.
pub(crate) const TABLE_COLUMNS: &str =
    "id, time_ms, kind, session_id, rule, target, scope, reason, command";

/// The row's text columns, in the order every query of them lists them (`ROW_COLUMNS`, the
/// chain walk's) and [`Texts::from_columns`] takes them: the one place that order is spelled.
macro_rules! text_columns {
    () => {
        "kind, agent, session_id, tool_use_id, cwd, user, host, command, rule, target, tools, shape, reason"
    };
}
pub(crate) use text_columns;

/// The columns `raw_row` decodes, in its order: one list for every query of whole rows.
pub(crate) const ROW_COLUMNS: &str = concat!(
    "id, time_ms, ",
    text_columns!(),
    ", hash, scope, signer, grant_expires"
);

/// The text columns of one row, named.
pub(crate) struct Texts<T> {
    pub kind: T,
    pub agent: T,
    pub session_id: T,
    pub tool_use_id: T,
    pub cwd: T,
    pub user: T,
    pub host: T,
    pub command: T,
    pub rule: T,
    pub target: T,
    pub tools: T,
    pub shape: T,
    pub reason: T,
}

impl<T> Texts<T> {
    /// The texts as read, in `text_columns!()` order.
    pub(crate) fn from_columns(columns: [T; 13]) -> Texts<T> {
        let [
            kind,
            agent,
            session_id,
            tool_use_id,
            cwd,
            user,
            host,
            command,
            rule,
            target,
            tools,
            shape,
            reason,
        ] = columns;
        Texts {
            kind,
            agent,
            session_id,
            tool_use_id,
            cwd,
            user,
            host,
            command,
            rule,
            target,
            tools,
            shape,
            reason,
        }
    }
}

impl<T: AsRef<str>> Texts<T> {
    /// The hashed fields of the row these texts were read from (`tools` decoded by the caller).
    pub(crate) fn fields<'a>(
        &'a self,
        id: i64,
        time_ms: i64,
        tools: &'a [String],
        granted: &'a Granted<T>,
    ) -> chain::Fields<'a> {
        chain::Fields {
            id,
            time_ms,
            kind: self.kind.as_ref(),
            agent: self.agent.as_ref(),
            session_id: self.session_id.as_ref(),
            tool_use_id: self.tool_use_id.as_ref(),
            cwd: self.cwd.as_ref(),
            user: self.user.as_ref(),
            host: self.host.as_ref(),
            command: self.command.as_ref(),
            rule: self.rule.as_ref(),
            target: self.target.as_ref(),
            tools,
            shape: self.shape.as_ref(),
            reason: self.reason.as_ref(),
            scope: granted.scope.as_ref(),
            signer: granted.signer.as_ref(),
            grant_expires: granted.grant_expires.as_ref(),
        }
    }
}

impl Row {
    /// A row with every field empty, to decode rows into ([`Row::read_from`]).
    pub(crate) fn empty() -> Row {
        Row {
            id: 0,
            hash: String::new(),
            event: Event::empty(Kind::Refusal),
        }
    }

    /// Reads the `ROW_COLUMNS` of `r` into this row, in the room its strings already have: a
    /// view of a million rows decodes each into the same `Row` and allocates nothing per row
    /// (issue 39). A column SQLite cannot give as the type asked is `sqlite`'s error; a kind
    /// or a tools list that does not read is the record's (`Corrupt`), as when rows were
    /// decoded into new strings.
    pub(crate) fn read_from(
        &mut self,
        r: &rusqlite::Row<'_>,
        path: &Path,
        sqlite: &dyn Fn(&rusqlite::Error) -> RecordError,
    ) -> Result<(), RecordError> {
        let [kind, rule, tools] = self.read_columns(r).map_err(|e| sqlite(&e))?;
        self.decode(path, kind, rule, Some(tools))
    }

    /// [`Row::read_from`] for a row of `TABLE_COLUMNS`: the columns the table does not show
    /// are left as they are (empty, in a row only the table reads into).
    pub(crate) fn read_table_from(
        &mut self,
        r: &rusqlite::Row<'_>,
        path: &Path,
        sqlite: &dyn Fn(&rusqlite::Error) -> RecordError,
    ) -> Result<(), RecordError> {
        let e = &mut self.event;
        let read = || -> rusqlite::Result<(i64, i64)> { Ok((r.get(0)?, r.get(1)?)) };
        (self.id, e.time_ms) = read().map_err(|e| sqlite(&e))?;
        let texts: [Option<&mut String>; 7] = [
            None,
            Some(&mut e.session_id),
            None,
            Some(&mut e.target),
            Some(&mut e.scope),
            Some(&mut e.reason),
            Some(&mut e.command),
        ];
        let mut kept = [""; 7];
        for ((slot, i), kept) in texts.into_iter().zip(2..).zip(&mut kept) {
            *kept = text_into(r, i, slot).map_err(|e| sqlite(&e))?;
        }
        self.decode(path, kept[0], kept[2], None)
    }

    /// The kind, the rule and the tools (if read) of a row, as their columns hold them: decoded
    /// once every column has been read, so a column SQLite cannot give is its error first.
    fn decode(
        &mut self,
        path: &Path,
        kind: &str,
        rule: &str,
        tools: Option<&str>,
    ) -> Result<(), RecordError> {
        let id = self.id;
        let bad = |what: String| RecordError::Corrupt {
            path: path.to_path_buf(),
            cause: format!("row {id}: {what}"),
        };
        self.event.kind = kind.parse::<Kind>().map_err(|e| bad(e.to_string()))?;
        self.event.rule.read(rule);
        if let Some(tools) = tools {
            fill_tools(tools, &mut self.event.tools).map_err(|e| bad(format!("tools: {e}")))?;
        }
        Ok(())
    }

    /// Reads every column but the kind, the rule and the tools, whose texts it gives back.
    fn read_columns<'r>(&mut self, r: &'r rusqlite::Row<'_>) -> rusqlite::Result<[&'r str; 3]> {
        let e = &mut self.event;
        // The kind, the rule and the tools (`None`) are only checked to be text here, in the
        // columns' order, and decoded from SQLite's row once every column is read.
        let texts: [Option<&mut String>; 13] = [
            None,
            Some(&mut e.agent),
            Some(&mut e.session_id),
            Some(&mut e.tool_use_id),
            Some(&mut e.cwd),
            Some(&mut e.user),
            Some(&mut e.host),
            Some(&mut e.command),
            None,
            Some(&mut e.target),
            None,
            Some(&mut e.shape),
            Some(&mut e.reason),
        ];
        let mut kept = [""; 13];
        for ((slot, i), kept) in texts.into_iter().zip(2..).zip(&mut kept) {
            *kept = text_into(r, i, slot)?;
        }
        self.id = r.get(0)?;
        e.time_ms = r.get(1)?;
        self.hash.clear();
        match r.get_ref(15)? {
            ValueRef::Blob(b) | ValueRef::Text(b) => chain::hex_into(b, &mut self.hash),
            _ => {}
        }
        text_into(r, 16, Some(&mut e.scope))?;
        text_into(r, 17, Some(&mut e.signer))?;
        text_into(r, 18, Some(&mut e.grant_expires))?;
        // Columns 2, 10 and 12 of the row: `kind`, `rule`, `tools`.
        Ok([kept[0], kept[8], kept[10]])
    }
}

/// Column `i` of `r` into `slot`, in its room (when there is one), and its text as SQLite
/// holds it. Anything but UTF-8 text fails as reading it as a `String` fails, with that error.
fn text_into<'r>(
    r: &'r rusqlite::Row<'_>,
    i: usize,
    slot: Option<&mut String>,
) -> rusqlite::Result<&'r str> {
    if let ValueRef::Text(t) = r.get_ref(i)?
        && let Ok(s) = std::str::from_utf8(t)
    {
        if let Some(slot) = slot {
            slot.clear();
            slot.push_str(s);
        }
        return Ok(s);
    }
    r.get::<_, String>(i).map(|_| "")
}

/// The stored tools list (a JSON array of strings) into `tools`, reusing its strings: what
/// `serde_json::from_str::<Vec<String>>` reads, with its errors.
pub(crate) fn fill_tools(text: &str, tools: &mut Vec<String>) -> serde_json::Result<()> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let filled = FillTools(tools).deserialize(&mut de)?;
    tools.truncate(filled);
    de.end()
}

/// Fills a list of strings in place, giving how many it read.
struct FillTools<'v>(&'v mut Vec<String>);

impl<'de> serde::de::DeserializeSeed<'de> for FillTools<'_> {
    type Value = usize;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FillTools<'_> {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut n = 0;
        loop {
            if n == self.0.len() {
                self.0.push(String::new());
            }
            if seq.next_element_seed(FillString(&mut self.0[n]))?.is_none() {
                return Ok(n);
            }
            n += 1;
        }
    }
}

/// Fills one string in place.
struct FillString<'s>(&'s mut String);

impl<'de> serde::de::DeserializeSeed<'de> for FillString<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FillString<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<(), E> {
        self.0.clear();
        self.0.push_str(s);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_fill_in_place_as_serde_reads_them() {
        let mut tools = vec!["old one".to_string(), "old two".into(), "old three".into()];
        fill_tools(r#"["a", "b\"c"]"#, &mut tools).unwrap();
        assert_eq!(tools, ["a", "b\"c"]);
        fill_tools("[]", &mut tools).unwrap();
        assert!(tools.is_empty());
        fill_tools(r#"["x","y","z","w"]"#, &mut tools).unwrap();
        assert_eq!(tools, ["x", "y", "z", "w"]);
        for bad in ["[1]", "{}", r#"["a"] x"#, r#"["a""#, ""] {
            let want = serde_json::from_str::<Vec<String>>(bad)
                .unwrap_err()
                .to_string();
            let got = fill_tools(bad, &mut tools).unwrap_err().to_string();
            assert_eq!(got, want, "{bad}");
        }
    }
}
