//! Scoped overrides (decision 0015): a grant's scope terms narrow the operator's override
//! to what they name. The terms are inside the signed grant (decision 0058).

use crate::decide::{Refusal, Rule};

/// The rules an override can cover: the ones that are not about the guard itself.
const COVERABLE: [Rule; 6] = [
    Rule::RemoteAccess,
    Rule::RemoteDaemon,
    Rule::MeshContainer,
    Rule::MeshUnit,
    Rule::Unverifiable,
    Rule::FailClosed,
];

/// Whether an override can cover a refusal of `rule`: none covers the guard's own protection.
pub fn overridable(rule: Rule) -> bool {
    !matches!(rule, Rule::Override | Rule::SelfProtection)
}

/// How a grant's scope meets a refused command: the hook honours it or not by this, and
/// `check --override` previews the same answer in its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// The refusal is the guard's own protection: no grant covers it.
    GuardsOwn,
    /// A grant without a scope covers the whole session.
    WholeSession,
    Covered(Scope),
    /// The scope cannot be read: nothing is covered.
    Malformed(String),
    /// The scope does not name one of the mesh objects the command reaches.
    NotCovered {
        scope: Scope,
        why: String,
    },
}

/// Whether the scope `text` covers a refused command: `refusal`, and every other mesh object
/// the command reaches (`targets`, the decision's own walk's, asked only when a scope narrows).
pub fn coverage(text: &str, refusal: &Refusal, targets: impl FnOnce() -> Vec<Refusal>) -> Coverage {
    if !overridable(refusal.rule) {
        return Coverage::GuardsOwn;
    }
    if text.is_empty() {
        return Coverage::WholeSession;
    }
    let scope = match parse(text) {
        Ok(scope) => scope,
        Err(e) => return Coverage::Malformed(e),
    };
    let others = targets();
    let all: Vec<&Refusal> = std::iter::once(refusal).chain(others.iter()).collect();
    match scope.covers(&all) {
        Ok(()) => Coverage::Covered(scope),
        Err(why) => Coverage::NotCovered { scope, why },
    }
}

/// What an override covers. A command passes only if it satisfies every kind of term
/// given; a kind not given does not narrow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub machines: Vec<String>,
    pub modules: Vec<String>,
    pub rules: Vec<String>,
    /// The scope as the operator wrote it, for messages and the record.
    pub text: String,
}

/// Reads `machine:NAME module:NAME rule:ID`, space-separated.
pub fn parse(text: &str) -> Result<Scope, String> {
    let mut scope = Scope {
        text: text.split_whitespace().collect::<Vec<_>>().join(" "),
        ..Scope::default()
    };
    if scope.text.is_empty() {
        return Err("the scope is empty".into());
    }
    for whole in text.split_whitespace() {
        // Shown in a refusal: an operator's long term is cut there.
        let term: &str = match whole.char_indices().nth(60) {
            Some((at, _)) => &whole[..at],
            None => whole,
        };
        let term = if term.len() < whole.len() {
            format!("{term}…")
        } else {
            term.to_string()
        };
        let term = term.as_str();
        let (kind, value) = whole
            .split_once(':')
            .filter(|(_, v)| !v.is_empty())
            .ok_or_else(|| format!("`{term}` is not KIND:VALUE"))?;
        match kind {
            "machine" => scope.machines.push(host(value)),
            "module" => scope.modules.push(value.to_string()),
            "rule" => {
                if !COVERABLE.iter().any(|r| r.id() == value) {
                    let known: Vec<&str> = COVERABLE.iter().map(|r| r.id()).collect();
                    return Err(format!(
                        "`{term}`: no rule an override covers is called `{value}` (one of: {})",
                        known.join(", ")
                    ));
                }
                scope.rules.push(value.to_string());
            }
            _ => {
                return Err(format!(
                    "`{term}`: an unknown kind (machine, module or rule)"
                ));
            }
        }
    }
    Ok(scope)
}

/// Machine names compare as the catalog compares them.
fn host(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl Scope {
    /// The scope as a refusal shows it, cut so the message stays under 1,000 characters.
    pub fn shown(&self) -> String {
        const MAX: usize = 120;
        if self.text.chars().count() <= MAX {
            return self.text.clone();
        }
        let cut: String = self.text.chars().take(MAX).collect();
        format!("{cut}…")
    }

    /// Whether the scope covers a command, given every refusal it would meet (a command
    /// reaching two machines must have both in scope). `Err` says why not.
    pub fn covers(&self, refusals: &[&Refusal]) -> Result<(), String> {
        for refusal in refusals {
            if !self.rules.is_empty() && !self.rules.iter().any(|r| r == refusal.rule.id()) {
                return Err(format!("it does not cover rule {}", refusal.rule.id()));
            }
            if !self.machines.is_empty() {
                match machine_of(refusal) {
                    Some(m) if self.machines.contains(&host(&m)) => {}
                    Some(m) => return Err(format!("it does not cover machine {m}")),
                    None => return Err("the command names no machine the scope lists".into()),
                }
            }
            if !self.modules.is_empty() {
                match refusal.object.as_ref().and_then(|o| o.module()) {
                    Some(m) if self.modules.iter().any(|s| s == m) => {}
                    Some(m) => return Err(format!("it does not cover module {m}")),
                    // ssh to a machine reaches every module on it.
                    None => return Err("the command reaches more than a module".into()),
                }
            }
        }
        Ok(())
    }
}

fn machine_of(refusal: &Refusal) -> Option<String> {
    match &refusal.object {
        Some(crate::catalog::MeshObject::Machine(m)) => Some(m.machine.clone()),
        _ => refusal.machine.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_and_errors() {
        let s = parse(" machine:Atlas. module:controller rule:mesh-unit ").unwrap();
        assert_eq!(s.machines, ["atlas"]);
        assert_eq!(s.modules, ["controller"]);
        assert_eq!(s.rules, ["mesh-unit"]);
        for bad in [
            "",
            "   ",
            "atlas",
            "machine:",
            "host:atlas",
            "rule:self-protection",
            "rule:nothing",
            "until:2026-12-01T00:00:00Z",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
