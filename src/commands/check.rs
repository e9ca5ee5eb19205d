//! `mesh-guard check`: one command decided by hand, explained.

use crate::app::{decide, load_rules, message_for};
use crate::catalog::LazyCatalog;
use crate::config::Paths;
use crate::decide::{Decision, PassReason, Reached, Refusal};
use crate::error::exit;
use crate::message;
use crate::rule::Rule;
use crate::scope::{self, Coverage};

/// The override `check` previews: a grant given on the command line or the one in force
/// (verified as the hook would), or a scope given on its own.
pub struct Preview {
    grant: Option<Result<crate::grant::Verified, crate::grant::NotHonoured>>,
    scope: Option<String>,
}

impl Preview {
    pub fn new(paths: &Paths, grant: Option<String>, scope: Option<String>) -> Preview {
        let grant = grant
            .map(|g| g.trim().to_string())
            .filter(|g| !g.is_empty())
            .or_else(crate::grant::text_in_env)
            .map(|text| crate::pipeline::verify_grant(paths, &text));
        Preview { grant, scope }
    }

    /// How the override would treat a refused command; `None` when there is no override to
    /// preview. The hook's own coverage (`scope::coverage`),
    /// over the targets of the decision's walk.
    fn judge(&self, catalog: &LazyCatalog, refusal: &Refusal, reached: &Reached) -> Option<Judged> {
        let scope = match (&self.scope, &self.grant) {
            (Some(scope), _) => scope.as_str(),
            (None, Some(Ok(grant))) => grant.grant.scope.as_str(),
            (None, Some(Err(not))) => return Some(Judged::NotHonoured(not.why.clone())),
            (None, None) => return None,
        };
        let targets = || match catalog.get() {
            Ok(catalog) => reached.targets(catalog),
            Err(_) => Vec::new(),
        };
        Some(Judged::Scope(scope::coverage(
            scope.trim(),
            refusal,
            targets,
        )))
    }
}

/// What the previewed override would do with a refused command; its `Display` is the reason
/// `check` gives.
enum Judged {
    /// The grant is not honoured; the grant module's reason, as text.
    NotHonoured(String),
    /// The grant (or the scope given) meets the command so.
    Scope(Coverage),
}

impl Judged {
    /// Whether the override lets the command pass.
    fn passes(&self) -> bool {
        matches!(
            self,
            Judged::Scope(Coverage::WholeSession | Coverage::Covered(_))
        )
    }
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Judged::NotHonoured(why) => write!(f, "the grant is not honoured: {why}"),
            Judged::Scope(Coverage::GuardsOwn) => {
                f.write_str("no override covers the guard's own protection")
            }
            Judged::Scope(Coverage::WholeSession) => {
                f.write_str("the grant covers the whole session")
            }
            Judged::Scope(Coverage::Malformed(e)) => {
                write!(f, "the scope is malformed ({e}), so nothing is covered")
            }
            Judged::Scope(Coverage::Covered(scope)) => {
                write!(f, "the scope `{}` covers it", scope.text)
            }
            Judged::Scope(Coverage::NotCovered { scope, why }) => {
                write!(f, "the scope `{}` does not cover it: {why}", scope.text)
            }
        }
    }
}

pub fn run(
    paths: &Paths,
    source: &str,
    json: bool,
    hints: message::Hints,
    preview: &Preview,
) -> i32 {
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            return e.exit_code();
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
            errln!("error: {e}");
        }
        return exit::ERROR;
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
        Decision::Pass(PassReason::Reported(r)) => (
            "pass",
            refusal_reason(r),
            r.rule.id().to_string(),
            r.target.clone(),
        ),
    };
    // Which mode decided a refusal, which setting decided it, and where the catalog sets
    // each (decision 0060).
    let mode = outcome.decision.refusal().map(|refusal| {
        let here = match outcome.decision {
            Decision::Refuse(_) => crate::catalog::Mode::Enforce,
            Decision::Pass(_) => crate::catalog::Mode::Report,
        };
        // Said in the text only where the catalog puts something in report mode.
        let loaded = catalog.get().ok().filter(|c| !c.modes().all_enforced());
        let settings = loaded.map(|c| {
            let by = refusal.mode(c).by;
            (c.modes().describe(), by)
        });
        (here, settings)
    });
    let under_override = match &outcome.decision {
        Decision::Refuse(refusal) => preview.judge(&catalog, refusal, &outcome.reached),
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
        if let Some((here, settings)) = &mode {
            object["mode"] = serde_json::json!(here.as_str());
            if let Some((_, by)) = settings {
                object["mode_by"] = serde_json::json!(by.describe());
                if let Some(module) = by.module() {
                    object["mode_module"] = serde_json::json!(module);
                }
            }
        }
        if let Some(judged) = &under_override {
            let decision = if judged.passes() { "pass" } else { "refuse" };
            object["override"] =
                serde_json::json!({"decision": decision, "reason": judged.to_string()});
        }
        outln!("{object}");
    } else if decision == "pass" && mode.is_none() {
        outln!("pass: {reason}");
    } else {
        if decision == "pass" {
            outln!("pass (report mode): would refuse [{rule}]: {reason}");
        } else {
            outln!("refuse [{rule}]: {reason}");
        }
        for s in &outcome.instead {
            outln!("  instead: {}  ({})", s.usage, s.tool);
        }
        match &under_override {
            Some(why) if why.passes() => {
                outln!("under the override: pass ({why}; recorded as an override)")
            }
            Some(why) => outln!("under the override: refuse ({why})"),
            None => {}
        }
        if let Some((here, settings)) = mode.as_ref().filter(|(_, s)| s.is_some()) {
            let recorded = match here {
                crate::catalog::Mode::Report => {
                    "; the hook lets it pass and records it as would-refuse"
                }
                crate::catalog::Mode::Enforce => "",
            };
            outln!("mode: {} here{recorded}", here.as_str());
            if let Some((settings, by)) = settings {
                outln!("  decided by {}", by.describe());
                outln!("  the catalog's modes: {settings}");
            }
        }
        outln!("\nThe agent would read:\n{message}");
    }
    if decision == "pass" {
        exit::OK
    } else {
        exit::NO
    }
}

pub(crate) fn refusal_reason(r: &Refusal) -> String {
    message::why::reason(r)
}
