//! Report-only mode (decision 0060): the operator's `[mode]` table and a module's `mode`,
//! validated with their file and line, and which mode a refusal is under.

use super::{CatalogError, Source};
use std::collections::BTreeMap;
use toml::Spanned;

/// What the guard does with a command the catalog and rules would refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuse it (the default).
    Enforce,
    /// Let it pass, and record the refusal it would have been (a `would-refuse` row).
    Report,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "enforce",
            Mode::Report => "report",
        }
    }

    fn parse(text: &str) -> Option<Mode> {
        match text {
            "enforce" => Some(Mode::Enforce),
            "report" => Some(Mode::Report),
            _ => None,
        }
    }
}

/// The rule families a mode may be set for: the mesh's. The guard's own protection, the
/// override's rules and a broken setup are always enforced.
pub const REPORTABLE: [&str; 5] = [
    "remote-access",
    "remote-daemon",
    "mesh-container",
    "mesh-unit",
    "unverifiable",
];

/// Rules that exist but are never in report mode, for a clear error.
const ALWAYS_ENFORCED: [&str; 3] = ["self-protection", "self-override", "fail-closed"];

/// The modes a catalog sets: the whole mesh's, each rule family's, each module's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Modes {
    pub default: Option<Mode>,
    /// Rule id → mode, in `REPORTABLE` order.
    pub rules: Vec<(String, Mode)>,
    /// Module name → mode, in catalog order.
    pub modules: Vec<(String, Mode)>,
}

impl Modes {
    pub fn rule(&self, rule: &str) -> Option<Mode> {
        self.rules.iter().find(|(r, _)| r == rule).map(|&(_, m)| m)
    }

    pub fn module(&self, module: &str) -> Option<Mode> {
        self.modules
            .iter()
            .find(|(m, _)| m == module)
            .map(|&(_, m)| m)
    }

    /// Nothing is in report mode anywhere.
    pub fn all_enforced(&self) -> bool {
        self.default != Some(Mode::Report)
            && self.rules.iter().all(|&(_, m)| m == Mode::Enforce)
            && self.modules.iter().all(|&(_, m)| m == Mode::Enforce)
    }

    /// Which mode is in force where, in one line: `doctor` and `check` say it.
    pub fn describe(&self) -> String {
        let default = self.default.unwrap_or(Mode::Enforce);
        let mut out = format!("{} for the whole mesh", default.as_str());
        let settings: Vec<String> = self
            .rules
            .iter()
            .map(|(r, m)| format!("{} for rule {r}", m.as_str()))
            .chain(
                self.modules
                    .iter()
                    .map(|(n, m)| format!("{} for module {n}", m.as_str())),
            )
            .collect();
        if !settings.is_empty() {
            out.push_str(&format!(", {}", settings.join(", ")));
        }
        out.push_str("; self-protection and the override's rules always enforced");
        out
    }

    /// The mode of a refusal under `rule`, given the modules of what it reaches: where the
    /// rule's setting or the modules' settings apply, it is reported only if every one of
    /// them says report; where none applies, the whole mesh's mode; never for a rule outside
    /// `REPORTABLE`.
    pub fn of(&self, rule: &str, modules: &[String]) -> Mode {
        if !REPORTABLE.contains(&rule) {
            return Mode::Enforce;
        }
        let specific: Vec<Mode> = self
            .rule(rule)
            .into_iter()
            .chain(modules.iter().filter_map(|m| self.module(m)))
            .collect();
        if specific.is_empty() {
            self.default.unwrap_or(Mode::Enforce)
        } else if specific.iter().all(|&m| m == Mode::Report) {
            Mode::Report
        } else {
            Mode::Enforce
        }
    }
}

impl Modes {
    /// The settings as lines for the compiled cache's header: `default`, `rule` or
    /// `module`, the name, the mode, separated by tabs.
    pub(crate) fn encoded(&self) -> Vec<String> {
        let default = self.default.map(|m| format!("default\t\t{}", m.as_str()));
        let rules = self
            .rules
            .iter()
            .map(|(r, m)| format!("rule\t{r}\t{}", m.as_str()));
        let modules = self
            .modules
            .iter()
            .map(|(n, m)| format!("module\t{n}\t{}", m.as_str()));
        default.into_iter().chain(rules).chain(modules).collect()
    }

    /// The settings `encoded` wrote, or `None` for lines it cannot have written.
    pub(crate) fn decoded(lines: &[String]) -> Option<Modes> {
        let mut modes = Modes::default();
        for line in lines {
            let (kind, rest) = line.split_once('\t')?;
            let (name, mode) = rest.rsplit_once('\t')?;
            let mode = Mode::parse(mode)?;
            match kind {
                "default" => modes.default = Some(mode),
                "rule" => modes.rules.push((name.to_string(), mode)),
                "module" => modes.modules.push((name.to_string(), mode)),
                _ => return None,
            }
        }
        Some(modes)
    }
}

/// A `mode` value, or its error.
pub(super) fn value(source: &Source, value: &Spanned<String>) -> Result<Mode, CatalogError> {
    Mode::parse(value.get_ref()).ok_or_else(|| {
        source.error(
            Some(value.span().start),
            format!("`{}` is not a mode: enforce or report", value.get_ref()),
        )
    })
}

/// The `[mode]` table's settings, every error kept with its line.
pub(super) fn table(
    source: &Source,
    table: &BTreeMap<String, Spanned<String>>,
    modes: &mut Modes,
    errors: &mut Vec<CatalogError>,
) {
    for (key, setting) in table {
        let at = Some(setting.span().start);
        let mode = match value(source, setting) {
            Ok(mode) => mode,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if key == "default" {
            modes.default = Some(mode);
        } else if REPORTABLE.contains(&key.as_str()) {
            modes.rules.push((key.clone(), mode));
        } else if ALWAYS_ENFORCED.contains(&key.as_str()) {
            errors.push(source.error(
                at,
                format!(
                    "`[mode]` cannot set `{key}`: the guard's own protection and the override's rules are always enforced"
                ),
            ));
        } else {
            errors.push(source.error(
                at,
                format!(
                    "unknown key `{key}` in `[mode]` (the keys here are `default`, {})",
                    REPORTABLE.map(|r| format!("`{r}`")).join(", ")
                ),
            ));
        }
    }
    modes
        .rules
        .sort_by_key(|(r, _)| REPORTABLE.iter().position(|x| x == r));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(default: Option<Mode>, rules: &[(&str, Mode)], modules: &[(&str, Mode)]) -> Modes {
        Modes {
            default,
            rules: rules.iter().map(|(r, m)| (r.to_string(), *m)).collect(),
            modules: modules.iter().map(|(n, m)| (n.to_string(), *m)).collect(),
        }
    }

    #[test]
    fn enforce_unless_said_and_never_for_the_guards_own_rules() {
        let none = Modes::default();
        assert_eq!(none.of("remote-access", &[]), Mode::Enforce);
        let all = modes(Some(Mode::Report), &[], &[]);
        assert_eq!(all.of("mesh-container", &["logs".into()]), Mode::Report);
        assert_eq!(all.of("unverifiable", &[]), Mode::Report);
        for rule in ALWAYS_ENFORCED {
            assert_eq!(all.of(rule, &[]), Mode::Enforce, "{rule}");
        }
    }

    #[test]
    fn a_rules_or_a_modules_setting_wins_over_the_default_and_enforce_wins_a_disagreement() {
        use Mode::*;
        let m = modes(
            Some(Enforce),
            &[("mesh-container", Report), ("remote-access", Enforce)],
            &[("vault", Enforce), ("legacy", Report)],
        );
        assert_eq!(m.of("mesh-container", &["logs".into()]), Report);
        assert_eq!(m.of("mesh-container", &["vault".into()]), Enforce);
        assert_eq!(m.of("mesh-unit", &["legacy".into()]), Report);
        assert_eq!(m.of("remote-access", &["legacy".into()]), Enforce);
        assert_eq!(m.of("mesh-unit", &["logs".into()]), Enforce);
        assert_eq!(
            m.of("remote-daemon", &["legacy".into(), "vault".into()]),
            Enforce
        );
    }

    #[test]
    fn the_caches_lines_give_the_settings_back() {
        use Mode::*;
        let m = modes(
            Some(Report),
            &[("mesh-unit", Enforce)],
            &[("odd\tname", Report)],
        );
        assert_eq!(Modes::decoded(&m.encoded()), Some(m));
        assert_eq!(Modes::decoded(&["rule\tx\tmaybe".into()]), None);
    }

    #[test]
    fn describe_says_every_setting() {
        use Mode::*;
        let m = modes(
            Some(Report),
            &[("remote-access", Enforce)],
            &[("db", Enforce)],
        );
        assert_eq!(
            m.describe(),
            "report for the whole mesh, enforce for rule remote-access, enforce for module db; self-protection and the override's rules always enforced"
        );
        assert!(!m.all_enforced());
        assert!(Modes::default().all_enforced());
    }
}
