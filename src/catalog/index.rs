//! The validated, indexed catalog: every lookup the decision needs is a hash probe or a
//! short scan of the mesh's domains and networks, either in memory (just parsed) or in
//! the compiled cache file (see `cache.rs`), which is probed without being read whole.

mod build;
mod lookup;
mod object;
mod pattern;

pub(crate) use build::*;
pub use object::*;
pub(crate) use pattern::Patterns;
pub use pattern::is_glob;

use super::Cidr;
use super::cache::{Table, View};
use lookup::Lookup;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;

/// The catalog the decision reads: the index as just built from the TOML, or a view of
/// the compiled cache of that index.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    repr: Repr,
}

#[derive(Debug, Clone)]
enum Repr {
    Memory(Box<Index>),
    Cached(std::sync::Arc<View>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Memory(Box::default())
    }
}

/// The index as built from the parsed files.
#[derive(Debug, Clone, Default)]
pub(super) struct Index {
    pub(super) machines: Vec<String>,
    pub(super) machine_by_name: HashMap<String, usize>,
    pub(super) ranges: Ranges,
    pub(super) modules: Vec<ModuleEntry>,
    pub(super) module_by_name: HashMap<String, usize>,
    pub(super) module_by_container: HashMap<String, usize>,
    pub(super) module_by_unit: HashMap<String, usize>,
    pub(super) tools: Vec<ToolEntry>,
    /// For each tool, found by one literal word of each of its `replaces` entries (the
    /// rarest in the catalog): a command can only match an entry whose every literal word
    /// it contains, so the tools found by a command's words include every tool that can
    /// match it, and a refusal ranks a handful of tools instead of all of them.
    pub(super) tool_words: HashMap<String, Vec<u32>>,
}

/// What both forms keep in memory: small, needed for most host lookups.
#[derive(Debug, Clone, Default)]
pub(super) struct Ranges {
    pub(super) domains: Vec<String>,
    pub(super) networks: Vec<Cidr>,
    /// The forge's machine name and git account.
    pub(super) forge: Option<(String, String)>,
    /// The `[record] syslog` setting, as written.
    pub(super) syslog: Option<String>,
    /// Machines named by pattern, compiled only when a host is no exact name.
    pub(super) patterns: Patterns,
    /// Where report-only mode is set (decision 0060).
    pub(super) modes: super::Modes,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleEntry {
    pub name: String,
    pub machines: Vec<String>,
}

/// A seat verb (`module == None`) or a module's own tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolEntry {
    pub name: String,
    pub usage: String,
    pub replaces: Vec<String>,
    pub module: Option<String>,
}

/// How a host word was found to be a mesh machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMatch {
    /// The catalog's name for the machine, or the host itself when it is a mesh machine
    /// only by its domain or network.
    pub machine: String,
    pub by: HostBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostBy {
    Name,
    Domain,
    Network,
    /// A `[[machine]] pattern` matched: `machine` is the host as written.
    Pattern,
}

impl Catalog {
    pub(super) fn cached(view: View) -> Catalog {
        Catalog {
            repr: Repr::Cached(std::sync::Arc::new(view)),
        }
    }

    pub(super) fn memory(&self) -> Option<&Index> {
        match &self.repr {
            Repr::Memory(index) => Some(index),
            Repr::Cached(_) => None,
        }
    }

    /// Whether a lookup in the cache file failed (unreadable, or a checksum that does not
    /// match): the answers given may be wrong, so the decision must be made again from
    /// the catalog itself.
    pub fn is_broken(&self) -> bool {
        matches!(&self.repr, Repr::Cached(view) if view.is_broken())
    }

    /// The catalog's `[record] syslog` setting, if it has one.
    pub fn syslog(&self) -> Option<&str> {
        self.ranges().syslog.as_deref()
    }

    /// Where report-only mode is set (decision 0060).
    pub fn modes(&self) -> &super::Modes {
        &self.ranges().modes
    }

    /// The form that answers: the in-memory index or the compiled cache.
    fn lookup(&self) -> &dyn Lookup {
        match &self.repr {
            Repr::Memory(index) => index.as_ref(),
            Repr::Cached(view) => view.as_ref(),
        }
    }

    fn ranges(&self) -> &Ranges {
        self.lookup().ranges()
    }

    fn machine_named(&self, key: &str) -> Option<String> {
        self.lookup().machine_named(key)
    }

    fn module_of(&self, table: Table, key: &str) -> Option<String> {
        self.lookup().module_of(table, key)
    }

    /// The machine a bare host (no user, port or path) names, if it is of the mesh.
    pub fn host(&self, host: &str) -> Option<HostMatch> {
        let key = normalize_host(host);
        if key.is_empty() {
            return None;
        }
        if let Some(machine) = self.machine_named(&key) {
            return Some(HostMatch {
                machine,
                by: HostBy::Name,
            });
        }
        let ranges = self.ranges();
        if let Ok(addr) = key.parse::<IpAddr>() {
            if ranges.networks.iter().any(|n| n.contains(addr)) {
                return Some(HostMatch {
                    machine: key,
                    by: HostBy::Network,
                });
            }
            return None;
        }
        if ranges.patterns.matches(&key) {
            return Some(HostMatch {
                machine: key,
                by: HostBy::Pattern,
            });
        }
        if ranges.domains.iter().any(|d| {
            key.len() > d.len()
                && key.ends_with(d.as_str())
                && key.as_bytes()[key.len() - d.len() - 1] == b'.'
        }) {
            return Some(HostMatch {
                machine: key,
                by: HostBy::Domain,
            });
        }
        None
    }

    pub fn container(&self, name: &str) -> Option<MeshObject> {
        let module = self.module_of(Table::Containers, name)?;
        Some(MeshObject::Container {
            name: name.to_string(),
            module,
        })
    }

    /// The first mesh unit a systemd glob (`redis*`, `*.timer`) matches, if any.
    pub fn unit_glob(&self, glob: &str) -> Option<MeshObject> {
        let names = self.names(super::cache::Table::Units);
        let found = pattern::first_glob_match(glob, &names, true)?;
        self.unit(&found)
    }

    /// The first mesh container a glob matches, if any.
    pub fn container_glob(&self, glob: &str) -> Option<MeshObject> {
        let names = self.names(super::cache::Table::Containers);
        let found = pattern::first_glob_match(glob, &names, false)?;
        self.container(&found)
    }

    /// Every key of a table, for globs: read whole only when a command holds one.
    fn names(&self, table: Table) -> Vec<String> {
        match &self.repr {
            Repr::Memory(index) => {
                let map = if table == Table::Containers {
                    &index.module_by_container
                } else {
                    &index.module_by_unit
                };
                let mut names: Vec<String> = map.keys().cloned().collect();
                names.sort();
                names
            }
            Repr::Cached(view) => view.keys(table),
        }
    }

    pub fn unit(&self, name: &str) -> Option<MeshObject> {
        let module = self.module_of(Table::Units, unit_key(name))?;
        Some(MeshObject::Unit {
            name: name.to_string(),
            module,
        })
    }

    pub fn module(&self, name: &str) -> Option<MeshObject> {
        self.module_entry(name).map(|_| MeshObject::Module {
            name: name.to_string(),
        })
    }

    /// Whatever mesh object a plain word names: a machine, container, unit or module.
    pub fn object(&self, word: &str) -> Option<MeshObject> {
        self.container(word)
            .or_else(|| self.unit(word))
            .or_else(|| self.module(word))
            .or_else(|| self.host(word).map(MeshObject::Machine))
    }

    /// Whether `user@machine` is the forge's git account.
    pub fn is_forge_account(&self, user: Option<&str>, machine: &str) -> bool {
        let Some((forge, git_user)) = &self.ranges().forge else {
            return false;
        };
        user == Some(git_user.as_str()) && forge == machine
    }

    pub fn forge_account(&self) -> Option<(String, String)> {
        self.ranges()
            .forge
            .as_ref()
            .map(|(machine, user)| (user.clone(), machine.clone()))
    }

    pub fn module_entry(&self, name: &str) -> Option<ModuleEntry> {
        self.lookup().module_entry(name)
    }

    /// Whether `name` is a `[[machine]] pattern`'s: a scheme of names, not one host.
    pub fn is_pattern_machine(&self, name: &str) -> bool {
        self.ranges().patterns.list.iter().any(|(_, m)| m == name)
    }

    /// Whether the catalog says `module` runs on `machine` (a machine's name as a refusal
    /// gives it: the catalog's name, or a host a `[[machine]] pattern` matches).
    pub fn runs_on(&self, module: &ModuleEntry, machine: &str) -> bool {
        let listed = |name: &str| module.machines.iter().any(|m| m == name);
        listed(machine)
            || self
                .ranges()
                .patterns
                .matching(&normalize_host(machine))
                .any(listed)
    }

    /// Tools in catalog order: each module's own tools, then the seat verbs, as written.
    /// From the cache this reads every tool: the decision uses `tools_named_by`.
    pub fn tools(&self) -> &[ToolEntry] {
        self.lookup().tools()
    }

    /// The tools (with their catalog order) that have a `replaces` entry whose words could
    /// all be among `words`: a superset of the tools whose entries match a command whose
    /// words (and their base names) are `words`, in catalog order.
    pub fn tools_named_by<'w>(
        &self,
        words: impl IntoIterator<Item = &'w str>,
    ) -> Vec<(usize, ToolEntry)> {
        let mut ids = BTreeSet::new();
        let mut seen = BTreeSet::new();
        for word in words {
            if !seen.insert(word) {
                continue;
            }
            ids.extend(self.lookup().tool_ids(word));
        }
        ids.into_iter()
            .filter_map(|id| self.lookup().tool(id).map(|t| (id as usize, t)))
            .collect()
    }

    pub fn machine_count(&self) -> usize {
        self.lookup().machine_count()
    }
}

impl Index {
    /// Each `replaces` entry filed under its rarest literal word (see `tool_words`).
    fn index_tool_words(&mut self) {
        let literals = |entry: &str| -> Vec<String> {
            let mut words = entry.split_whitespace();
            let program = words.next().map(|p| crate::argv::base_name(p).to_string());
            program
                .into_iter()
                .chain(
                    words
                        .filter(|w| !(w.starts_with('<') && w.ends_with('>')))
                        .map(String::from),
                )
                .collect()
        };
        let mut counts: HashMap<String, usize> = HashMap::new();
        for tool in &self.tools {
            for entry in &tool.replaces {
                for word in literals(entry).into_iter().collect::<BTreeSet<_>>() {
                    *counts.entry(word).or_default() += 1;
                }
            }
        }
        for (id, tool) in self.tools.iter().enumerate() {
            for entry in &tool.replaces {
                if let Some(word) = literals(entry).into_iter().min_by_key(|w| counts[w]) {
                    let ids = self.tool_words.entry(word).or_default();
                    if ids.last() != Some(&(id as u32)) {
                        ids.push(id as u32);
                    }
                }
            }
        }
    }
}
