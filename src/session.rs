//! The operator's side: the override (read only from the guard's own environment), the
//! record of every refusal and override, the SessionStart hook and the audit views.

use crate::app::{fail_closed, instead_of_table, refuse};
use crate::cli::{AuditAction, Format, TableFormat};
use crate::config::Paths;
use crate::decide::{OVERRIDE_VAR, Refusal, Rule};
use crate::hook::{self, AgentChoice, Event};
use crate::instead::Suggestion;
use crate::record::{Event as Row, Filter, Kind, Store, Verification};

/// The operator's override reason, from this process's environment: the environment the
/// agent session was started with. Never from the command or a file (decision 0003).
pub fn override_reason() -> Option<String> {
    std::env::var(OVERRIDE_VAR)
        .ok()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
}

fn row(kind: Kind, event: &Event, command: &str) -> Row {
    let mut row = Row::now(kind);
    row.agent = event.agent.name().to_string();
    row.session_id = event.session_id.clone();
    row.tool_use_id = event.tool_use_id.clone();
    row.cwd = event.cwd.clone();
    row.command = command.to_string();
    row
}

/// Records `row` and forwards it to the system log in force; the catalog is read for its
/// `[record] syslog` only when `MESH_GUARD_SYSLOG` does not decide.
fn append(paths: &Paths, row: &Row) -> Result<(), crate::record::RecordError> {
    let env_decides =
        std::env::var_os(crate::record::forward::SYSLOG_VAR).is_some_and(|v| !v.is_empty());
    let catalog = (!env_decides).then(|| paths.lazy_catalog());
    let setting = catalog
        .as_ref()
        .and_then(|c| c.get().ok())
        .and_then(|c| c.syslog().map(str::to_string));
    crate::record::record(&paths.db, row, setting.as_deref()).map(drop)
}

/// The stderr note for a refusal that could not be recorded: addressed to the operator, without
/// host paths (the agent reads it too).
fn not_recorded(paths: &Paths, e: &crate::record::RecordError) -> String {
    let dir = paths
        .db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let state = if !dir.is_dir() {
        "the record's directory is missing"
    } else {
        "the record's directory or file is not writable"
    };
    format!(
        "mesh-guard: not recorded: {e} ({state}). Operator: run `mesh-guard doctor`; the next recorded row will note this gap."
    )
}

/// Answers a refusal in the hook: honoured override (recorded first), or the refusal
/// (recorded, but refused even when the record cannot be written).
pub fn answer_refusal(
    paths: &Paths,
    event: &Event,
    refusal: &Refusal,
    instead: &[Suggestion],
    message: &str,
) -> i32 {
    let command = match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    };
    let mut refused = row(Kind::Refusal, event, &command);
    refused.rule = refusal.rule.id().to_string();
    refused.target = refusal.target.clone();
    refused.tools = instead.iter().map(|s| s.tool.clone()).collect();
    if instead.is_empty() && !refusal.shape.is_empty() {
        refused.shape = refusal.shape.clone();
    }
    // Every row of a session with an override carries its scope (decision 0015).
    if override_reason().is_some() {
        refused.scope = scope_text();
    }
    let overridable = !matches!(refusal.rule, Rule::Override | Rule::SelfProtection);
    let planted = match (override_reason(), overridable) {
        (Some(_), true) => crate::usetime::find(
            &crate::usetime::OVERRIDE_VARIABLES,
            event_cwd(event).as_deref(),
        ),
        _ => None,
    };
    if let Some(planted) = planted {
        // Recorded as an attempt, never as the operator's override (decision 0008).
        let mut attempt = refused.clone();
        attempt.kind = Kind::OverrideAttempt;
        attempt.reason = planted_reason(&planted);
        let text = joined(&planted_message(&planted, false), message);
        let note = append(paths, &attempt).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        return refuse(event.agent, &text, note.as_deref());
    }
    // A scoped override (decision 0015) covers only what its scope names; a malformed
    // scope covers nothing.
    let scope = match (override_reason(), overridable) {
        (Some(_), true) => crate::scope::from_env(),
        _ => None,
    };
    let uncovered = match &scope {
        Some(Err(e)) => Some(format!(
            "its scope ({}) is malformed: {e}",
            crate::scope::SCOPE_VAR
        )),
        Some(Ok(scope)) => {
            let others = every_target(paths, event, &command);
            let all: Vec<&Refusal> = std::iter::once(refusal).chain(others.iter()).collect();
            scope
                .covers(&all, crate::record::now_ms())
                .err()
                .map(|why| {
                    format!(
                        "it does not cover this command ({why}); it covers `{}`",
                        scope.shown()
                    )
                })
        }
        None => None,
    };
    if let Some(why) = uncovered {
        refused.reason = format!("override not honoured: {why}");
        refused.scope = scope_text();
        let text = joined(
            &format!("The operator's override was not honoured: {why}."),
            message,
        );
        let note = append(paths, &refused).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        return refuse(event.agent, &text, note.as_deref());
    }
    if let (Some(reason), true) = (override_reason(), overridable) {
        let mut honoured = refused.clone();
        honoured.kind = Kind::Override;
        honoured.reason = reason;
        honoured.scope = scope_text();
        // The override is honoured only once its row is durably written.
        match append(paths, &honoured) {
            Ok(()) => return 0,
            Err(_) => {
                let text = format!(
                    "{message} The operator's override ({OVERRIDE_VAR}) was not honoured because it could not be recorded in the audit database."
                );
                return refuse(
                    event.agent,
                    &text,
                    Some(
                        "mesh-guard: the override could not be recorded; ask the operator to check the audit database",
                    ),
                );
            }
        }
    }
    if refusal.rule == Rule::Override {
        refused.kind = Kind::OverrideAttempt;
    }
    let note = append(paths, &refused)
        .err()
        .map(|e| not_recorded(paths, &e));
    refuse(event.agent, message, note.as_deref())
}

/// The override's scope as the record keeps it: as the operator wrote it, even malformed.
fn scope_text() -> String {
    std::env::var_os(crate::scope::SCOPE_VAR)
        .map(|v| v.to_string_lossy().chars().take(1000).collect())
        .unwrap_or_default()
}

/// Every mesh object the event's command reaches (only asked under a scoped override).
fn every_target(paths: &Paths, event: &Event, command: &str) -> Vec<Refusal> {
    if !matches!(event.action, hook::Action::Shell { .. }) {
        return Vec::new();
    }
    let Ok(rules) = crate::rules::Rules::load(paths.rules.as_deref()) else {
        return Vec::new();
    };
    let catalog = paths.lazy_catalog();
    let protected = paths.protected(event_cwd(event));
    crate::decide::Guard {
        rules: &rules,
        catalog: &catalog,
        protected: &protected,
    }
    .every_target(command)
}

/// A note put before a refusal's message, the whole kept under the contract's 1,000
/// characters: the note is what the operator must read, so the message's tail gives way.
fn joined(note: &str, message: &str) -> String {
    const LIMIT: usize = 999;
    let text = format!("{note} {message}");
    if text.chars().count() <= LIMIT {
        return text;
    }
    let mut cut: String = text.chars().take(LIMIT - 1).collect();
    cut.push('…');
    cut
}

fn event_cwd(event: &Event) -> Option<std::path::PathBuf> {
    Some(std::path::PathBuf::from(&event.cwd)).filter(|p| p.is_absolute())
}

/// What the record says of a planted variable: where it came from, and its value (the
/// agent's own words, never shown as the operator's reason).
fn planted_reason(planted: &crate::usetime::Planted) -> String {
    let value = std::env::var(planted.variable).unwrap_or_default();
    format!(
        "not honoured: {} is also set by {}, a file the agent can write; value: {}",
        planted.variable,
        planted.shown_file(),
        value.chars().take(200).collect::<String>()
    )
}

/// The refusal's words to the operator. `every` says that every command is refused.
fn planted_message(planted: &crate::usetime::Planted, every: bool) -> String {
    let scope = if every {
        "mesh-guard refuses every command until then"
    } else {
        "the override is not honoured"
    };
    format!(
        "Tell the operator: {} is set by {}, a file the agent can write, so it is not the operator's and {scope}. Operator: remove it from that file, and set it only in the environment you start the session from. Do not change that file or work round this.",
        planted.variable,
        planted.shown_file()
    )
}

/// A guard variable that chooses the guard's binary or files, planted by a file the agent
/// can write: every command is refused and the attempt recorded, in the record the
/// variable did not choose.
pub fn answer_planted(paths: &Paths, event: &Event, planted: &crate::usetime::Planted) -> i32 {
    let command = match &event.action {
        hook::Action::Shell { command } => command.clone(),
        hook::Action::WriteFile { path, .. } => format!("write {path}"),
        hook::Action::Other => String::new(),
    };
    let mut attempt = row(Kind::OverrideAttempt, event, &command);
    attempt.rule = Rule::Override.id().to_string();
    attempt.target = planted.file.display().to_string();
    attempt.reason = planted_reason(planted);
    let trusted = trusted_paths(paths, planted, event_cwd(event).as_deref());
    let note = append(&trusted, &attempt).err().map(|_| {
        "mesh-guard: this refusal could not be recorded in the audit database".to_string()
    });
    let message = format!(
        "{} Other tools that do not run commands or write files still work.",
        planted_message(planted, true)
    );
    refuse(event.agent, &message, note.as_deref())
}

/// The paths with a planted `MESH_GUARD_DB` replaced by the default: the record the
/// agent chose is not where an operator looks.
fn trusted_paths(
    paths: &Paths,
    planted: &crate::usetime::Planted,
    cwd: Option<&std::path::Path>,
) -> Paths {
    // Another variable may have been found first: the record's is looked for on its own.
    let db_planted = planted.variable == "MESH_GUARD_DB"
        || crate::usetime::find(&["MESH_GUARD_DB"], cwd).is_some();
    let planted_db = db_planted
        && std::env::var_os("MESH_GUARD_DB").is_some_and(|v| std::path::Path::new(&v) == paths.db);
    if planted_db {
        Paths {
            db: Paths::resolve(None, None, None).db,
            ..paths.clone()
        }
    } else {
        paths.clone()
    }
}

/// The SessionStart hook: records a session started with an override, and gives the agent
/// the mesh's "instead of" table so it knows the tools before it reaches for ssh.
pub fn start(paths: &Paths, choice: AgentChoice) -> i32 {
    use std::io::Read;
    let mut input = Vec::new();
    let _ = std::io::stdin().take(1024 * 1024).read_to_end(&mut input);
    let json: serde_json::Value = serde_json::from_slice(&input).unwrap_or_default();
    let field = |k: &str| {
        json.get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let agent = choice.fallback().name();
    let mut code = 0;
    // A session whose override (or guard variable) a file the agent can write also sets
    // is recorded as an attempt, not as the operator's start (decision 0008).
    let cwd = Some(std::path::PathBuf::from(field("cwd"))).filter(|p| p.is_absolute());
    let planted = if override_reason().is_some()
        || !crate::usetime::present(&crate::usetime::PATH_VARIABLES).is_empty()
    {
        let names: Vec<&'static str> = crate::usetime::OVERRIDE_VARIABLES
            .iter()
            .chain(crate::usetime::PATH_VARIABLES.iter())
            .copied()
            .collect();
        crate::usetime::find(&names, cwd.as_deref())
    } else {
        None
    };
    if let Some(planted) = &planted {
        let mut row = Row::now(Kind::OverrideAttempt);
        row.agent = agent.to_string();
        row.session_id = field("session_id");
        row.cwd = field("cwd");
        row.rule = Rule::Override.id().to_string();
        row.target = planted.file.display().to_string();
        row.reason = planted_reason(planted);
        if append(&trusted_paths(paths, planted, cwd.as_deref()), &row).is_err() {
            eprintln!("mesh-guard: this session's planted guard variable could not be recorded");
        }
        eprintln!(
            "mesh-guard: {}",
            planted_message(
                planted,
                crate::usetime::PATH_VARIABLES.contains(&planted.variable)
            )
        );
    } else if let Some(reason) = override_reason() {
        let mut row = Row::now(Kind::SessionStart);
        row.agent = agent.to_string();
        row.session_id = field("session_id");
        row.cwd = field("cwd");
        row.reason = reason;
        row.scope = scope_text();
        if let Some(Err(e)) = crate::scope::from_env() {
            eprintln!(
                "mesh-guard: the override's scope is malformed ({e}); no command will pass under it"
            );
        }
        if let Err(e) = append(paths, &row) {
            eprintln!(
                "mesh-guard: the session's override could not be recorded ({e}); it will not be honoured"
            );
            code = 0;
        }
    }
    let catalog = crate::catalog::load(&paths.catalog).ok();
    // The operator may read this where the agent's hooks log; the agent sees no table.
    if catalog.as_ref().is_some_and(|c| c.machine_count() == 0) {
        eprintln!(
            "mesh-guard: warning: the catalog {} has no machine: no machine is guarded by name, only what `[mesh]` domains and networks cover",
            paths.catalog.display()
        );
    }
    let table = catalog.map(|c| instead_of_table(&c, TableFormat::Markdown));
    let context = match table {
        Some(table) => format!(
            "This machine's shell commands are checked by mesh-guard. For the mesh's machines, containers and units, use the mesh's own tools instead of ssh, scp, docker, journalctl or systemctl:\n\n{table}\nIf no tool fits, tell the operator which tool is missing rather than working round the guard."
        ),
        None => "This machine's shell commands are checked by mesh-guard: use the mesh's own tools for its machines, containers and units, not ssh, docker or journalctl.".to_string(),
    };
    let out = serde_json::json!({
        "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": context }
    });
    outln!("{out}");
    code
}

pub struct AuditQuery {
    pub kind: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub session: Option<String>,
    pub limit: Option<usize>,
    pub format: Format,
}

pub fn audit(paths: &Paths, action: Option<AuditAction>, query: AuditQuery) -> i32 {
    if let Some(AuditAction::Verify { log }) = &action {
        return verify(paths, log.as_deref());
    }
    if !paths.db.exists() {
        eprintln!(
            "mesh-guard: no record yet at {} (nothing has been refused or overridden)",
            paths.db.display()
        );
        return 0;
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
            eprintln!("error: {}", e.detail());
            return 2;
        }
    };
    match action {
        Some(AuditAction::Verify { .. }) | Some(AuditAction::Prune { .. }) => 2,
        Some(AuditAction::Export { format: _, after }) => {
            match store.rows_after(after.unwrap_or(0)) {
                Ok(rows) => {
                    let mut text = String::new();
                    for r in &rows {
                        text.push_str(&crate::audit::render_jsonl_line(r));
                    }
                    out!("{text}");
                    0
                }
                Err(e) => {
                    eprintln!("error: {}", e.detail());
                    2
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
                                .map(|(s, n)| serde_json::json!({"shape": s, "refusals": n}))
                                .collect::<Vec<_>>()
                        )
                    ),
                    _ => out!("{}", crate::audit::render_missing(&shapes)),
                }
                0
            }
            Err(e) => {
                eprintln!("error: {}", e.detail());
                2
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
                    eprintln!("error: {e}");
                    return 2;
                }
            };
            let kind = match query.kind.as_deref().map(str::parse::<Kind>).transpose() {
                Ok(k) => k,
                Err(_) => {
                    eprintln!(
                        "error: unknown kind (expected refusal, override, override-attempt or session-start)"
                    );
                    return 2;
                }
            };
            let filter = Filter {
                kind,
                since_ms,
                until_ms,
                session: query.session,
                limit: query.limit.map(|l| l as u64),
            };
            match store.query(&filter) {
                Ok(rows) => {
                    let text = match query.format {
                        Format::Table => {
                            crate::audit::render_table(&rows, crate::audit::terminal_width())
                        }
                        Format::Json => crate::audit::render_json(&rows),
                        Format::Csv => crate::audit::render_csv(&rows),
                    };
                    out!("{text}");
                    0
                }
                Err(e) => {
                    eprintln!("error: {}", e.detail());
                    2
                }
            }
        }
    }
}

/// `audit verify [--log FILE]`: the chain, then the local anchor, then the system log's copy.
/// Exit 0 intact, 1 broken (each finding named), 2 when the record cannot be read.
fn verify(paths: &Paths, log: Option<&std::path::Path>) -> i32 {
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
                eprintln!(
                    "mesh-guard: no event in the log names {ours}; comparing all {} mesh-guard events",
                    all.len()
                );
                Some(all)
            } else {
                Some(mine)
            }
        }
        Some(Err(e)) => {
            eprintln!(
                "error: cannot read {}: {e}",
                log.map(|l| l.display().to_string()).unwrap_or_default()
            );
            return 2;
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
                eprintln!(
                    "mesh-guard: no record yet at {} and no anchor (nothing recorded, or both deleted)",
                    paths.db.display()
                );
                outln!("intact: 0 rows");
                return 0;
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
            eprintln!("error: {}", e.detail());
            return 2;
        }
    };
    let checked = store.verify().and_then(|v| Ok((v, store.check_anchor()?)));
    let (chain, anchored) = match checked {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {}", e.detail());
            return 2;
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
            eprintln!("error: {}", e.detail());
            return 2;
        }
    }
    if let Some(logged) = &logged {
        let stored = match store.hashes().and_then(|h| Ok((h, store.checkpoint()?))) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {}", e.detail());
                return 2;
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
        return 1;
    }
    outln!("intact: {rows} rows, every hash links to the row before it, and the anchor holds");
    0
}

/// `audit prune --before T`.
fn prune(paths: &Paths, before: &str) -> i32 {
    let before_ms = match crate::audit::parse_time(before, crate::record::now_ms()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let env = std::env::var(crate::record::forward::SYSLOG_VAR).ok();
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
            0
        }
        Ok(None) => {
            outln!("nothing older than {before} to prune");
            0
        }
        Err(e) => {
            eprintln!("error: {}", e.detail());
            2
        }
    }
}

/// Used where a hook cannot even begin (the launcher's own failures are in plugin/bin).
pub fn internal_error_message() -> String {
    fail_closed("mesh-guard failed inside (an internal error)")
}
