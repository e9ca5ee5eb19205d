//! The operators' views of the record: a table for the terminal, JSON and CSV for tools, and the
//! shapes that still need a mesh tool. Pure functions over one row at a time (or a slice, for
//! callers that hold them), so a view can print a record of any size as it reads it.

use crate::record::Row;

pub use crate::time::{format_time, parse_time};

mod json;
mod table;
pub use json::{JsonArray, jsonl_line_into, render_json, to_string_pretty};
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
    let mut out = String::new();
    CsvRows::default().row(r, &mut out);
    out
}

/// Rows as CSV lines, each appended to the caller's text; the room the joined tools are
/// written in is kept from row to row.
#[derive(Default)]
pub struct CsvRows {
    tools: String,
}

impl CsvRows {
    /// Appends one row's line to `out`.
    pub fn row(&mut self, r: &Row, out: &mut String) {
        let e = &r.event;
        let (id, time_ms) = (Decimal::of(r.id), Decimal::of(e.time_ms));
        self.tools.clear();
        for (i, t) in e.tools.iter().enumerate() {
            if i > 0 {
                self.tools.push_str("; ");
            }
            self.tools.push_str(t);
        }
        let time = crate::time::TimeText::of(e.time_ms, true);
        let fields: [&str; 20] = [
            id.as_str(),
            time.as_str(),
            time_ms.as_str(),
            e.kind.as_str(),
            &e.agent,
            &e.session_id,
            &e.tool_use_id,
            &e.cwd,
            &e.user,
            &e.host,
            &e.command,
            e.rule.as_str(),
            &e.target,
            &self.tools,
            &e.shape,
            &e.reason,
            &e.scope,
            &e.signer,
            &e.grant_expires,
            &r.hash,
        ];
        csv_fields(out, fields);
    }
}

/// Whether `keep` keeps every byte of `s`. The views ask it of every text they print (is it
/// plain printable ASCII?). Asked of every byte without stopping at the first it rejects, it
/// is compiled to vector compares, 16 bytes at a time, instead of a test and a jump a byte.
pub(crate) fn every_byte(s: &str, keep: impl Fn(u8) -> bool) -> bool {
    s.bytes().fold(true, |all, b| all & keep(b))
}

/// An integer's decimal text, on the stack.
struct Decimal {
    bytes: [u8; 20],
    start: usize,
}

impl Decimal {
    fn of(n: i64) -> Decimal {
        let mut d = Decimal {
            bytes: [0; 20],
            start: 20,
        };
        let mut rest = n.unsigned_abs();
        loop {
            d.start -= 1;
            d.bytes[d.start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if n < 0 {
            d.start -= 1;
            d.bytes[d.start] = b'-';
        }
        d
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[self.start..]).unwrap_or("")
    }
}

fn csv_line(out: &mut String, fields: impl IntoIterator<Item = String>) {
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        csv_field(out, &f);
    }
    out.push_str("\r\n");
}

fn csv_fields<'f>(out: &mut String, fields: impl IntoIterator<Item = &'f str>) {
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        csv_field(out, f);
    }
    out.push_str("\r\n");
}

/// One field, drawn (`visible`) and quoted when it must be.
fn csv_field(out: &mut String, f: &str) {
    // Printable ASCII without a comma or a quote is written as it is (most fields).
    if every_byte(f, |b| (0x20..0x7f).contains(&b) && b != b',' && b != b'"') {
        out.push_str(f);
        return;
    }
    let f = visible(f);
    if f.contains([',', '"', '\r', '\n']) {
        out.push('"');
        out.push_str(&f.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(&f);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_finds_a_rejected_byte_wherever_it_is() {
        let plain = |s: &str| every_byte(s, |b| b != b'!');
        for n in [0, 1, 31, 32, 33, 64, 95] {
            let s = "x".repeat(n);
            assert!(plain(&s), "{n}");
            for at in 0..n {
                let mut bad = s.clone().into_bytes();
                bad[at] = b'!';
                assert!(!plain(std::str::from_utf8(&bad).unwrap()), "{n} {at}");
            }
        }
    }

    #[test]
    fn decimals_are_what_formatting_writes() {
        for n in [
            0,
            7,
            -7,
            10,
            99,
            1_000_000,
            i64::MAX,
            i64::MIN,
            -1_765_000_000_000,
        ] {
            assert_eq!(Decimal::of(n).as_str(), n.to_string());
        }
    }
}
