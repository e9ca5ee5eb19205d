//! `mesh-guard audit`: list, verify, export and prune the record. Every view reads the record
//! through a cursor and prints row by row, so its memory does not grow with the record
//! (decision 0062).

mod verify;

use std::ops::ControlFlow;

use crate::cli::{AuditAction, Format};
use crate::config::Paths;
use crate::error::exit;
use crate::record::{Filter, Kind, RecordError, Row, Store};

pub(crate) use verify::verify;

pub struct AuditQuery {
    pub kind: Vec<String>,
    pub rule: Option<crate::rule::Rule>,
    pub target: Option<String>,
    /// The whole command in the table (also when stdout is not a terminal).
    pub wide: bool,
    pub since: Option<String>,
    pub until: Option<String>,
    pub session: Option<String>,
    /// Only events older than this row: the next page after one that ended with it.
    pub after: Option<i64>,
    pub limit: Option<usize>,
    pub format: Format,
}

pub fn run(paths: &Paths, action: Option<AuditAction>, query: AuditQuery) -> i32 {
    if let Some(AuditAction::Verify { log }) = &action {
        return verify(paths, log.as_deref());
    }
    if !paths.db.exists() {
        errln!(
            "mesh-guard: no record yet at {} (nothing has been refused or overridden)",
            paths.db.display()
        );
        return exit::OK;
    }
    if let Some(AuditAction::Prune { before }) = &action {
        return prune(paths, before);
    }
    let store = match open(paths) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}", e.detail());
            return exit::ERROR;
        }
    };
    let mut out = Sink::default();
    let shown = match action {
        Some(AuditAction::Verify { .. }) | Some(AuditAction::Prune { .. }) => return exit::ERROR,
        Some(AuditAction::Export { format: _, after }) => store
            .each_row_after(after.unwrap_or(0), |r| {
                out.write(|buf| crate::audit::jsonl_line_into(r, buf))
            }),
        Some(AuditAction::Missing { format }) => missing(&store, format, &mut out),
        None => match filter(&query) {
            Ok(filter) => list(&store, &filter, &query, &mut out),
            Err(e) => {
                errln!("error: {e}");
                return exit::ERROR;
            }
        },
    };
    out.flush();
    match shown {
        Ok(()) => exit::OK,
        Err(e) => {
            errln!("error: {}", e.detail());
            exit::ERROR
        }
    }
}

/// Reading never writes, unless the record is of an older schema: then it is migrated
/// forward first (decision 0005).
pub(crate) fn open(paths: &Paths) -> Result<Store, RecordError> {
    match Store::open_read_only(&paths.db) {
        Err(RecordError::NeedsMigration { .. }) => Store::open(&paths.db),
        other => other,
    }
}

/// Why the options select nothing that can be asked.
#[derive(Debug)]
enum FilterError {
    Time(crate::time::TimeError),
    Kind(crate::record::UnknownKind),
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FilterError::Time(e) => e.fmt(f),
            // The command's own words, not the record's `UnknownKind`: `or` before the last.
            FilterError::Kind(e) => {
                let [rest @ .., last] = Kind::ALL.map(Kind::as_str);
                write!(
                    f,
                    "unknown kind `{}` (expected {} or {last})",
                    e.0,
                    rest.join(", ")
                )
            }
        }
    }
}

impl std::error::Error for FilterError {}

/// The rows the options select.
fn filter(query: &AuditQuery) -> Result<Filter, FilterError> {
    let now = crate::record::now_ms();
    let parse = |t: &Option<String>| {
        t.as_deref()
            .map(|t| crate::audit::parse_time(t, now))
            .transpose()
            .map_err(FilterError::Time)
    };
    let (since_ms, until_ms) = (parse(&query.since)?, parse(&query.until)?);
    // Read here, not by clap: its error is the command's own line (tests/audit_cli.rs).
    let mut kinds = Vec::new();
    for k in query.kind.iter().map(|k| k.trim()) {
        kinds.push(k.parse::<Kind>().map_err(FilterError::Kind)?);
    }
    Ok(Filter {
        kinds,
        rule: query.rule,
        target: query.target.clone(),
        since_ms,
        until_ms,
        session: query.session.clone(),
        below_id: query.after,
        // One more than shown: whether there is a next page.
        limit: query.limit.map(|l| (l as u64).saturating_add(1)),
    })
}

/// `audit`: the selected rows, newest first, in the chosen format; a page cut by `--limit`
/// says on stderr how to ask for the next.
fn list(
    store: &Store,
    filter: &Filter,
    query: &AuditQuery,
    out: &mut Sink,
) -> Result<(), RecordError> {
    let limit = query.limit.unwrap_or(usize::MAX);
    // Each row up to the page's end; `None` once past it, with the last row shown kept.
    let mut page = Page::new(limit);
    let last = store.snapshot(|store| -> Result<Option<i64>, RecordError> {
        match query.format {
            Format::Table => {
                use std::io::IsTerminal;
                let whole = query.wide || !std::io::stdout().is_terminal();
                let width = if whole {
                    usize::MAX
                } else {
                    crate::audit::terminal_width()
                };
                // Two passes over one snapshot: the columns' widths, then the lines.
                let shown = Filter {
                    limit: query.limit.map(|l| l as u64),
                    ..filter.clone()
                };
                let extent = store.extent(&shown)?;
                if extent.rows == 0 {
                    let _ = out.push(crate::audit::NO_EVENTS);
                    return Ok(None);
                }
                let widths = crate::audit::Widths::of(&extent);
                let table = widths.table(width);
                let _ = out.push(&table.header());
                store.each_table_row(filter, |r| {
                    page.take(r)?;
                    out.write(|buf| table.line_into(r, buf))
                })?;
            }
            Format::Json => {
                let mut array = crate::audit::JsonArray::pretty();
                store.each_row(filter, |r| {
                    page.take(r)?;
                    out.write(|buf| array.row_into(r, buf))
                })?;
                let _ = out.push(&array.end());
            }
            Format::Csv => {
                let _ = out.push(&crate::audit::csv_header());
                let mut csv = crate::audit::CsvRows::default();
                store.each_row(filter, |r| {
                    page.take(r)?;
                    out.write(|buf| csv.row(r, buf))
                })?;
            }
        }
        Ok((page.more && page.shown > 0).then_some(page.last))
    })??;
    if let Some(last) = last {
        out.flush();
        errln!("mesh-guard: more events follow; add `--after {last}` for the next page");
    }
    Ok(())
}

/// Counts a listing's rows against its page.
struct Page {
    limit: usize,
    shown: usize,
    last: i64,
    /// A row past the page's end was read.
    more: bool,
}

impl Page {
    fn new(limit: usize) -> Page {
        Page {
            limit,
            shown: 0,
            last: 0,
            more: false,
        }
    }

    /// Continue with `r`, or break: it is past the page's end.
    fn take(&mut self, r: &Row) -> ControlFlow<()> {
        if self.shown == self.limit {
            self.more = true;
            return ControlFlow::Break(());
        }
        self.shown += 1;
        self.last = r.id;
        ControlFlow::Continue(())
    }
}

/// `audit missing`: the shapes refusals found no tool for, most refused first. One line per
/// shape, not per row: what it holds grows with the kinds of command refused, not the record.
fn missing(store: &Store, format: Format, out: &mut Sink) -> Result<(), RecordError> {
    let shapes = store.missing()?;
    let text = match format {
        Format::Json => {
            let shapes: Vec<_> = shapes
                .iter()
                .map(|(s, n, w)| serde_json::json!({"shape": s, "refusals": n, "would_refuse": w}))
                .collect();
            format!("{}\n", serde_json::Value::from(shapes))
        }
        Format::Csv => crate::audit::render_missing_csv(&shapes),
        Format::Table => crate::audit::render_missing(&shapes),
    };
    let _ = out.push(&text);
    Ok(())
}

/// Stdout in blocks: a view of a million rows is a few hundred writes, not a million; a
/// write that fails (the reader went away) stops the view.
#[derive(Default)]
pub(crate) struct Sink {
    buf: String,
    closed: bool,
}

impl Sink {
    const BLOCK: usize = 64 * 1024;

    /// Adds `text`; breaks once stdout is closed.
    pub(crate) fn push(&mut self, text: &str) -> ControlFlow<()> {
        self.write(|buf| buf.push_str(text))
    }

    /// Adds what `write` appends to the block; breaks once stdout is closed.
    pub(crate) fn write(&mut self, write: impl FnOnce(&mut String)) -> ControlFlow<()> {
        write(&mut self.buf);
        if self.buf.len() >= Self::BLOCK {
            self.flush();
        }
        if self.closed {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    pub(crate) fn flush(&mut self) {
        if !self.buf.is_empty() && !self.closed {
            self.closed = crate::io::write_out(format_args!("{}", self.buf)).is_err();
        }
        self.buf.clear();
    }
}

/// `audit prune --before T`.
pub(crate) fn prune(paths: &Paths, before: &str) -> i32 {
    let before_ms = match crate::audit::parse_time(before, crate::record::now_ms()) {
        Ok(t) => t,
        Err(e) => {
            errln!("error: {e}");
            return exit::ERROR;
        }
    };
    let env = crate::io::var(crate::record::forward::SYSLOG_VAR).ok();
    let catalog = paths.lazy_catalog();
    let setting = catalog
        .get()
        .ok()
        .and_then(|c| c.syslog().map(str::to_string));
    let mut link = crate::record::Target::resolve(env.as_deref(), setting.as_deref())
        .and_then(|t| crate::record::forward::connect(&t))
        .unwrap_or(crate::record::forward::Link::Off);
    match Store::open(&paths.db).and_then(|mut s| s.prune(before_ms, &mut link)) {
        Ok(Some((row, n))) => {
            outln!(
                "pruned {n} rows; checkpoint row {} keeps hash {}",
                row.id,
                row.hash
            );
            exit::OK
        }
        Ok(None) => {
            outln!("nothing older than {before} to prune");
            exit::OK
        }
        Err(e) => {
            errln!("error: {}", e.detail());
            exit::ERROR
        }
    }
}
