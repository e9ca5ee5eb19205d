//! Report-only mode (decision 0060): the operator's `[mode]` table and a module's `mode`,
//! validated with their file and line, and which mode a refusal is under.

use super::{CatalogError, MeshObject, Source};
use crate::rule::Rule;
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

/// The modes a catalog sets: the whole mesh's, each rule's, each module's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Modes {
    pub default: Option<Mode>,
    /// Reportable rule → mode, in `Rule::REPORTABLE` order.
    pub rules: Vec<(Rule, Mode)>,
    /// Module name → mode, in catalog order.
    pub modules: Vec<(String, Mode)>,
    /// The modules with no mode of their own and the machines they run on, kept only when
    /// something is in report mode: a machine's mode is every one of its modules' (the
    /// compiled cache answers no "which modules run here" otherwise).
    pub unset: Vec<(String, Vec<String>)>,
}

impl Modes {
    pub fn rule(&self, rule: Rule) -> Option<Mode> {
        self.rules
            .iter()
            .find(|&&(r, _)| r == rule)
            .map(|&(_, m)| m)
    }

    pub fn module(&self, module: &str) -> Option<Mode> {
        self.modules
            .iter()
            .find(|(m, _)| m == module)
            .map(|&(_, m)| m)
    }

    /// Keeps the modules without a mode of their own and their machines, when anything is in
    /// report mode: a machine is reported only if all of its modules are (decision 0071);
    /// enforced everywhere, nothing is asked, and nothing kept.
    pub(crate) fn keep_unset(&mut self, modules: &[super::ModuleEntry]) {
        if self.all_enforced() {
            return;
        }
        self.unset = modules
            .iter()
            .filter(|m| self.module(&m.name).is_none())
            .map(|m| (m.name.clone(), m.machines.clone()))
            .collect();
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
            .map(|(r, m)| format!("{} for rule {}", m.as_str(), r.id()))
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

    /// The mode of a refusal under `rule`, given every module it reaches (a machine reaches
    /// every module that runs on it), and which setting decided it. Each reached module
    /// is under its own `mode`, else the rule's, else the whole mesh's; the rule's setting
    /// applies too. The refusal is reported only if every one of them
    /// says report: a module in report mode cannot put a neighbour on its machine in report
    /// mode. Never reported for a rule that is not reportable.
    pub fn of(&self, rule: Rule, modules: &[String]) -> Decided {
        if !rule.reportable() {
            return Decided {
                mode: Mode::Enforce,
                by: By::Always,
            };
        }
        let base = match self.rule(rule) {
            Some(mode) => (mode, By::Rule(rule)),
            None => (self.default.unwrap_or(Mode::Enforce), By::Default),
        };
        if modules.is_empty() {
            return Decided {
                mode: base.0,
                by: base.1,
            };
        }
        let module = |name: &String| match self.module(name) {
            Some(mode) => (mode, true),
            None => (base.0, false),
        };
        // An enforced setting decides; a module's own first, then the rule's, then
        // a module that has none of its own.
        let own = modules.iter().find(|&n| module(n) == (Mode::Enforce, true));
        let enforced = own
            .map(|n| By::Module {
                name: n.clone(),
                own: true,
            })
            .or_else(|| (self.rule(rule) == Some(Mode::Enforce)).then(|| base.1.clone()))
            .or_else(|| {
                modules
                    .iter()
                    .find(|&n| module(n).0 == Mode::Enforce)
                    .map(|n| By::Module {
                        name: n.clone(),
                        own: false,
                    })
            });
        match enforced {
            Some(by) => Decided {
                mode: Mode::Enforce,
                by,
            },
            None => Decided {
                mode: Mode::Report,
                by: By::Modules(modules.to_vec()),
            },
        }
    }
}

impl super::Catalog {
    /// The mode of a refusal under `rule` that reaches `object`, and which setting decided:
    /// a container or a unit reaches its module; a machine, every module that runs on it.
    pub fn mode(&self, rule: Rule, object: Option<&MeshObject>) -> Decided {
        self.mode_naming(rule, object, &[])
    }

    /// `mode`, for a refusal whose command also names `words`: a machine's refusal reaches
    /// as well every module whose container, unit or name a word names (`ssh atlas
    /// journalctl -u node-exporter` reaches `node-exporter`'s module, wherever it runs).
    pub fn mode_naming(
        &self,
        rule: Rule,
        object: Option<&MeshObject>,
        words: &[String],
    ) -> Decided {
        let modes = self.modes();
        if modes.all_enforced() {
            return modes.of(rule, &[]);
        }
        let mut modules: Vec<String> = match object {
            Some(MeshObject::Container { module, .. } | MeshObject::Unit { module, .. }) => {
                vec![module.clone()]
            }
            Some(MeshObject::Module { name }) => vec![name.clone()],
            Some(MeshObject::Machine(host)) => {
                // As `runs_on` answers: listed by name, or by a pattern the host matches.
                let set = modes.modules.iter().map(|(name, _)| name).filter(|name| {
                    self.module_entry(name)
                        .is_some_and(|entry| self.runs_on(&entry, &host.machine))
                });
                let unset = modes
                    .unset
                    .iter()
                    .filter(|(name, machines)| {
                        let entry = super::ModuleEntry {
                            name: name.clone(),
                            machines: machines.clone(),
                        };
                        self.runs_on(&entry, &host.machine)
                    })
                    .map(|(name, _)| name);
                set.chain(unset).cloned().collect()
            }
            None => Vec::new(),
        };
        if matches!(object, Some(MeshObject::Machine(_))) {
            for word in words {
                let pieces = word.split(|c: char| {
                    c.is_whitespace() || matches!(c, '@' | ':' | '/' | '=' | ',' | '\'' | '"' | ';')
                });
                for piece in pieces.filter(|p| !p.is_empty()) {
                    let named = self
                        .container(piece)
                        .or_else(|| self.unit(piece))
                        .or_else(|| self.module(piece));
                    if let Some(module) = named.as_ref().and_then(MeshObject::module)
                        && !modules.iter().any(|m| m == module)
                    {
                        modules.push(module.to_string());
                    }
                }
            }
        }
        modes.of(rule, &modules)
    }
}

/// A refusal's mode and the setting that decided it (`check` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub mode: Mode,
    pub by: By,
}

/// Which setting decided a refusal's mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    /// The guard's own rules: never reported.
    Always,
    /// The whole mesh's mode (`[mode] default`, else enforce).
    Default,
    /// The rule's `[mode]` entry.
    Rule(Rule),
    /// A reached module: under its own `mode`, or (`own == false`) under the rule's
    /// or the whole mesh's, having none.
    Module { name: String, own: bool },
    /// Every reached module said report.
    Modules(Vec<String>),
}

impl By {
    /// "module `metrics` (no mode of its own)", for `check`.
    pub fn describe(&self) -> String {
        match self {
            By::Always => "the guard's own rule, always enforced".into(),
            By::Default => "the whole mesh's mode".into(),
            By::Rule(rule) => format!("rule {}'s mode", rule.id()),
            By::Module { name, own: true } => format!("module `{name}`'s mode"),
            By::Module { name, own: false } => format!(
                "module `{name}`, which has no mode of its own (the rule's or the whole mesh's)"
            ),
            By::Modules(names) => format!(
                "the modules it reaches, all in report mode: {}",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The deciding module, if a module decided.
    pub fn module(&self) -> Option<&str> {
        match self {
            By::Module { name, .. } => Some(name),
            By::Modules(names) => names.first().map(String::as_str),
            _ => None,
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
            .map(|(r, m)| format!("rule\t{}\t{}", r.id(), m.as_str()));
        let modules = self
            .modules
            .iter()
            .map(|(n, m)| format!("module\t{n}\t{}", m.as_str()));
        // Machine names hold no whitespace (the catalog's check): one line per module.
        let unset = self
            .unset
            .iter()
            .map(|(n, machines)| format!("unset\t{n}\t{}", machines.join(" ")));
        default
            .into_iter()
            .chain(rules)
            .chain(modules)
            .chain(unset)
            .collect()
    }

    /// The settings `encoded` wrote, or `None` for lines it cannot have written.
    pub(crate) fn decoded(lines: &[String]) -> Option<Modes> {
        let mut modes = Modes::default();
        for line in lines {
            let (kind, rest) = line.split_once('\t')?;
            let (name, mode) = rest.rsplit_once('\t')?;
            if kind == "unset" {
                let machines = mode.split(' ').filter(|m| !m.is_empty());
                let machines = machines.map(str::to_string).collect();
                modes.unset.push((name.to_string(), machines));
                continue;
            }
            let mode = Mode::parse(mode)?;
            match kind {
                "default" => modes.default = Some(mode),
                "rule" => {
                    let rule = Rule::from_id(name).filter(|r| r.reportable())?;
                    modes.rules.push((rule, mode));
                }
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
        } else if let Some(rule) = Rule::from_id(key).filter(|r| r.reportable()) {
            modes.rules.push((rule, mode));
        } else if Rule::from_id(key).is_some() {
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
                    Rule::REPORTABLE.map(|r| format!("`{r}`")).join(", ")
                ),
            ));
        }
    }
    // `Rule`'s order is `REPORTABLE`'s: the cache and `describe` list them so.
    modes.rules.sort_by_key(|&(rule, _)| rule);
}

#[cfg(test)]
#[path = "mode_tests.rs"]
mod tests;
