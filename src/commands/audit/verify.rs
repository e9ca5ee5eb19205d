//! `mesh-guard audit verify`: the chain, the anchors, and the system log's copy.

use crate::config::Paths;
use crate::error::exit;
use std::path::Path;

use crate::record::{Verification, logcheck};

/// `audit verify [--log FILE]`: the chain, then the local anchor, then the system log's copy.
/// Exit 0 intact, 1 broken (each finding named), 2 when the record cannot be read.
pub(crate) fn verify(paths: &Paths, log: Option<&Path>) -> i32 {
    use crate::record::{AnchorCheck, anchor};
    let logged = match log.map(|l| read_log(l, &paths.db)) {
        None => None,
        Some(Ok(logged)) => Some(logged),
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
            Ok(None) if logged.as_ref().is_none_or(|l| l.events == 0) => {
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
            let mut nothing = logcheck::Merge::new(std::iter::empty(), 0);
            let each = logged.log.each(logged.whole, |e| {
                if let Some(f) = nothing.next(&e) {
                    outln!("{f}");
                    broken = true;
                }
            });
            if let Err(e) = each {
                errln!("error: the log's events: {e}");
                return exit::ERROR;
            }
        }
        return i32::from(broken);
    }
    let store = match super::open(paths) {
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
        let mut differs = false;
        let has_rows = match store.compare_log(&logged.log, logged.whole, |f| {
            outln!("{f}");
            differs = true;
        }) {
            Ok(has_rows) => has_rows,
            Err(e) => {
                errln!("error: {}", e.detail());
                return exit::ERROR;
            }
        };
        broken |= differs;
        if logged.events == 0 && has_rows {
            outln!("broken: the log holds no event of this record");
            broken = true;
        }
        if !broken {
            outln!("the log's {} events match the database", logged.events);
        }
    }
    if broken {
        return exit::NO;
    }
    outln!("intact: {rows} rows, every hash links to the row before it, and the anchor holds");
    exit::OK
}

/// The events of a log file to compare with the record at `db`, kept on disk.
struct Logged {
    log: logcheck::Spilled,
    /// Every record's events are compared: none named this one.
    whole: bool,
    /// How many events are compared.
    events: u64,
}

fn read_log(path: &Path, db: &Path) -> Result<Logged, logcheck::SpillError> {
    let file = std::fs::File::open(path)?;
    let ours = std::path::absolute(db).unwrap_or_else(|_| db.to_path_buf());
    let ours = ours.display().to_string();
    let log = logcheck::Spilled::read(std::io::BufReader::new(file), &ours)?;
    for line in &log.too_long {
        errln!(
            "mesh-guard: line {line} of {} skipped: longer than {} MiB",
            path.display(),
            logcheck::MAX_LINE >> 20
        );
    }
    // Events from other records (other users, other databases) in the same file are left
    // out; a log where no event names this path (the record was moved, or reached through
    // another path) is taken whole, and that is said.
    let whole = log.mine == 0 && log.all > 0;
    if whole {
        errln!(
            "mesh-guard: no event in the log names {ours}; comparing all {} mesh-guard events",
            log.all
        );
    }
    let events = if whole { log.all } else { log.mine };
    Ok(Logged { log, whole, events })
}
