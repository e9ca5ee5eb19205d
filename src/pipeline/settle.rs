//! A refusal settled: the operator's signed override grant (decision 0058) verified only here,
//! for a refusal it could cover, and honoured only once its row is durably written; else the
//! refusal, recorded (and refused even when the record cannot be written).

use super::record::{not_recorded, refusal_row, with_grant};
use super::{Answer, Answered};
use crate::config::Paths;
use crate::decide::{Reached, Refusal};
use crate::grant::{NotHonoured, Verified};
use crate::instead::Suggestion;
use crate::record::{Event as Row, Kind};
use crate::rule::Rule;
use crate::scope::{self, Coverage};

/// The override grant in this process's environment, verified against `allowed_signers`
/// beside the catalog: `None` when `MESH_GUARD_OVERRIDE` is not set (decision 0058).
pub fn grant_in_force(paths: &Paths) -> Option<Result<Verified, NotHonoured>> {
    let text = crate::grant::text_in_env()?;
    Some(verify_grant(paths, &text))
}

/// `text` verified as a grant on this host, now.
pub fn verify_grant(paths: &Paths, text: &str) -> Result<Verified, NotHonoured> {
    verify_grant_on(paths, text, &crate::record::host_name())
}

/// `text` verified as a grant on `host`, now, against the first `allowed_signers` out of
/// this account's reach (decision 0069).
pub fn verify_grant_on(paths: &Paths, text: &str, host: &str) -> Result<Verified, NotHonoured> {
    let signers = crate::grant::trusted_signers(&paths.catalog);
    crate::grant::verify(text, signers.as_ref(), host, crate::record::now_ms())
}

impl Answered<'_> {
    /// Answers a refusal: an override honoured (recorded first), or the refusal (recorded,
    /// and refused even when the record cannot be written).
    pub(crate) fn refused(
        &self,
        refusal: &Refusal,
        reached: &Reached,
        instead: &[Suggestion],
        message: String,
    ) -> Answer {
        let mut refused = refusal_row(Kind::Refusal, self.event, refusal, instead);
        // A broken setup: the record says what the operator must fix, as the message does.
        if let crate::decide::Why::Broken(broken) = &refusal.why {
            refused.reason = crate::message::setup::reason(broken);
        }
        // Only a refusal a grant could cover verifies one: a pass never does.
        let grant = if scope::overridable(refusal.rule) {
            grant_in_force(self.paths)
        } else {
            None
        };
        match grant {
            None => {
                if refusal.rule == Rule::Override {
                    refused.kind = Kind::OverrideAttempt;
                }
                let note = self
                    .append(&refused)
                    .err()
                    .map(|e| not_recorded(self.paths, &e));
                self.refuse(message, note)
            }
            // Unsigned, not allowed, expired, for another host, malformed: an attempt.
            Some(Err(not)) => {
                let mut attempt = refused;
                attempt.kind = Kind::OverrideAttempt;
                attempt.reason = format!("override not honoured: {}", not.why);
                attempt.signer = not.signer;
                attempt.grant_expires = not.expires;
                self.not_honoured(&attempt, &not.why, &message)
            }
            Some(Ok(grant)) => {
                // A scoped grant (decision 0015) covers only what its scope names, every
                // target of the decision's walk counted.
                let targets = || match self.catalog.get() {
                    Ok(catalog) => reached.targets(catalog),
                    Err(_) => Vec::new(),
                };
                let why = match scope::coverage(&grant.grant.scope, refusal, targets) {
                    Coverage::WholeSession | Coverage::Covered(_) => None,
                    Coverage::GuardsOwn => {
                        Some("no override covers the guard's own protection".into())
                    }
                    Coverage::Malformed(e) => Some(format!("its scope is malformed: {e}")),
                    Coverage::NotCovered { scope, why } => Some(format!(
                        "it does not cover this command ({why}); it covers `{}`",
                        scope.shown()
                    )),
                };
                if let Some(why) = why {
                    let mut refused = with_grant(refused, &grant);
                    refused.reason = format!("override not honoured: {why}");
                    return self.not_honoured(&refused, &why, &message);
                }
                let mut honoured = with_grant(refused, &grant);
                honoured.kind = Kind::Override;
                honoured.reason = grant.grant.reason.clone();
                // The override is honoured only once its row is durably written.
                match self.append(&honoured) {
                    Ok(()) => Answer::Overridden,
                    Err(_) => self.refuse(
                        format!(
                            "{message} The operator's override ({}) was not honoured because it could not be recorded in the audit database.",
                            crate::grant::VAR
                        ),
                        Some(
                            "mesh-guard: the override could not be recorded; ask the operator to check the audit database".into(),
                        ),
                    ),
                }
            }
        }
    }

    /// A grant that does not cover the refusal: its row, and the refusal with why first.
    fn not_honoured(&self, row: &Row, why: &str, message: &str) -> Answer {
        let text = joined(
            &format!("The operator's override was not honoured: {why}."),
            message,
        );
        let note = self.append(row).err().map(|_| {
            "mesh-guard: this refusal could not be recorded in the audit database".to_string()
        });
        self.refuse(text, note)
    }

    fn refuse(&self, message: String, note: Option<String>) -> Answer {
        Answer::Refused {
            agent: self.event.agent,
            message,
            note,
        }
    }
}

/// A note put before a refusal's message, the whole kept under the contract's 1,000
/// characters: the note is what the operator must read, so the message's tail gives way.
pub(crate) fn joined(note: &str, message: &str) -> String {
    const LIMIT: usize = 999;
    let text = format!("{note} {message}");
    if text.chars().count() <= LIMIT {
        return text;
    }
    let mut cut: String = text.chars().take(LIMIT - 1).collect();
    cut.push('…');
    cut
}
