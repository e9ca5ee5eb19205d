//! Scoped overrides (decision 0015): a grant's scope terms narrow the operator's override
//! to what they name. The terms are inside the signed grant (decision 0058).

use crate::decide::Refusal;
use crate::rule::Rule;

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
    COVERABLE.contains(&rule)
}

/// The rule an override can cover whose id is `id` (`override grant --rule`, a scope's
/// `rule:` term).
pub fn coverable_rule(id: &str) -> Result<Rule, ScopeError> {
    Rule::from_id(id)
        .filter(|r| overridable(*r))
        .ok_or_else(|| ScopeError::UnknownRule {
            term: id.to_string(),
            value: id.to_string(),
        })
}

/// Why a scope cannot be read; `term` is the operator's term as a refusal shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeError {
    Empty,
    NotKindValue { term: String },
    UnknownRule { term: String, value: String },
    UnknownKind { term: String },
}

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScopeError::Empty => f.write_str("the scope is empty"),
            ScopeError::NotKindValue { term } => write!(f, "`{term}` is not KIND:VALUE"),
            ScopeError::UnknownRule { term, value } => {
                let known: Vec<&str> = COVERABLE.iter().map(|r| r.id()).collect();
                write!(
                    f,
                    "`{term}`: no rule an override covers is called `{value}` (one of: {})",
                    known.join(", ")
                )
            }
            ScopeError::UnknownKind { term } => {
                write!(f, "`{term}`: an unknown kind (machine, module or rule)")
            }
        }
    }
}

impl std::error::Error for ScopeError {}

/// Why a scope does not cover a command: the first mesh object it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncovered {
    Rule(Rule),
    Machine(String),
    NoMachine,
    Module(String),
    MoreThanAModule,
}

impl std::fmt::Display for Uncovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Uncovered::Rule(rule) => write!(f, "it does not cover rule {}", rule.id()),
            Uncovered::Machine(m) => write!(f, "it does not cover machine {m}"),
            Uncovered::NoMachine => f.write_str("the command names no machine the scope lists"),
            Uncovered::Module(m) => write!(f, "it does not cover module {m}"),
            Uncovered::MoreThanAModule => f.write_str("the command reaches more than a module"),
        }
    }
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
    Malformed(ScopeError),
    /// The scope does not name one of the mesh objects the command reaches.
    NotCovered {
        scope: Scope,
        why: Uncovered,
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
    pub rules: Vec<Rule>,
    /// The scope as the operator wrote it, for messages and the record.
    pub text: String,
}

/// Reads `machine:NAME module:NAME rule:ID`, space-separated.
pub fn parse(text: &str) -> Result<Scope, ScopeError> {
    let mut scope = Scope {
        text: text.split_whitespace().collect::<Vec<_>>().join(" "),
        ..Scope::default()
    };
    if scope.text.is_empty() {
        return Err(ScopeError::Empty);
    }
    for whole in text.split_whitespace() {
        // Shown in a refusal: an operator's long term is cut there.
        let term = match whole.char_indices().nth(60) {
            Some((at, _)) => format!("{}…", &whole[..at]),
            None => whole.to_string(),
        };
        let Some((kind, value)) = whole.split_once(':').filter(|(_, v)| !v.is_empty()) else {
            return Err(ScopeError::NotKindValue { term });
        };
        match kind {
            "machine" => scope.machines.push(host(value)),
            "module" => scope.modules.push(value.to_string()),
            "rule" => match coverable_rule(value) {
                Ok(rule) => scope.rules.push(rule),
                Err(_) => {
                    let value = value.to_string();
                    return Err(ScopeError::UnknownRule { term, value });
                }
            },
            _ => return Err(ScopeError::UnknownKind { term }),
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
    pub fn covers(&self, refusals: &[&Refusal]) -> Result<(), Uncovered> {
        for refusal in refusals {
            if !self.rules.is_empty() && !self.rules.contains(&refusal.rule) {
                return Err(Uncovered::Rule(refusal.rule));
            }
            if !self.machines.is_empty() {
                match machine_of(refusal) {
                    Some(m) if self.machines.contains(&host(&m)) => {}
                    Some(m) => return Err(Uncovered::Machine(m)),
                    None => return Err(Uncovered::NoMachine),
                }
            }
            if !self.modules.is_empty() {
                match refusal.object.as_ref().and_then(|o| o.module()) {
                    Some(m) if self.modules.iter().any(|s| s == m) => {}
                    Some(m) => return Err(Uncovered::Module(m.to_string())),
                    // ssh to a machine reaches every module on it.
                    None => return Err(Uncovered::MoreThanAModule),
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
        assert_eq!(s.rules, [Rule::MeshUnit]);
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
