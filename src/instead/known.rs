//! What a refused command determines, for the placeholders a matched shape did not bind:
//! the mesh objects it names (only those that fit the machine it reaches), the machine, the
//! command it carries, and a copy's source and path. Every value is shell text.

use super::{Placeholder, Values};
use crate::catalog::{Catalog, MeshObject, ToolEntry};
use crate::decide::Refusal;
use crate::shell::quote;

/// systemd's programs: a name they are given is a unit's before a container's.
const UNIT_PROGRAMS: [&str; 4] = ["systemctl", "journalctl", "service", "systemd-run"];

/// What the refusal knows.
#[derive(Debug, Clone, Default)]
pub struct Known {
    values: Values,
    /// The refused target cannot be known: a shape's object placeholder matches it.
    pub any_target: bool,
    /// A machine the connection only passes through: never the `<machine>` a usage runs on.
    pub hop: Option<String>,
}

impl Known {
    pub fn get(&self, placeholder: &Placeholder) -> Option<&String> {
        self.values.get(placeholder)
    }

    /// A placeholder's value for `tool`'s usage: a module's own tool knows its module.
    pub fn value(&self, placeholder: &Placeholder, tool: &ToolEntry) -> Option<String> {
        match (placeholder, &tool.module) {
            (Placeholder::Module, Some(module)) => Some(module.clone()),
            _ => self.values.get(placeholder).cloned(),
        }
    }

    /// A module's own tool is offered only for that module's containers, units and
    /// machines; a seat verb, for anything.
    pub fn is_for(&self, catalog: &Catalog, tool: &ToolEntry) -> bool {
        let Some(module) = &tool.module else {
            return true;
        };
        if let Some(known) = self.values.get(&Placeholder::Module) {
            return known == module;
        }
        self.values
            .get(&Placeholder::Machine)
            .zip(catalog.module_entry(module))
            .is_some_and(|(machine, entry)| catalog.runs_on(&entry, machine))
    }

    /// What the refusal found, then what the command's other words name (`ssh atlas
    /// journalctl -u mesh-controller` names module `controller` too, as it runs on atlas),
    /// the command it carries, and a copy's source and destination.
    pub fn from_command(catalog: &Catalog, refusal: &Refusal) -> Known {
        let mut known = Known::from_refusal(refusal);
        let machine = known.values.get(&Placeholder::Machine).cloned();
        // The command up to what it carries, as its family's program, then each command it
        // carries (`ssh m journalctl -u x`), or the carried words as they are.
        let program = refusal.family.first().or(refusal.command.first());
        let carried = refusal.command.len().saturating_sub(refusal.inner.len());
        let runs = if refusal.runs.is_empty() {
            std::slice::from_ref(&refusal.inner)
        } else {
            refusal.runs.as_slice()
        };
        let parts = std::iter::once((program, &refusal.command[..carried]))
            .chain(runs.iter().map(|run| (run.first(), run.as_slice())))
            // A target that cannot be known, or one passed through: what the command names
            // elsewhere is not it, nor the mesh's on the machine it runs on.
            .filter(|_| refusal.unknown.is_none() && !refusal.hop);
        // A word met again names what it named the first time, and is not looked up again.
        let mut seen = std::collections::HashSet::new();
        'parts: for (program, words) in parts {
            // A name that is a container and a unit is the unit to systemd's programs.
            let units_first =
                program.is_some_and(|p| UNIT_PROGRAMS.contains(&crate::argv::base_name(p)));
            // An option's or a match's value names what the word alone would: `--unit=x`,
            // `_SYSTEMD_UNIT=x`.
            let words = words.iter().flat_map(|w| {
                std::iter::once(w.as_str()).chain(w.split_once('=').map(|(_, value)| value))
            });
            for word in words.filter(|w| seen.insert(*w)) {
                // A word sets only what is not set yet: the lookups that can no longer set
                // anything are left out (each is a record read from the cache).
                let has = |p: &Placeholder| known.values.contains_key(p);
                let module_set = has(&Placeholder::Module);
                let want_container = !module_set || !has(&Placeholder::Container);
                let want_unit = !module_set || !has(&Placeholder::Unit);
                if !want_container && !want_unit {
                    break 'parts;
                }
                let container = || want_container.then(|| catalog.container(word)).flatten();
                let unit = || want_unit.then(|| catalog.unit(word)).flatten();
                let object = if units_first {
                    unit().or_else(container)
                } else {
                    container().or_else(unit)
                }
                .or_else(|| (!module_set).then(|| catalog.module(word)).flatten());
                let (name, module) = match &object {
                    Some(MeshObject::Container { name, module }) => {
                        (Some((Placeholder::Container, name)), module)
                    }
                    Some(MeshObject::Unit { name, module }) => {
                        (Some((Placeholder::Unit, name)), module)
                    }
                    Some(MeshObject::Module { name }) => (None, name),
                    _ => continue,
                };
                // On a machine the module does not run on, the name is that machine's own; a
                // module that names no machine may run on any.
                let fits = machine.as_ref().is_none_or(|m| {
                    catalog
                        .module_entry(module)
                        .is_some_and(|e| e.machines.is_empty() || catalog.runs_on(&e, m))
                });
                if !fits {
                    continue;
                }
                if let Some((placeholder, name)) = name {
                    known
                        .values
                        .entry(placeholder)
                        .or_insert_with(|| name.clone());
                }
                known
                    .values
                    .entry(Placeholder::Module)
                    .or_insert_with(|| module.clone());
            }
        }
        if !refusal.inner.is_empty() {
            known.values.insert(
                Placeholder::Command,
                quote::join(&refusal.inner, &refusal.written),
            );
        }
        known.copy_ends(refusal);
        known.single_machine(catalog);
        known
    }

    /// What a tool alone determines, for the "instead of" table: a module's own tool knows
    /// its module, and its machine when the module runs on one.
    pub fn of_tool(catalog: &Catalog, tool: &ToolEntry) -> Known {
        let mut known = Known::default();
        if let Some(module) = &tool.module {
            known.values.insert(Placeholder::Module, module.clone());
            known.single_machine(catalog);
        }
        known
    }

    /// A module on a single machine: its containers and units are on that machine (a
    /// pattern machine is many hosts: which one is not known).
    fn single_machine(&mut self, catalog: &Catalog) {
        if let Some(module) = self
            .values
            .get(&Placeholder::Module)
            .and_then(|m| catalog.module_entry(m))
            && let [only] = module.machines.as_slice()
            && !catalog.is_pattern_machine(only)
        {
            self.values
                .entry(Placeholder::Machine)
                .or_insert_with(|| only.clone());
        }
    }

    /// `scp SOURCE… HOST:PATH`: what is copied, and the path it goes to.
    fn copy_ends(&mut self, refusal: &Refusal) {
        let [sources @ .., last] = refusal.operands.as_slice() else {
            return;
        };
        let Some((_, path)) = last.split_once(':').filter(|(host, _)| {
            !host.is_empty() && !host.starts_with(['/', '.', '~']) && !host.contains('/')
        }) else {
            return;
        };
        if sources.is_empty() {
            return;
        }
        let shown: Vec<String> = sources
            .iter()
            .map(|w| quote::shown(w, &refusal.written, false))
            .collect();
        self.values.insert(Placeholder::Source, shown.join(" "));
        self.values.insert(
            Placeholder::Path,
            quote::shown(path, &refusal.written, false),
        );
    }

    pub fn from_refusal(refusal: &Refusal) -> Known {
        let mut values = Values::new();
        if refusal.unknown.is_some() {
            return Known {
                values,
                any_target: true,
                hop: None,
            };
        }
        if refusal.hop {
            return Known {
                values,
                any_target: false,
                hop: refusal.machine.clone(),
            };
        }
        if let Some(machine) = &refusal.machine {
            values.insert(Placeholder::Machine, machine.clone());
        }
        match &refusal.object {
            Some(MeshObject::Container { name, module }) => {
                values.insert(Placeholder::Container, name.clone());
                values.insert(Placeholder::Module, module.clone());
            }
            Some(MeshObject::Unit { name, module }) => {
                values.insert(Placeholder::Unit, name.clone());
                values.insert(Placeholder::Module, module.clone());
            }
            Some(MeshObject::Module { name }) => {
                values.insert(Placeholder::Module, name.clone());
            }
            Some(MeshObject::Machine(m)) => {
                values.insert(Placeholder::Machine, m.machine.clone());
            }
            None => {}
        }
        Known {
            values,
            any_target: false,
            hop: None,
        }
    }
}
