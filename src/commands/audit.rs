//! `mesh-guard audit`: list, verify, export and prune the record.

use crate::cli::{AuditAction, Format};
use crate::config::Paths;
use crate::error::exit;
use crate::record::{Filter, Kind, Store, Verification};

pub struct AuditQuery {
    pub kind: Vec<String>,
    pub rule: Option<String>,
    pub target: Option<String>,
    /// The whole command in the table (also when stdout is not a terminal).
    pub wide: bool,
    pub since: Option<String>,
    pub until: Option<String>,
    pub session: Option<String>,
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
    // Reading never writes, unless the record is of an older schema: then it is migrated
    // forward first (decision 0005).
    let store = match Store::open_read_only(&paths.db) {
        Err(crate::record::RecordError::NeedsMigration { .. }) => Store::open(&paths.db),
        other => other,
    };
    let store = match store {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}", e.detail());
            return exit::ERROR;
        }
    };
    match action {
        Some(AuditAction::Verify { .. }) | Some(AuditAction::Prune { .. }) => exit::ERROR,
        Some(AuditAction::Export { format: _, after }) => {
            match store.rows_after(after.unwrap_or(0)) {
                Ok(rows) => {
                    let mut text = String::new();
                    for r in &rows {
                        text.push_str(&crate::audit::render_jsonl_line(r));
                    }
                    out!("{text}");
                    exit::OK
                }
                Err(e) => {
                    errln!("error: {}", e.detail());
                    exit::ERROR
                }
            }
        }
        Some(AuditAction::Missing { format }) => match store.missing() {
            Ok(shapes) => {
                match format {
                    Format::Json => outln!(
                        "{}",
                        serde_json::json!(
                            shapes
                                .iter()
                                .map(|(s, n, w)| serde_json::json!({"shape": s, "refusals": n, "would_refuse": w}))
                                .collect::<Vec<_>>()
                        )
                    ),
                    Format::Csv => out!("{}", crate::audit::render_missing_csv(&shapes)),
                    Format::Table => out!("{}", crate::audit::render_missing(&shapes)),
                }
                exit::OK
            }
            Err(e) => {
                errln!("error: {}", e.detail());
                exit::ERROR
            }
        },
        None => {
            let now = crate::record::now_ms();
            let parse = |t: &Option<String>| {
                t.as_deref()
                    .map(|t| crate::audit::parse_time(t, now))
                    .transpose()
            };
            let (since_ms, until_ms) = match (parse(&query.since), parse(&query.until)) {
                (Ok(s), Ok(u)) => (s, u),
                (Err(e), _) | (_, Err(e)) => {
                    errln!("error: {e}");
                    return exit::ERROR;
                }
            };
            let mut kinds = Vec::new();
            for k in query.kind.iter().map(|k| k.trim()) {
                match k.parse::<Kind>() {
                    Ok(kind) => kinds.push(kind),
                    Err(_) => {
                        errln!(
                            "error: unknown kind `{k}` (expected refusal, would-refuse, override, override-attempt, session-start, gap or checkpoint)"
                        );
                        return exit::ERROR;
                    }
                }
            }
            let filter = Filter {
                kinds,
                rule: query.rule,
                target: query.target,
                since_ms,
                until_ms,
                session: query.session,
                limit: query.limit.map(|l| l as u64),
            };
            match store.query(&filter) {
                Ok(rows) => {
                    let text = match query.format {
                        Format::Table => {
                            use std::io::IsTerminal;
                            let whole = query.wide || !std::io::stdout().is_terminal();
                            let width = if whole {
                                usize::MAX
                            } else {
                                crate::audit::terminal_width()
                            };
                            crate::audit::render_table(&rows, width)
                        }
                        Format::Json => crate::audit::render_json(&rows),
                        Format::Csv => crate::audit::render_csv(&rows),
                    };
                    out!("{text}");
                    exit::OK
                }
                Err(e) => {
                    errln!("error: {}", e.detail());
                    exit::ERROR
                }
            }
        }
    }
}

/// `audit verify [--log FILE]`: the chain, then the local anchor, then the system log's copy.
/// Exit 0 intact, 1 broken (each finding named), 2 when the record cannot be read.
pub(crate) fn verify(paths: &Paths, log: Option<&std::path::Path>) -> i32 {
    use crate::record::{AnchorCheck, anchor, logcheck};
    let logged = match log.map(std::fs::read) {
        None => None,
        Some(Ok(bytes)) => {
            let all = logcheck::parse(&String::from_utf8_lossy(&bytes));
            let ours = std::path::absolute(&paths.db).unwrap_or_else(|_| paths.db.clone());
            let ours = ours.display().to_string();
            // Events from other records (other users, other databases) in the same file are left
            // out; a log where no event names this path (the record was moved, or reached
            // through another path) is taken whole, and that is said.
            let mine: Vec<_> = all
                .iter()
                .filter(|e| e.record.is_empty() || e.record == ours)
                .cloned()
                .collect();
            if mine.is_empty() && !all.is_empty() {
                errln!(
                    "mesh-guard: no event in the log names {ours}; comparing all {} mesh-guard events",
                    all.len()
                );
                Some(all)
            } else {
                Some(mine)
            }
        }
        Some(Err(e)) => {
            errln!(
                "error: cannot read {}: {e}",
                log.map(|l| l.display().to_string()).unwrap_or_default()
            );
            return exit::ERROR;
        }
    };
    let mut broken = false;
    if !paths.db.exists() {
        let beside = anchor::Anchor::read(&anchor::path_for(&paths.db));
        let second = anchor::Anchor::read(&crate::record::second_anchor_path(&paths.db));
        let found = match (beside, second) {
            (Ok(None), Ok(Some(a))) => Ok(Some(a)),
            (beside, _) => beside,
        };
        match found {
            Ok(None) if logged.as_ref().is_none_or(|l| l.is_empty()) => {
                errln!(
                    "mesh-guard: no record yet at {} and no anchor (nothing recorded, or both deleted)",
                    paths.db.display()
                );
                outln!("intact: 0 rows");
                return exit::OK;
            }
            Ok(None) => {}
            Ok(Some(a)) => {
                outln!(
                    "broken: the database file is gone; its anchor records {} rows up to row {} (hash {})",
                    a.count,
                    a.id,
                    a.hash
                );
                broken = true;
            }
            Err(e) => {
                outln!("broken: the database file is gone, and {e}");
                broken = true;
            }
        }
        if let Some(logged) = &logged {
            let findings = logcheck::compare(logged, &[], 0);
            for f in &findings {
                outln!("{f}");
            }
            broken |= !findings.is_empty();
        }
        return i32::from(broken);
    }
    let store = match Store::open_read_only(&paths.db) {
        Err(crate::record::RecordError::NeedsMigration { .. }) => Store::open(&paths.db),
        other => other,
    };
    let store = match store {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}", e.detail());
            return exit::ERROR;
        }
    };
    let checked = store.verify().and_then(|v| Ok((v, store.check_anchor()?)));
    let (chain, anchored) = match checked {
        Ok(c) => c,
        Err(e) => {
            errln!("error: {}", e.detail());
            return exit::ERROR;
        }
    };
    let rows = match chain {
        Verification::Intact { rows } => rows,
        Verification::Broken { id, breach } => {
            outln!("broken at row {id}: {breach}");
            broken = true;
            0
        }
    };
    match &anchored {
        AnchorCheck::Holds(_) => {}
        AnchorCheck::Missing if rows == 0 => {}
        other => {
            outln!("{other}");
            broken = true;
        }
    }
    match store.check_second_anchor() {
        Ok(Some((_, AnchorCheck::Holds(_)))) | Ok(None) => {}
        Ok(Some((path, found))) => {
            outln!(
                "the second anchor ({}) disagrees: {found}; the record was replaced, or its directory hidden and restored",
                path.display()
            );
            broken = true;
        }
        Err(e) => {
            errln!("error: {}", e.detail());
            return exit::ERROR;
        }
    }
    if let Some(logged) = &logged {
        let stored = match store.hashes().and_then(|h| Ok((h, store.checkpoint()?))) {
            Ok(s) => s,
            Err(e) => {
                errln!("error: {}", e.detail());
                return exit::ERROR;
            }
        };
        let (stored, checkpoint) = stored;
        // A checkpoint excuses the rows before it only if the log saw the prune too.
        let pruned = if logged
            .iter()
            .any(|e| e.id == checkpoint && e.kind == "checkpoint")
        {
            checkpoint
        } else {
            0
        };
        let findings = logcheck::compare(logged, &stored, pruned);
        for f in &findings {
            outln!("{f}");
        }
        broken |= !findings.is_empty();
        if logged.is_empty() && !stored.is_empty() {
            outln!("broken: the log holds no event of this record");
            broken = true;
        }
        if !broken {
            outln!("the log's {} events match the database", logged.len());
        }
    }
    if broken {
        return exit::NO;
    }
    outln!("intact: {rows} rows, every hash links to the row before it, and the anchor holds");
    exit::OK
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
