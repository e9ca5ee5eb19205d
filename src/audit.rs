//! The operators' views of the record: a table for the terminal, JSON and CSV for tools, and the
//! shapes that still need a mesh tool. Pure functions over rows the store returned.

use serde_json::{Value, json};

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

/// Recorded rows as aligned columns: time (UTC, to the second), kind, session (its first 8
/// characters), rule, target, the override's scope and reason, and the command, cut with an
/// ellipsis to fit `width` (`usize::MAX`: the whole command).
pub fn render_table(rows: &[Row], width: usize) -> String {
    if rows.is_empty() {
        return "no recorded events match\n".to_string();
    }
    let header: Vec<String> = COLUMNS
        .iter()
        .chain(&["COMMAND"])
        .map(|h| h.to_string())
        .collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let e = &r.event;
            vec![
                format_time(e.time_ms, false),
                e.kind.to_string(),
                clean(&e.session_id).chars().take(SESSION_PREFIX).collect(),
                clean(&e.rule),
                clean(&e.target),
                clean(&e.scope),
                clean(&e.reason),
                clean(&e.command),
            ]
        })
        .collect();
    let mut widths = [0usize; COLUMNS.len()];
    for row in std::iter::once(&header).chain(&cells) {
        for (w, cell) in widths.iter_mut().zip(row.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
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
    let command_width = width.saturating_sub(used(&widths)).max(MIN_COMMAND);
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&cells) {
        let mut line = String::new();
        for (cell, w) in row.iter().zip(widths) {
            let cell = fit(cell, w);
            let pad = w.saturating_sub(cell.chars().count());
            line.push_str(&cell);
            line.extend(std::iter::repeat_n(' ', pad));
            line.push_str(GAP);
        }
        line.push_str(&fit(&row[COLUMNS.len()], command_width));
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `s` on one line, without the control and bidirectional characters an agent could use to
/// rewrite what the operator's terminal shows.
pub(crate) fn clean(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
                if c.is_whitespace() { ' ' } else { '\u{fffd}' }
            } else {
                c
            }
        })
        .collect()
}

/// `s` cleaned and cut to at most `width` characters, the cut marked with an ellipsis.
fn fit(s: &str, width: usize) -> String {
    let s = clean(s);
    if s.chars().count() <= width {
        return s;
    }
    let mut cut: String = s.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

fn object(r: &Row) -> Value {
    let e = &r.event;
    json!({
        "id": r.id,
        "time": format_time(e.time_ms, true),
        "time_ms": e.time_ms,
        "kind": e.kind.as_str(),
        "agent": e.agent,
        "session_id": e.session_id,
        "tool_use_id": e.tool_use_id,
        "cwd": e.cwd,
        "user": e.user,
        "host": e.host,
        "command": e.command,
        "rule": e.rule,
        "target": e.target,
        "tools": e.tools,
        "shape": e.shape,
        "reason": e.reason,
        "scope": e.scope,
        "hash": r.hash,
    })
}

/// One row as one line of JSON (`audit export --format jsonl`).
pub fn render_jsonl_line(r: &Row) -> String {
    let mut line = object(r).to_string();
    line.push('\n');
    line
}

/// Recorded rows as a JSON array of objects, every field in full.
pub fn render_json(rows: &[Row]) -> String {
    let array = Value::Array(rows.iter().map(object).collect());
    let mut out = serde_json::to_string_pretty(&array).unwrap_or_else(|_| "[]".to_string());
    out.push('\n');
    out
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
    let mut out = String::new();
    csv_line(&mut out, CSV_HEADER.iter().map(|h| h.to_string()));
    for r in rows {
        let e = &r.event;
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
    }
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
            clean(shape)
        };
        out.push_str(&format!("{refused:>w1$}  "));
        if reported {
            out.push_str(&format!("{would:>w2$}  "));
        }
        out.push_str(&format!("{shape}\n"));
    }
    out
}
