//! The operators' views of the record: a table for the terminal, JSON and CSV for tools, and the
//! shapes that still need a mesh tool. Pure functions over rows the store returned.

use std::borrow::Cow;

use serde::Serialize;

use crate::record::Row;

pub use crate::time::{format_time, parse_time};

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

/// Rules and targets longer than this are cut, so the command keeps most of the line.
const MAX_LABEL: usize = 24;
/// On a narrow terminal, rules and targets give up width down to this for the command.
const MIN_LABEL: usize = 8;
/// The command column keeps at least this many characters, even past the terminal's edge.
const MIN_COMMAND: usize = 12;
/// Session ids are shown by this prefix, which `audit --session` accepts back.
const SESSION_PREFIX: usize = 8;
const GAP: &str = "  ";

/// The table's columns before the command; those from `RULE` on are labels, cut to fit.
const COLUMNS: [&str; 7] = [
    "TIME", "KIND", "SESSION", "RULE", "TARGET", "SCOPE", "REASON",
];
/// The first label column: labels give up width before the command does.
const FIRST_LABEL: usize = 3;

/// What the table says when no row matches.
pub const NO_EVENTS: &str = "no recorded events match\n";

/// Recorded rows as aligned columns: time (UTC, to the second), kind, session (its first 8
/// characters), rule, target, the override's scope and reason, and the command, cut with an
/// ellipsis to fit `width` (`usize::MAX`: the whole command).
pub fn render_table(rows: &[Row], width: usize) -> String {
    if rows.is_empty() {
        return NO_EVENTS.to_string();
    }
    let mut widths = Widths::default();
    rows.iter().for_each(|r| widths.measure(r));
    let table = widths.table(width);
    let mut out = table.header();
    for r in rows {
        out.push_str(&table.line(r));
    }
    out
}

/// The widest cell of each column before the command, measured row by row: the table's first
/// pass over the record, so that its lines, printed in a second pass, align as if every row
/// had been held at once.
#[derive(Debug, Clone)]
pub struct Widths([usize; COLUMNS.len()]);

impl Default for Widths {
    fn default() -> Self {
        Widths(COLUMNS.map(|h| h.chars().count()))
    }
}

impl Widths {
    pub fn measure(&mut self, r: &Row) {
        // Cleaning keeps the number of characters, so the raw fields are counted.
        let e = &r.event;
        let cells = [
            format_time(e.time_ms, false).chars().count(),
            e.kind.as_str().chars().count(),
            e.session_id.chars().take(SESSION_PREFIX).count(),
            e.rule.chars().count(),
            e.target.chars().count(),
            e.scope.chars().count(),
            e.reason.chars().count(),
        ];
        for (w, c) in self.0.iter_mut().zip(cells) {
            *w = (*w).max(c);
        }
    }

    /// The layout for a terminal `width` columns wide.
    pub fn table(self, width: usize) -> Table {
        let mut widths = self.0;
        for w in &mut widths[FIRST_LABEL..] {
            *w = (*w).min(MAX_LABEL);
        }
        let used = |widths: &[usize]| widths.iter().sum::<usize>() + GAP.len() * widths.len();
        // Narrow terminal: the label columns shrink first, one character at a time from the
        // widest, so the command stays readable.
        while width.saturating_sub(used(&widths)) < MIN_COMMAND {
            let (widest, &w) = widths[FIRST_LABEL..]
                .iter()
                .enumerate()
                .rev()
                .max_by_key(|(_, w)| **w)
                .unwrap_or((0, &0));
            if w <= MIN_LABEL {
                break;
            }
            widths[FIRST_LABEL + widest] -= 1;
        }
        let command = width.saturating_sub(used(&widths)).max(MIN_COMMAND);
        Table { widths, command }
    }
}

/// The table's layout: each column's width, the command's last.
pub struct Table {
    widths: [usize; COLUMNS.len()],
    command: usize,
}

impl Table {
    /// The header line.
    pub fn header(&self) -> String {
        self.render(&COLUMNS.map(Cow::Borrowed), "COMMAND")
    }

    /// One row's line.
    pub fn line(&self, r: &Row) -> String {
        let e = &r.event;
        let session = clean(&e.session_id);
        let session = match session.char_indices().nth(SESSION_PREFIX) {
            Some((end, _)) => Cow::Owned(session[..end].to_string()),
            None => session,
        };
        let cells = [
            Cow::Owned(format_time(e.time_ms, false)),
            Cow::Borrowed(e.kind.as_str()),
            session,
            clean(&e.rule),
            clean(&e.target),
            clean(&e.scope),
            clean(&e.reason),
        ];
        self.render(&cells, &e.command)
    }

    fn render(&self, cells: &[Cow<'_, str>; COLUMNS.len()], command: &str) -> String {
        let mut line = String::new();
        for (cell, &w) in cells.iter().zip(&self.widths) {
            let cell = fit(cell, w);
            let pad = w.saturating_sub(cell.chars().count());
            line.push_str(&cell);
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(GAP);
        }
        line.push_str(&fit(command, self.command));
        line.truncate(line.trim_end().len());
        line.push('\n');
        line
    }
}

/// `s` on one line, without the control and bidirectional characters an agent could use to
/// rewrite what the operator's terminal shows.
fn clean(s: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match c {
            c if !unsafe_char(c) => c,
            c if c.is_whitespace() => ' ',
            _ => '\u{fffd}',
        })
        .collect()
}

/// `s` cleaned and cut to at most `width` characters, the cut marked with an ellipsis.
fn fit(s: &str, width: usize) -> Cow<'_, str> {
    let s = clean(s);
    if s.char_indices().nth(width).is_none() {
        return s;
    }
    // The first `width - 1` characters, and the ellipsis.
    let end = s
        .char_indices()
        .nth(width.saturating_sub(1))
        .map_or(0, |(at, _)| at);
    let mut cut = s[..end].to_string();
    cut.push('…');
    Cow::Owned(cut)
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
            hash: &r.hash,
        }
    }
}

/// One row as one line of JSON (`audit export --format jsonl`).
pub fn render_jsonl_line(r: &Row) -> String {
    let mut line = serde_json::to_string(&JsonRow::of(r)).unwrap_or_default();
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
        let text = text.unwrap_or_else(|_| "null".to_string());
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

const CSV_HEADER: [&str; 18] = [
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
    "hash",
];

/// Recorded rows as RFC 4180 CSV with a header row; `tools` are joined with `; `. Fields are
/// written as recorded: a spreadsheet may read a command starting with `=` as a formula.
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

/// `audit missing --format csv`: the shapes and their counts, RFC 4180.
pub fn render_missing_csv(shapes: &[(String, u64)]) -> String {
    let mut out = MISSING_CSV_HEADER.to_string();
    for (shape, n) in shapes {
        out.push_str(&missing_csv_row(shape, *n));
    }
    out
}

pub const MISSING_CSV_HEADER: &str = "shape,refusals\r\n";

/// One shape's CSV line.
pub fn missing_csv_row(shape: &str, n: u64) -> String {
    let mut out = String::new();
    csv_line(&mut out, [shape.to_string(), n.to_string()]);
    out
}

/// What `audit missing` says when every refusal named a tool.
pub const NO_MISSING: &str = "every recorded refusal named a mesh tool\n";

/// The command shapes refusals found no tool for, with how often, as `Store::missing` returns
/// them: what the operator should have a mesh tool made for.
pub fn render_missing(shapes: &[(String, u64)]) -> String {
    let Some(most) = shapes.iter().map(|(_, n)| *n).max() else {
        return NO_MISSING.to_string();
    };
    let table = MissingTable::new(most);
    let mut out = table.header();
    for (shape, n) in shapes {
        out.push_str(&table.line(shape, *n));
    }
    out
}

/// The missing shapes' table, laid out from the largest count (the first, as the store
/// orders them), so each line is printed as it is read.
pub struct MissingTable {
    width: usize,
}

impl MissingTable {
    pub fn new(largest: u64) -> Self {
        MissingTable {
            width: largest.to_string().len().max("COUNT".len()),
        }
    }

    pub fn header(&self) -> String {
        format!(
            "{:>width$}  SHAPE NEEDING A TOOL\n",
            "COUNT",
            width = self.width
        )
    }

    pub fn line(&self, shape: &str, n: u64) -> String {
        let shape = if shape.is_empty() {
            "(shape not recorded)".to_string()
        } else {
            clean(shape).into_owned()
        };
        format!("{n:>width$}  {shape}\n", width = self.width)
    }
}
