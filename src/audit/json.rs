//! The JSON views: a row as an object, whole arrays written element by element, lines of
//! JSON. A recorded row is laid out here, as serde_json lays it out; anything else, and every
//! string that needs escaping, serde_json writes, through [`Escaping`], which also escapes what
//! serde_json leaves raw in strings, so the text is final as it is written.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::record::Row;

/// One row as the JSON views write it: every field in full, in this order, laid out exactly
/// as serde_json lays out the same object (the tests hold it to that). Written by hand rather
/// than serialized: serde_json writes a string a byte at a time and every piece of layout
/// through its own small write, about a third of `audit --format json` (issue 39). A string
/// that needs no escaping is copied whole; any other is written by serde_json, and again
/// through [`Escaping`] when it holds DEL or anything past ASCII.
struct JsonRow<'a>(&'a Row);

/// A member's key with what comes before it and after it, in one piece: pretty (one level
/// inside an array) and compact. The lead's comma is left out before the first member.
macro_rules! key {
    ($name:literal) => {
        [
            concat!(",\n    \"", $name, "\": "),
            concat!(",\"", $name, "\":"),
        ]
    };
}

impl JsonRow<'_> {
    /// Appends the row's object: `pretty`, as an element of the pretty array, or compact.
    fn write(&self, pretty: bool, out: &mut String) {
        let (r, e) = (self.0, &self.0.event);
        out.push('{');
        let mut o = Object {
            out,
            pretty,
            first: true,
        };
        o.number(key!("id"), r.id);
        let time = crate::time::TimeText::of(e.time_ms, true);
        o.string(key!("time"), time.as_str());
        o.number(key!("time_ms"), e.time_ms);
        o.string(key!("kind"), e.kind.as_str());
        o.string(key!("agent"), &e.agent);
        o.string(key!("session_id"), &e.session_id);
        o.string(key!("tool_use_id"), &e.tool_use_id);
        o.string(key!("cwd"), &e.cwd);
        o.string(key!("user"), &e.user);
        o.string(key!("host"), &e.host);
        o.string(key!("command"), &e.command);
        o.string(key!("rule"), e.rule.as_str());
        o.string(key!("target"), &e.target);
        o.strings(key!("tools"), &e.tools);
        o.string(key!("shape"), &e.shape);
        o.string(key!("reason"), &e.reason);
        o.string(key!("scope"), &e.scope);
        o.string(key!("signer"), &e.signer);
        o.string(key!("grant_expires"), &e.grant_expires);
        o.string(key!("hash"), &r.hash);
        o.out.push_str(if pretty { "\n  }" } else { "}" });
    }
}

/// A flat object being written, one member at a time.
struct Object<'o> {
    out: &'o mut String,
    pretty: bool,
    first: bool,
}

impl Object<'_> {
    fn key(&mut self, [pretty, compact]: [&str; 2]) {
        let lead = if self.pretty { pretty } else { compact };
        self.out
            .push_str(if self.first { &lead[1..] } else { lead });
        self.first = false;
    }

    fn number(&mut self, key: [&str; 2], n: i64) {
        self.key(key);
        self.out.push_str(super::Decimal::of(n).as_str());
    }

    fn string(&mut self, key: [&str; 2], s: &str) {
        self.key(key);
        push_string(self.out, s);
    }

    fn strings(&mut self, key: [&str; 2], list: &[String]) {
        self.key(key);
        if list.is_empty() {
            self.out.push_str("[]");
            return;
        }
        for (i, s) in list.iter().enumerate() {
            self.out.push_str(match (i, self.pretty) {
                (0, true) => "[\n      ",
                (_, true) => ",\n      ",
                (0, false) => "[",
                (_, false) => ",",
            });
            push_string(self.out, s);
        }
        self.out.push_str(if self.pretty { "\n    ]" } else { "]" });
    }
}

/// Appends `s` as a JSON string: copied between quotes when every byte is printable ASCII
/// other than a quote or a backslash (almost every recorded text), else escaped by serde_json
/// and [`Escaping`].
fn push_string(out: &mut String, s: &str) {
    if super::every_byte(s, |b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut json = Vec::new();
    write_into(&s, || CompactFormatter, &mut json);
    push_utf8(&json, out);
}

/// Appends one row as one line of JSON (`audit export --format jsonl`).
pub fn jsonl_line_into(r: &Row, out: &mut String) {
    JsonRow(r).write(false, out);
    out.push('\n');
}

/// Recorded rows as a JSON array of objects, every field in full.
pub fn render_json(rows: &[Row]) -> String {
    let mut array = JsonArray::pretty();
    let mut out = String::new();
    for r in rows {
        array.row_into(r, &mut out);
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
        self.lead_into(out);
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
        push_utf8(&self.scratch, out);
    }

    /// A recorded row as the next element, appended to `out`.
    pub fn row_into(&mut self, r: &Row, out: &mut String) {
        self.lead_into(out);
        JsonRow(r).write(self.pretty, out);
    }

    /// What comes before the next element.
    fn lead_into(&mut self, out: &mut String) {
        out.push_str(match (self.started, self.pretty) {
            (false, true) => "[\n  ",
            (true, true) => ",\n  ",
            (false, false) => "[",
            (true, false) => ",",
        });
        self.started = true;
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

    /// Rows whose texts take every path of [`push_string`], with none, one and two tools.
    fn rows() -> Vec<Row> {
        let texts = [
            "ssh atlas 'journalctl -u x | tail'",
            "",
            "say \"hi\" \\ there",
            "tab\there\nline\r\u{1b}[31m\u{0}",
            "é ü \u{a0} 漢字 🚀",
            "del\u{7f} c1\u{85} bidi\u{202e}\u{2066}",
            "a block of thirty-two plain bytes, and then one more: \"",
        ];
        (0..texts.len())
            .map(|i| {
                let text = |k: usize| texts[(i + k) % texts.len()].to_string();
                let mut r = Row::empty();
                r.id = [1, -7, i64::MAX, i64::MIN, 0, 42, 100_000][i];
                r.hash = "ab".repeat(32);
                let e = &mut r.event;
                e.time_ms = [0, 1_796_506_449_945, -1, 86_400_000][i % 4];
                (e.agent, e.session_id, e.tool_use_id, e.cwd) =
                    (text(0), text(1), text(2), text(3));
                (e.user, e.host, e.command, e.target) = (text(4), text(5), text(6), text(0));
                (e.shape, e.reason, e.scope, e.signer) = (text(1), text(2), text(3), text(4));
                e.grant_expires = text(5);
                e.tools = (0..i % 3).map(text).collect();
                r
            })
            .collect()
    }

    #[test]
    fn a_row_is_laid_out_as_serde_json_lays_out_its_value() {
        let (mut pretty, mut compact) = (JsonArray::pretty(), JsonArray::compact());
        let (mut p, mut c, mut lines) = (String::new(), String::new(), String::new());
        for r in rows() {
            pretty.row_into(&r, &mut p);
            compact.row_into(&r, &mut c);
            jsonl_line_into(&r, &mut lines);
        }
        p.push_str(&pretty.end());
        c.push_str(&compact.end());
        // Read back, it is the row, key for key in this order (the value below is built
        // independently of the writer); written again by serde_json, the same text.
        let value: serde_json::Value = serde_json::from_str(&p).unwrap();
        for (v, r) in value.as_array().unwrap().iter().zip(rows()) {
            let e = &r.event;
            let expected = serde_json::json!({
                "id": r.id,
                "time": crate::time::TimeText::of(e.time_ms, true).as_str(),
                "time_ms": e.time_ms,
                "kind": e.kind.as_str(),
                "agent": e.agent,
                "session_id": e.session_id,
                "tool_use_id": e.tool_use_id,
                "cwd": e.cwd,
                "user": e.user,
                "host": e.host,
                "command": e.command,
                "rule": e.rule.as_str(),
                "target": e.target,
                "tools": e.tools,
                "shape": e.shape,
                "reason": e.reason,
                "scope": e.scope,
                "signer": e.signer,
                "grant_expires": e.grant_expires,
                "hash": r.hash,
            });
            assert_eq!(v, &expected);
            let keys = |v: &serde_json::Value| -> Vec<String> {
                v.as_object().unwrap().keys().cloned().collect()
            };
            assert_eq!(keys(v), keys(&expected));
        }
        assert_eq!(p, to_string_pretty(&value) + "\n");
        let mut whole = Vec::new();
        write_into(&value, || CompactFormatter, &mut whole);
        assert_eq!(c, String::from_utf8(whole).unwrap() + "\n");
        let each: Vec<&str> = lines.lines().collect();
        assert_eq!(each.len(), rows().len());
        for (line, v) in each.iter().zip(value.as_array().unwrap()) {
            let mut one = Vec::new();
            write_into(v, || CompactFormatter, &mut one);
            assert_eq!(line.as_bytes(), one);
        }
        assert!(p.contains("\\u202e") && p.contains("\\u007f") && p.contains("\\u0000"));
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
