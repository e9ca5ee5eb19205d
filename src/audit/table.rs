//! The table for a terminal: aligned columns, labels and the command cut to the width, laid out
//! from a first pass over the rows (`Widths`) and printed in a second (`Table`).

use std::borrow::Cow;

use super::format_time;
use crate::record::Row;
use crate::time::TimeText;

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
            e.rule.as_str().chars().count(),
            e.target.chars().count(),
            e.scope.chars().count(),
            e.reason.chars().count(),
        ];
        for (w, c) in self.0.iter_mut().zip(cells) {
            *w = (*w).max(c);
        }
    }

    /// The widths the rows of `extent` need: what measuring each would give. A time's width
    /// grows with its year's distance from zero, so the earliest and the latest bound it.
    pub fn of(extent: &crate::record::Extent) -> Widths {
        let time = [extent.earliest_ms, extent.latest_ms]
            .map(|t| format_time(t, false).chars().count())
            .into_iter()
            .max()
            .unwrap_or(0);
        let [kind, session, rule, target, scope, reason] = extent
            .longest
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let cells = [
            time,
            kind,
            session.min(SESSION_PREFIX),
            rule,
            target,
            scope,
            reason,
        ];
        let mut widths = Widths::default();
        for (w, c) in widths.0.iter_mut().zip(cells) {
            *w = (*w).max(c);
        }
        widths
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
        let mut line = String::new();
        self.render_into(&COLUMNS, "COMMAND", &mut line);
        line
    }

    /// One row's line.
    pub fn line(&self, r: &Row) -> String {
        let mut line = String::new();
        self.line_into(r, &mut line);
        line
    }

    /// [`Table::line`] appended to `out`.
    pub fn line_into(&self, r: &Row, out: &mut String) {
        let e = &r.event;
        let time = TimeText::of(e.time_ms, false);
        let session = clean(&e.session_id);
        let session = match session.char_indices().nth(SESSION_PREFIX) {
            Some((end, _)) => &session[..end],
            None => &session,
        };
        let (rule, target) = (clean(e.rule.as_str()), clean(&e.target));
        let (scope, reason) = (clean(&e.scope), clean(&e.reason));
        let cells = [
            time.as_str(),
            e.kind.as_str(),
            session,
            &rule,
            &target,
            &scope,
            &reason,
        ];
        self.render_into(&cells, &e.command, out);
    }

    fn render_into(&self, cells: &[&str; COLUMNS.len()], command: &str, out: &mut String) {
        let start = out.len();
        for (cell, &w) in cells.iter().zip(&self.widths) {
            let shown = push_fit(out, cell, w);
            out.extend(std::iter::repeat_n(' ', w.saturating_sub(shown)));
            out.push_str(GAP);
        }
        push_fit(out, command, self.command);
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
        out.push('\n');
    }
}

/// Appends `s` cleaned and cut to `width` characters (as [`fit`]), giving how many
/// characters it appended.
fn push_fit(out: &mut String, s: &str, width: usize) -> usize {
    // Printable ASCII (most cells) is clean as it is, one character a byte.
    if super::every_byte(s, |b| (0x20..0x7f).contains(&b)) {
        if s.len() <= width {
            out.push_str(s);
            return s.len();
        }
        let keep = width.saturating_sub(1);
        out.push_str(&s[..keep]);
        out.push('…');
        return keep + 1;
    }
    let fitted = fit(s, width);
    out.push_str(&fitted);
    fitted.chars().count()
}

/// `s` on one line, without the control and bidirectional characters an agent could use to
/// rewrite what the operator's terminal shows.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() || super::is_bidi_control(c);
    // Printable ASCII (most cells) is clean, and is told by its bytes alone.
    if super::every_byte(s, |b| (0x20..0x7f).contains(&b)) || !s.chars().any(unsafe_char) {
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
