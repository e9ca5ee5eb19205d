//! The guard's rules by their stable ids (`remote-access`, …): the one vocabulary the decision,
//! the catalog's modes, the record, a grant's scope, the command line and the tests share. It
//! names nothing else of the crate, so every module may name it (the catalog and the record
//! sit below `decide`, which reads them). Not `rules/`, the programs' tables.

/// Stable rule ids, in hook output, `check --json` and the record. Declared, and ordered, as
/// [`Rule::ALL`] lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    RemoteAccess,
    RemoteDaemon,
    MeshContainer,
    MeshUnit,
    Override,
    Unverifiable,
    SelfProtection,
    FailClosed,
}

impl Rule {
    pub const ALL: [Rule; 8] = [
        Rule::RemoteAccess,
        Rule::RemoteDaemon,
        Rule::MeshContainer,
        Rule::MeshUnit,
        Rule::Override,
        Rule::Unverifiable,
        Rule::SelfProtection,
        Rule::FailClosed,
    ];

    /// The rules a catalog may put in report-only mode (decision 0060): the mesh's, in the
    /// order `[mode]`'s error lists them and the compiled cache keeps them. The guard's own
    /// protection, the override's rules and a broken setup are always enforced.
    pub const REPORTABLE: [Rule; 5] = [
        Rule::RemoteAccess,
        Rule::RemoteDaemon,
        Rule::MeshContainer,
        Rule::MeshUnit,
        Rule::Unverifiable,
    ];

    /// The rule whose stable id is `id`.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.id() == id)
    }

    pub fn id(self) -> &'static str {
        match self {
            Rule::RemoteAccess => "remote-access",
            Rule::RemoteDaemon => "remote-daemon",
            Rule::MeshContainer => "mesh-container",
            Rule::MeshUnit => "mesh-unit",
            Rule::Override => "self-override",
            Rule::Unverifiable => "unverifiable",
            Rule::SelfProtection => "self-protection",
            Rule::FailClosed => "fail-closed",
        }
    }

    /// Whether a catalog may put this rule's refusals in report-only mode.
    pub fn reportable(self) -> bool {
        Rule::REPORTABLE.contains(&self)
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

/// A rule id no refusal carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRule(pub String);

impl std::fmt::Display for UnknownRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let known: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
        let (id, known) = (&self.0, known.join(", "));
        write!(f, "no refusal carries the rule `{id}` (one of: {known})")
    }
}

impl std::error::Error for UnknownRule {}

impl std::str::FromStr for Rule {
    type Err = UnknownRule;

    fn from_str(id: &str) -> Result<Rule, UnknownRule> {
        Rule::from_id(id).ok_or_else(|| UnknownRule(id.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order_so_a_sort_keeps_it() {
        let mut sorted = Rule::ALL;
        sorted.sort();
        assert_eq!(sorted, Rule::ALL);
        assert!(Rule::REPORTABLE.is_sorted());
    }

    #[test]
    fn every_id_reads_back_and_is_spelled_once() {
        for rule in Rule::ALL {
            assert_eq!(Rule::from_id(rule.id()), Some(rule));
            assert_eq!(rule.to_string(), rule.id());
        }
        assert_eq!(Rule::from_id("Remote-Access"), None);
    }
}
