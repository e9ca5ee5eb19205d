//! The JSON views: a row as an object, whole arrays written element by element, lines of
//! JSON. serde_json writes them, through [`Escaping`], which also escapes what serde_json
//! leaves raw in strings, so the text is final as it is written: no second pass over it.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::record::Row;

/// One row as the JSON views write it: every field in full, in this order.
#[derive(Serialize)]
pub struct JsonRow<'a> {
    id: i64,
    time: Time,
    time_ms: i64,
    kind: &'a str,
    agent: &'a str,
    session_id: &'a str,
    tool_use_id: &'a str,
    cwd: &'a str,
    user: &'a str,
    host: &'a str,
    command: &'a str,
    rule: &'a str,
    target: &'a str,
    tools: &'a [String],
    shape: &'a str,
    reason: &'a str,
    scope: &'a str,
    signer: &'a str,
    grant_expires: &'a str,
    hash: &'a str,
}

impl<'a> JsonRow<'a> {
    pub fn of(r: &'a Row) -> Self {
        let e = &r.event;
        JsonRow {
            id: r.id,
            time: Time(crate::time::TimeText::of(e.time_ms, true)),
            time_ms: e.time_ms,
            kind: e.kind.as_str(),
            agent: &e.agent,
            session_id: &e.session_id,
            tool_use_id: &e.tool_use_id,
            cwd: &e.cwd,
            user: &e.user,
            host: &e.host,
            command: &e.command,
            rule: e.rule.as_str(),
            target: &e.target,
            tools: &e.tools,
            shape: &e.shape,
            reason: &e.reason,
            scope: &e.scope,
            signer: &e.signer,
            grant_expires: &e.grant_expires,
            hash: &r.hash,
        }
    }
}

/// A time as the JSON views write it: a string.
struct Time(crate::time::TimeText);

impl Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

/// One row as one line of JSON (`audit export --format jsonl`).
pub fn render_jsonl_line(r: &Row) -> String {
    let mut line = String::new();
    JsonLines::default().line(r, &mut line);
    line
}

/// Rows as lines of JSON, each appended to the caller's text; the room a line is serialized
/// in is kept from row to row.
#[derive(Default)]
pub struct JsonLines {
    scratch: Vec<u8>,
}

impl JsonLines {
    /// Appends one row's line to `out`.
    pub fn line(&mut self, r: &Row, out: &mut String) {
        write_into(&JsonRow::of(r), || CompactFormatter, &mut self.scratch);
        push_utf8(&self.scratch, out);
        out.push('\n');
    }
}

/// Recorded rows as a JSON array of objects, every field in full.
pub fn render_json(rows: &[Row]) -> String {
    let mut array = JsonArray::pretty();
    let mut out = String::new();
    for r in rows {
        array.element_into(&JsonRow::of(r), &mut out);
    }
    out.push_str(&array.end());
    out
}

/// `v` as serde_json's pretty printer writes it, strings escaped as [`Escaping`] escapes them.
pub fn to_string_pretty(v: &impl Serialize) -> String {
    let mut json = Vec::new();
    write_into(v, PrettyFormatter::new, &mut json);
    let mut out = String::new();
    push_utf8(&json, &mut out);
    out
}

/// A JSON array written element by element, exactly as `serde_json` writes it whole: pretty
/// (`audit --format json`, ending in a newline) or compact (`audit missing --format json`).
pub struct JsonArray {
    pretty: bool,
    started: bool,
    /// The room an element is serialized in, kept from element to element.
    scratch: Vec<u8>,
}

impl JsonArray {
    pub fn pretty() -> Self {
        JsonArray {
            pretty: true,
            started: false,
            scratch: Vec::new(),
        }
    }

    pub fn compact() -> Self {
        JsonArray {
            pretty: false,
            ..JsonArray::pretty()
        }
    }

    /// The text of the next element, with what comes before it.
    pub fn element(&mut self, v: &impl Serialize) -> String {
        let mut out = String::new();
        self.element_into(v, &mut out);
        out
    }

    /// [`JsonArray::element`] appended to `out`.
    pub fn element_into(&mut self, v: &impl Serialize, out: &mut String) {
        let lead = match (self.started, self.pretty) {
            (false, true) => "[\n  ",
            (true, true) => ",\n  ",
            (false, false) => "[",
            (true, false) => ",",
        };
        self.started = true;
        if self.pretty {
            // The element sits one level inside the array: the formatter is told the
            // array began, so it indents the element's lines as the whole array's.
            let inside = || {
                let mut inside = PrettyFormatter::new();
                let _ = inside.begin_array(&mut io::sink());
                inside
            };
            write_into(v, inside, &mut self.scratch);
        } else {
            write_into(v, || CompactFormatter, &mut self.scratch);
        }
        out.push_str(lead);
        push_utf8(&self.scratch, out);
    }

    /// The array's end, and the newline that follows it.
    pub fn end(self) -> String {
        match (self.started, self.pretty) {
            (false, _) => "[]\n",
            (true, true) => "\n]\n",
            (true, false) => "]\n",
        }
        .to_string()
    }
}

/// Serializes `v` into `json` (emptied first) laid out by the formatter `layout` makes, with
/// strings escaped as [`Escaping`] escapes them; `null` if it cannot be (no type here fails).
/// Written once as serde_json writes it, and again through [`Escaping`] only when that text
/// holds something to escape: one scan of the whole text costs less than one per string.
fn write_into<F: Formatter>(v: &impl Serialize, layout: impl Fn() -> F, json: &mut Vec<u8>) {
    json.clear();
    let written = v.serialize(&mut serde_json::Serializer::with_formatter(
        &mut *json,
        layout(),
    ));
    if written.is_ok() && json.is_ascii() && !json.contains(&0x7f) {
        return;
    }
    json.clear();
    let escaping = Escaping(layout());
    if v.serialize(&mut serde_json::Serializer::with_formatter(
        &mut *json, escaping,
    ))
    .is_err()
    {
        json.clear();
        json.extend_from_slice(b"null");
    }
}

/// Appends serde_json's output, which is UTF-8 (and [`Escaping`] adds only ASCII).
fn push_utf8(json: &[u8], out: &mut String) {
    out.push_str(std::str::from_utf8(json).unwrap_or("null"));
}

/// serde_json's formatting, with what it leaves raw in strings escaped too: DEL, the C1
/// controls and the bidirectional overrides become `\uXXXX`, which read back as the same text
/// but cannot reorder or drive the terminal of an operator who reads the JSON.
struct Escaping<F>(F);

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || super::is_bidi_control(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                write!(w, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    // The layout is the inner formatter's.
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Values shaped as the views' are: flat objects, an empty and a full array inside.
    fn values() -> Vec<serde_json::Value> {
        vec![
            json!({"id": 1, "tools": [], "command": "ssh atlas"}),
            json!({"id": 2, "tools": ["mesh logs", "mesh ssh"], "nested": {"a": [1, {"b": []}]}}),
            json!({}),
            json!([]),
        ]
    }

    #[test]
    fn arrays_written_element_by_element_are_what_serde_json_writes_whole() {
        let (mut pretty, mut compact) = (JsonArray::pretty(), JsonArray::compact());
        let (mut p, mut c) = (String::new(), String::new());
        for v in values() {
            pretty.element_into(&v, &mut p);
            compact.element_into(&v, &mut c);
        }
        p.push_str(&pretty.end());
        c.push_str(&compact.end());
        let whole = serde_json::Value::from(values());
        assert_eq!(p, serde_json::to_string_pretty(&whole).unwrap() + "\n");
        assert_eq!(c, serde_json::to_string(&whole).unwrap() + "\n");
        assert_eq!(JsonArray::pretty().end(), "[]\n");
    }

    #[test]
    fn what_serde_json_leaves_raw_is_escaped_and_reads_back_the_same() {
        let text = "é\u{7f}x\u{85}\u{9f}ü\u{202e}\u{2066}\u{a0}\u{1b}\"";
        let v = json!({ "command": text });
        for written in [to_string_pretty(&v), JsonArray::compact().element(&v)] {
            let json = written.trim_start_matches('[');
            for escaped in [
                "\\u007f", "\\u0085", "\\u009f", "\\u202e", "\\u2066", "\\u001b",
            ] {
                assert!(json.contains(escaped), "{escaped} in {json}");
            }
            assert!(json.contains("é") && json.contains("ü") && json.contains('\u{a0}'));
            let back: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(back["command"], text);
        }
        // DEL in text that is otherwise ASCII, and nothing escaped in text without it.
        let ascii = JsonArray::compact().element(&json!(["ls\u{7f}x", "plain ~ text"]));
        assert_eq!(ascii, r#"[["ls\u007fx","plain ~ text"]"#);
    }
}
