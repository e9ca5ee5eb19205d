//! The commands: each reads its inputs, runs one decision or view, and maps the result
//! to the contract's output and exit code.

use crate::catalog::{self, Catalog, LazyCatalog};
use crate::cli::{Args, CatalogAction, Command, TableFormat};
use crate::config::Paths;
use crate::decide::{Decision, Guard, PassReason, Refusal, Rule};
use crate::hook::{self, Action, Agent, AgentChoice};
use crate::instead::{self, Known, Suggestion};
use crate::message;
use crate::rules::Rules;
use std::io::{Read, Write};
use std::path::PathBuf;

pub fn run(args: Args) -> i32 {
    let paths = Paths::resolve(args.catalog, args.db, args.rules);
    match args.command {
        Command::Hook { agent, mcp } => hook_main(&paths, agent, hints(mcp)),
        Command::Check {
            json,
            mcp,
            override_reason,
            scope,
            command,
        } => {
            let preview = Preview::new(override_reason, scope);
            check(&paths, &command.join(" "), json, hints(mcp), &preview)
        }
        Command::Catalog {
            action: CatalogAction::Check,
        } => catalog_check(&paths),
        Command::Catalog {
            action: CatalogAction::Compile,
        } => catalog_compile(&paths),
        Command::Install(install) => crate::install::install(&paths, &install.request()),
        Command::Uninstall(install) => crate::install::uninstall(&install.request()),
        Command::Doctor { json, user } => crate::doctor::run(&paths, json, user.as_deref()),
        Command::InsteadOf { format, mcp } => instead_of(&paths, format, mcp),
        Command::Search { json, command } => search(&paths, &command.join(" "), json),
        Command::Mcp => crate::mcp::serve(&paths),
        Command::SessionStart { agent } => crate::session::start(&paths, agent),
        Command::Test { files } => crate::policy_test::run(&paths, &files),
        Command::Audit {
            action,
            kind,
            since,
            until,
            session,
            limit,
            format,
        } => crate::session::audit(
            &paths,
            action,
            crate::session::AuditQuery {
                kind,
                since,
                until,
                session,
                limit,
                format,
            },
        ),
    }
}

/// A decision and everything the answer needs.
pub struct Outcome {
    pub decision: Decision,
    pub instead: Vec<Suggestion>,
    pub message: String,
}

fn hints(mcp: bool) -> message::Hints {
    message::Hints { mcp_search: mcp }
}

/// The outcome's message as an agent with `hints` reads it.
fn message_for(outcome: &Outcome, hints: message::Hints) -> String {
    match &outcome.decision {
        Decision::Refuse(refusal) if hints.mcp_search => {
            message::render_for(refusal, &outcome.instead, hints)
        }
        _ => outcome.message.clone(),
    }
}

/// Decides one shell command against the rules and the catalog at `paths`.
pub fn decide(
    paths: &Paths,
    rules: &Rules,
    catalog: &LazyCatalog,
    source: &str,
    cwd: Option<PathBuf>,
) -> Outcome {
    let outcome = decide_once(paths, rules, catalog, source, cwd.clone());
    // A cache that failed under the decision may have answered "not of the mesh": decide
    // again from the catalog itself (or refuse, if it cannot be read).
    if catalog.recover() {
        decide_once(paths, rules, catalog, source, cwd)
    } else {
        outcome
    }
}

fn decide_once(
    paths: &Paths,
    rules: &Rules,
    catalog: &LazyCatalog,
    source: &str,
    cwd: Option<PathBuf>,
) -> Outcome {
    let protected = paths.protected(cwd);
    let guard = Guard {
        rules,
        catalog,
        protected: &protected,
    };
    let decision = guard.decide(source);
    let (instead, message) = match &decision {
        Decision::Refuse(refusal) => {
            let instead = match catalog.get() {
                Ok(c) if is_mesh_rule(refusal.rule) => suggestions(c, refusal),
                _ => Vec::new(),
            };
            let message = message::render(refusal, &instead);
            (instead, message)
        }
        Decision::Pass(_) => (Vec::new(), String::new()),
    };
    Outcome {
        decision,
        instead,
        message,
    }
}

fn is_mesh_rule(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::RemoteAccess | Rule::RemoteDaemon | Rule::MeshContainer | Rule::MeshUnit
    )
}

pub fn suggestions(catalog: &Catalog, refusal: &Refusal) -> Vec<Suggestion> {
    instead::rank(
        catalog,
        &refusal.command,
        &Known::from_command(catalog, refusal),
        3,
    )
}

/// The refusal for what went wrong before a decision could be made.
pub fn fail_closed(detail: &str) -> String {
    message::render(&Refusal::plain(Rule::FailClosed, "", detail), &[])
}

fn load_rules(paths: &Paths) -> Result<Rules, String> {
    Rules::load(paths.rules.as_deref()).map_err(|e| e.to_string())
}

// ---- hook ----------------------------------------------------------------------------

/// Past this, stdin is not read further and the event is refused.
const MAX_EVENT_BYTES: u64 = 8 * 1024 * 1024;

fn hook_main(paths: &Paths, choice: AgentChoice, hints: message::Hints) -> i32 {
    // Lets the tests prove that a panic becomes a refusal; absent from release builds.
    if cfg!(debug_assertions) && std::env::var_os("MESH_GUARD_DEBUG_PANIC").is_some() {
        panic!("panic requested by MESH_GUARD_DEBUG_PANIC");
    }
    // Someone trying the hook by hand would otherwise face a silent, waiting terminal.
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!(
            "mesh-guard hook: waiting for a hook event (JSON) on stdin; end it with Ctrl-D. Try `mesh-guard check COMMAND` to decide a command by hand."
        );
    }
    let mut input = Vec::new();
    let read = std::io::stdin()
        .take(MAX_EVENT_BYTES + 1)
        .read_to_end(&mut input);
    let fallback_agent = choice.fallback();
    if read.is_err() {
        return refuse(
            fallback_agent,
            &fail_closed("the hook input could not be read"),
            None,
        );
    }
    if input.len() as u64 > MAX_EVENT_BYTES {
        return refuse(
            fallback_agent,
            &fail_closed("the hook input is larger than 8 MiB"),
            None,
        );
    }
    let event = match hook::parse(choice, &input) {
        Ok(event) => event,
        Err(why) => return refuse(fallback_agent, &fail_closed(&why), None),
    };
    // Decision 0008: a guard variable that a file the agent can write also sets is not
    // the operator's, and nothing is decided under it. Only read when one is present.
    if !matches!(event.action, Action::Other) {
        let cwd = Some(PathBuf::from(&event.cwd)).filter(|p| p.is_absolute());
        if let Some(planted) = crate::usetime::find(&crate::usetime::PATH_VARIABLES, cwd.as_deref())
        {
            return crate::session::answer_planted(paths, &event, &planted);
        }
    }
    let rules = match load_rules(paths) {
        Ok(rules) => rules,
        Err(_) => {
            return refuse(
                event.agent,
                &fail_closed("the guard's rules are invalid"),
                None,
            );
        }
    };
    let catalog = paths.lazy_catalog();
    let cwd = Some(PathBuf::from(&event.cwd)).filter(|p| p.is_absolute());
    let command = match &event.action {
        Action::Shell { command } => command.clone(),
        Action::WriteFile { path, content } => {
            return match write_refusal(paths, path, content, cwd) {
                Some(refusal) => {
                    let message = message::render(&refusal, &[]);
                    crate::session::answer_refusal(paths, &event, &refusal, &[], &message)
                }
                None => 0,
            };
        }
        Action::Other => return 0,
    };
    let outcome = decide(paths, &rules, &catalog, &command, cwd);
    match &outcome.decision {
        Decision::Pass(_) => 0,
        Decision::Refuse(refusal) => crate::session::answer_refusal(
            paths,
            &event,
            refusal,
            &outcome.instead,
            &message_for(&outcome, hints),
        ),
    }
}

/// A file-writing tool may not set the override or change the guard's own files.
fn write_refusal(
    paths: &Paths,
    path: &str,
    content: &str,
    cwd: Option<PathBuf>,
) -> Option<Refusal> {
    let protected = paths.protected(cwd);
    if protected.covers(path, None) {
        return Some(Refusal {
            detail: "it changes the guard's own files (its catalog, rules, record or plugin) or the agent's hook settings; those are the operator's".into(),
            ..Refusal::plain(Rule::SelfProtection, &format!("write {path}"), "")
        });
    }
    // The guard's variables written where a session starts from (a README may say them),
    // judged by the file the write would leave as well as by its own text (decision 0008).
    let resolved = protected.resolve(path, None);
    let startup = crate::protect::is_startup_file(path)
        || crate::protect::is_startup_file(&resolved.to_string_lossy());
    let sets = || {
        crate::protect::assigns_guard_variable(content)
            || crate::written::after(&resolved, content).is_some_and(|text| {
                crate::protect::GUARD_VARIABLES
                    .iter()
                    .any(|v| crate::usetime::mentions(&text, v))
            })
    };
    (startup && sets()).then(|| Refusal {
        detail: format!("it writes {} or another of the guard's variables into a file a session starts from; only the operator may set them", crate::decide::OVERRIDE_VAR),
        ..Refusal::plain(Rule::Override, &format!("write {path}"), "")
    })
}

/// Prints a refusal the agent understands and exits 2.
pub fn refuse(agent: Agent, message: &str, note: Option<&str>) -> i32 {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", hook::deny(agent, message));
    let _ = out.flush();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{message}");
    if let Some(note) = note {
        let _ = writeln!(err, "{note}");
    }
    2
}

// ---- check, search, instead-of, catalog check ------------------------------------------

/// The override `check` previews: given on the command line, or the one in force.
pub struct Preview {
    reason: Option<String>,
    scope: Option<Result<crate::scope::Scope, String>>,
}

impl Preview {
    fn new(reason: Option<String>, scope: Option<String>) -> Preview {
        Preview {
            reason: reason
                .map(|r| r.trim().to_string())
                .filter(|r| !r.is_empty())
                .or_else(crate::session::override_reason),
            scope: match scope {
                Some(text) => Some(crate::scope::parse(&text)),
                None => crate::scope::from_env(),
            },
        }
    }

    /// How the override would treat a refused command: `Ok` passes it, `Err` says why not.
    /// `None` when there is no override to preview.
    fn judge(
        &self,
        guard: &Guard,
        source: &str,
        refusal: &Refusal,
    ) -> Option<Result<String, String>> {
        self.reason.as_ref()?;
        if matches!(refusal.rule, Rule::Override | Rule::SelfProtection) {
            return Some(Err("no override covers the guard's own protection".into()));
        }
        Some(match &self.scope {
            None => Ok("the override covers the whole session".into()),
            Some(Err(e)) => Err(format!(
                "the scope is malformed ({e}), so nothing is covered"
            )),
            Some(Ok(scope)) => {
                let others = guard.every_target(source);
                let all: Vec<&Refusal> = std::iter::once(refusal).chain(others.iter()).collect();
                scope
                    .covers(&all, crate::record::now_ms())
                    .map(|()| format!("the scope `{}` covers it", scope.text))
                    .map_err(|why| format!("the scope `{}` does not cover it: {why}", scope.text))
            }
        })
    }
}

fn check(paths: &Paths, source: &str, json: bool, hints: message::Hints, preview: &Preview) -> i32 {
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let catalog = paths.lazy_catalog();
    let cwd = std::env::current_dir().ok();
    let outcome = decide(paths, &rules, &catalog, source, cwd);
    if let Decision::Refuse(r) = &outcome.decision
        && r.rule == Rule::FailClosed
        && let Err(errors) = catalog.get()
    {
        for e in errors {
            eprintln!("error: {e}");
        }
        return 2;
    }
    let message = message_for(&outcome, hints);
    let (decision, reason, rule, target) = match &outcome.decision {
        Decision::Pass(PassReason::NotMesh) => (
            "pass",
            "no program it runs reaches the mesh".to_string(),
            String::new(),
            String::new(),
        ),
        Decision::Pass(PassReason::ForgeAccount { account }) => (
            "pass",
            format!("`{account}` is the forge's git account"),
            "forge-account".to_string(),
            account.clone(),
        ),
        Decision::Refuse(r) => (
            "refuse",
            refusal_reason(r),
            r.rule.id().to_string(),
            r.target.clone(),
        ),
    };
    let under_override = match &outcome.decision {
        Decision::Refuse(refusal) => {
            let protected = paths.protected(std::env::current_dir().ok());
            let guard = Guard {
                rules: &rules,
                catalog: &catalog,
                protected: &protected,
            };
            preview.judge(&guard, source, refusal)
        }
        Decision::Pass(_) => None,
    };
    if json {
        let instead: Vec<_> = outcome
            .instead
            .iter()
            .map(|s| serde_json::json!({"tool": s.tool, "usage": s.usage}))
            .collect();
        let object = serde_json::json!({
            "decision": decision, "reason": reason, "rule": rule, "target": target,
            "instead": instead, "message": message,
        });
        let mut object = object;
        if let Some(judged) = &under_override {
            object["override"] = match judged {
                Ok(why) => serde_json::json!({"decision": "pass", "reason": why}),
                Err(why) => serde_json::json!({"decision": "refuse", "reason": why}),
            };
        }
        outln!("{object}");
    } else if decision == "pass" {
        outln!("pass: {reason}");
    } else {
        outln!("refuse [{rule}]: {reason}");
        for s in &outcome.instead {
            outln!("  instead: {}  ({})", s.usage, s.tool);
        }
        match &under_override {
            Some(Ok(why)) => outln!("under the override: pass ({why}; recorded as an override)"),
            Some(Err(why)) => outln!("under the override: refuse ({why})"),
            None => {}
        }
        outln!("\nThe agent would read:\n{message}");
    }
    if decision == "pass" { 0 } else { 1 }
}

fn refusal_reason(r: &Refusal) -> String {
    if r.reaches.is_empty() {
        r.detail.clone()
    } else if r.detail.is_empty() {
        format!("it reaches {} {}", r.reaches, message::over_phrase(r))
            .trim_end()
            .to_string()
    } else {
        format!("{}; it names {}", r.detail, r.reaches)
    }
}

fn load_catalog(paths: &Paths) -> Result<Catalog, i32> {
    catalog::load(&paths.catalog).map_err(|errors| {
        for e in errors {
            eprintln!("error: {e}");
        }
        2
    })
}

fn catalog_check(paths: &Paths) -> i32 {
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let guarded = |name: &str| rules.program(name).is_some() || rules.wrapper(name).is_some();
    match catalog::check(&paths.catalog, &guarded) {
        Ok((c, warnings)) => {
            for w in &warnings {
                eprintln!("warning: {w}");
            }
            let count = |n: usize, one: &str, many: &str| {
                format!("{n} {}", if n == 1 { one } else { many })
            };
            outln!(
                "{}: valid ({}, {})",
                paths.catalog.display(),
                count(c.machine_count(), "machine", "machines"),
                count(c.tools().len(), "tool", "tools")
            );
            // The hook answers from the compiled cache while its stamps match: a forged
            // one would pass what the catalog refuses, so it is compared here.
            let cache = catalog::cache_file_for(&paths.cache_dir(), &paths.catalog);
            match catalog::check_cache(&paths.catalog, &cache) {
                catalog::CacheState::Disagrees(why) => {
                    eprintln!(
                        "error: {}: the compiled cache does not match the catalog ({why}); remove it, and find out who wrote it",
                        cache.display()
                    );
                    1
                }
                catalog::CacheState::Agrees => {
                    outln!("compiled cache: matches the catalog");
                    0
                }
                catalog::CacheState::NotInUse(state) => {
                    outln!("compiled cache: {state}");
                    0
                }
            }
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            1
        }
    }
}

fn catalog_compile(paths: &Paths) -> i32 {
    let index = catalog::compiled_index_for(&paths.catalog);
    match catalog::compile(&paths.catalog, &index) {
        Ok(_) => {
            outln!(
                "{}: compiled to {}",
                paths.catalog.display(),
                index.display()
            );
            0
        }
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            1
        }
    }
}

/// Exit 0 when a tool was found, 1 when none was: "one must be created" and "nothing
/// needs replacing" both list no tool (decision 0013); the text and `--json` tell them apart.
fn search(paths: &Paths, source: &str, json: bool) -> i32 {
    let catalog = match load_catalog(paths) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let answer = match crate::search::search(&catalog, &rules, source) {
        Ok(answer) => answer,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    if json {
        outln!("{}", answer.to_json(source));
    } else {
        out!("{}", answer.to_text(source));
    }
    match answer {
        crate::search::Answer::Found(_) => 0,
        _ => 1,
    }
}

fn instead_of(paths: &Paths, format: TableFormat, mcp: bool) -> i32 {
    let catalog = match load_catalog(paths) {
        Ok(c) => c,
        Err(code) => return code,
    };
    out!("{}", instead_of_table(&catalog, format));
    // JSON stays a list of rows for programs; the markdown is for an agent to read.
    if mcp && format == TableFormat::Markdown {
        outln!("\n{INSTEAD_OF_SEARCH}");
    }
    0
}

/// Under the table, where the agent has the MCP server.
pub const INSTEAD_OF_SEARCH: &str = "For a command not in this table, ask the MCP tool `mesh_search`: it names the mesh tool that replaces a shell command, usage filled in.";

/// The "instead of" table: every `replaces` shape → the tool and its usage.
pub fn instead_of_table(catalog: &Catalog, format: TableFormat) -> String {
    let rows: Vec<(&str, &str, &str)> = catalog
        .tools()
        .iter()
        .flat_map(|t| {
            t.replaces
                .iter()
                .map(move |r| (r.as_str(), t.name.as_str(), t.usage.as_str()))
        })
        .collect();
    match format {
        TableFormat::Json => {
            let list: Vec<_> = rows
                .iter()
                .map(|(r, t, u)| serde_json::json!({"instead_of": r, "tool": t, "usage": u}))
                .collect();
            format!("{}\n", serde_json::Value::Array(list))
        }
        TableFormat::Markdown => {
            let mut out = String::from("| instead of | use | tool |\n|---|---|---|\n");
            for (r, t, u) in rows {
                out.push_str(&format!(
                    "| `{}` | `{}` | {} |\n",
                    r.replace('|', "\\|"),
                    u.replace('|', "\\|"),
                    t
                ));
            }
            out
        }
    }
}
