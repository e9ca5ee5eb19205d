//! The operators' views of the record: a table for the terminal, JSON and CSV for tools, and the
//! shapes that still need a mesh tool. Pure functions over one row at a time (or a slice, for
//! callers that hold them), so a view can print a record of any size as it reads it.

use serde::Serialize;

use crate::record::Row;

pub use crate::time::{format_time, parse_time};

mod table;
pub(crate) use table::clean;
pub use table::{NO_EVENTS, Table, Widths, render_table};

/// The width tables are cut to when `COLUMNS` says nothing usable.
pub const DEFAULT_WIDTH: usize = 100;

/// The terminal width from `COLUMNS`, else [`DEFAULT_WIDTH`].
pub fn terminal_width() -> usize {
    width_from(crate::io::var("COLUMNS").ok().as_deref())
}

/// The width a `COLUMNS` value gives.
pub fn width_from(columns: Option<&str>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&w| w > 0)
        .unwrap_or(DEFAULT_WIDTH)
}

/// One row as the JSON views write it: every field in full, in this order.
#[derive(Serialize)]
pub struct JsonRow<'a> {
    id: i64,
    time: String,
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
            time: format_time(e.time_ms, true),
            time_ms: e.time_ms,
            kind: e.kind.as_str(),
            agent: &e.agent,
            session_id: &e.session_id,
            tool_use_id: &e.tool_use_id,
            cwd: &e.cwd,
            user: &e.user,
            host: &e.host,
            command: &e.command,
            rule: &e.rule,
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

/// One row as one line of JSON (`audit export --format jsonl`).
pub fn render_jsonl_line(r: &Row) -> String {
    let mut line = json_escaped(serde_json::to_string(&JsonRow::of(r)).unwrap_or_default());
    line.push('\n');
    line
}

/// Recorded rows as a JSON array of objects, every field in full.
pub fn render_json(rows: &[Row]) -> String {
    let mut array = JsonArray::pretty();
    let mut out: String = rows
        .iter()
        .map(|r| array.element(&JsonRow::of(r)))
        .collect();
    out.push_str(&array.end());
    out
}

/// A JSON array written element by element, exactly as `serde_json` writes it whole: pretty
/// (`audit --format json`, ending in a newline) or compact (`audit missing --format json`).
pub struct JsonArray {
    pretty: bool,
    started: bool,
}

impl JsonArray {
    pub fn pretty() -> Self {
        JsonArray {
            pretty: true,
            started: false,
        }
    }

    pub fn compact() -> Self {
        JsonArray {
            pretty: false,
            started: false,
        }
    }

    /// The text of the next element, with what comes before it.
    pub fn element(&mut self, v: &impl Serialize) -> String {
        let lead = match (self.started, self.pretty) {
            (false, true) => "[\n  ",
            (true, true) => ",\n  ",
            (false, false) => "[",
            (true, false) => ",",
        };
        self.started = true;
        let text = if self.pretty {
            serde_json::to_string_pretty(v)
        } else {
            serde_json::to_string(v)
        };
        let text = json_escaped(text.unwrap_or_else(|_| "null".to_string()));
        let mut out = String::with_capacity(lead.len() + text.len() + 64);
        out.push_str(lead);
        // A pretty element is indented one level; JSON strings hold no raw newline.
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 && self.pretty {
                out.push_str("\n  ");
            }
            out.push_str(line);
        }
        out
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

const CSV_HEADER: [&str; 20] = [
    "id",
    "time",
    "time_ms",
    "kind",
    "agent",
    "session_id",
    "tool_use_id",
    "cwd",
    "user",
    "host",
    "command",
    "rule",
    "target",
    "tools",
    "shape",
    "reason",
    "scope",
    "signer",
    "grant_expires",
    "hash",
];

/// Recorded rows as RFC 4180 CSV with a header row; `tools` are joined with `; `. Fields are
/// written as recorded, control characters drawn (`visible`): a spreadsheet may still read a
/// command starting with `=` as a formula.
pub fn render_csv(rows: &[Row]) -> String {
    let mut out = csv_header();
    for r in rows {
        out.push_str(&csv_row(r));
    }
    out
}

/// The CSV header line.
pub fn csv_header() -> String {
    let mut out = String::new();
    csv_line(&mut out, CSV_HEADER.iter().map(|h| h.to_string()));
    out
}

/// One row as a CSV line.
pub fn csv_row(r: &Row) -> String {
    let e = &r.event;
    let mut out = String::new();
    csv_line(
        &mut out,
        [
            r.id.to_string(),
            format_time(e.time_ms, true),
            e.time_ms.to_string(),
            e.kind.to_string(),
            e.agent.clone(),
            e.session_id.clone(),
            e.tool_use_id.clone(),
            e.cwd.clone(),
            e.user.clone(),
            e.host.clone(),
            e.command.clone(),
            e.rule.clone(),
            e.target.clone(),
            e.tools.join("; "),
            e.shape.clone(),
            e.reason.clone(),
            e.scope.clone(),
            e.signer.clone(),
            e.grant_expires.clone(),
            r.hash.clone(),
        ],
    );
    out
}

fn csv_line(out: &mut String, fields: impl IntoIterator<Item = String>) {
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let f = visible(&f);
        if f.contains([',', '"', '\r', '\n']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(&f);
        }
    }
    out.push_str("\r\n");
}

/// A recorded text as CSV shows it: the agent wrote it, and an operator reads it in a
/// terminal, so a control character is drawn, not obeyed (ESC as `␛`, CR as `␍`, BEL as `␇`:
/// Unicode's control pictures), and a C1 control or a bidirectional override is U+FFFD, as
/// the table shows them. A line feed and a tab are kept: a quoted field holds them as data.
pub(crate) fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let drawn = |c: char| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c);
    if !s.chars().any(drawn) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match c {
            c if !drawn(c) => c,
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\u{7f}' => '\u{2421}',
            _ => '\u{fffd}',
        })
        .collect()
}

/// The characters that reorder what a terminal shows (U+202A–U+202E, U+2066–U+2069).
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// JSON as `serde_json` writes it, with what it leaves raw in strings escaped too: DEL, the
/// C1 controls and the bidirectional overrides become `\uXXXX`, read back as the same text.
/// Outside strings JSON is ASCII, so every such character is inside one.
pub(crate) fn json_escaped(text: String) -> String {
    let raw = |c: char| c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || is_bidi_control(c);
    if !text.chars().any(raw) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `audit missing --format csv`: the shapes and their counts, RFC 4180.
pub fn render_missing_csv(shapes: &[(String, u64, u64)]) -> String {
    let mut out = String::new();
    csv_line(
        &mut out,
        ["shape", "refusals", "would_refuse"].map(String::from),
    );
    for (shape, refused, reported) in shapes {
        csv_line(
            &mut out,
            [shape.clone(), refused.to_string(), reported.to_string()],
        );
    }
    out
}

/// The command shapes refusals found no tool for, with how often, as `Store::missing` returns
/// them: what the operator should have a mesh tool made for. The would-refuse rows of
/// report-only mode get their own column once there are any.
pub fn render_missing(shapes: &[(String, u64, u64)]) -> String {
    if shapes.is_empty() {
        return "every recorded refusal named a mesh tool\n".to_string();
    }
    let reported = shapes.iter().any(|&(_, _, n)| n > 0);
    let (first, second) = if reported {
        ("REFUSED", "WOULD-REFUSE  ")
    } else {
        ("COUNT", "")
    };
    let width = |column: &str, n: fn(&(String, u64, u64)) -> u64| {
        shapes
            .iter()
            .map(|s| n(s).to_string().len())
            .max()
            .unwrap_or(0)
            .max(column.len())
    };
    let w1 = width(first, |s| s.1);
    let w2 = width(second.trim_end(), |s| s.2);
    let mut out = format!("{first:>w1$}  {second}SHAPE NEEDING A TOOL\n");
    for (shape, refused, would) in shapes {
        let shape = if shape.is_empty() {
            "(shape not recorded)".to_string()
        } else {
            clean(shape).into_owned()
        };
        out.push_str(&format!("{refused:>w1$}  "));
        if reported {
            out.push_str(&format!("{would:>w2$}  "));
        }
        out.push_str(&format!("{shape}\n"));
    }
    out
}
