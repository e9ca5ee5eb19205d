//! The validated, indexed catalog: every lookup the decision needs is a hash probe or a
//! short scan of the mesh's domains and networks, either in memory (just parsed) or in
//! the compiled cache file (see `cache.rs`), which is probed without being read whole.

use super::cache::{Table, View};
use super::{CatalogError, CatalogFile, Cidr, Source};
use std::collections::hash_map::Entry;
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
}

/// A word that names something of the mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeshObject {
    Machine(HostMatch),
    Container { name: String, module: String },
    Unit { name: String, module: String },
    Module { name: String },
}

impl MeshObject {
    /// "mesh machine `atlas`", "container `mesh-controller` of mesh module `controller`".
    pub fn describe(&self) -> String {
        match self {
            MeshObject::Machine(m) => match m.by {
                HostBy::Name => format!("mesh machine `{}`", m.machine),
                HostBy::Domain => format!("`{}`, a host in a mesh domain", m.machine),
                HostBy::Network => format!("`{}`, an address in a mesh network", m.machine),
            },
            MeshObject::Container { name, module } => {
                format!("container `{name}` of mesh module `{module}`")
            }
            MeshObject::Unit { name, module } => format!("unit `{name}` of mesh module `{module}`"),
            MeshObject::Module { name } => format!("mesh module `{name}`"),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            MeshObject::Machine(m) => &m.machine,
            MeshObject::Container { name, .. } | MeshObject::Unit { name, .. } => name,
            MeshObject::Module { name } => name,
        }
    }

    pub fn module(&self) -> Option<&str> {
        match self {
            MeshObject::Container { module, .. } | MeshObject::Unit { module, .. } => Some(module),
            MeshObject::Module { name } => Some(name),
            MeshObject::Machine(_) => None,
        }
    }
}

/// A host as the catalog keys it: lower case, no brackets or trailing dot, and an address
/// in one canonical form whatever way it was written (`2887516426`, `0xac1c010a`,
/// `172.28.266`, `fd00:20:0::13`, `fe80::1%eth0`, `::ffff:10.20.0.11`), as the resolver
/// would read it.
pub(super) fn normalize_host(host: &str) -> String {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    let without_zone = host.split('%').next().unwrap_or(host);
    if let Ok(v6) = without_zone.parse::<std::net::Ipv6Addr>() {
        return match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        };
    }
    if let Some(v4) = super::net::parse_ipv4_loose(host) {
        return v4.to_string();
    }
    host.to_ascii_lowercase()
}

pub(super) fn unit_key(unit: &str) -> &str {
    unit.strip_suffix(".service").unwrap_or(unit)
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

    fn ranges(&self) -> &Ranges {
        match &self.repr {
            Repr::Memory(index) => &index.ranges,
            Repr::Cached(view) => view.ranges(),
        }
    }

    fn machine_named(&self, key: &str) -> Option<String> {
        match &self.repr {
            Repr::Memory(index) => index
                .machine_by_name
                .get(key)
                .map(|&i| index.machines[i].clone()),
            Repr::Cached(view) => view.string(Table::Machines, key),
        }
    }

    fn module_of(&self, table: Table, key: &str) -> Option<String> {
        match &self.repr {
            Repr::Memory(index) => {
                let map = if table == Table::Containers {
                    &index.module_by_container
                } else {
                    &index.module_by_unit
                };
                map.get(key).map(|&m| index.modules[m].name.clone())
            }
            Repr::Cached(view) => view.string(table, key),
        }
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
        match &self.repr {
            Repr::Memory(index) => index
                .module_by_name
                .get(name)
                .map(|&i| index.modules[i].clone()),
            Repr::Cached(view) => view.module(name),
        }
    }

    /// Tools in catalog order: each module's own tools, then the seat verbs, as written.
    /// From the cache this reads every tool: the decision uses `tools_named_by`.
    pub fn tools(&self) -> &[ToolEntry] {
        match &self.repr {
            Repr::Memory(index) => &index.tools,
            Repr::Cached(view) => view.tools(),
        }
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
            match &self.repr {
                Repr::Memory(index) => {
                    ids.extend(index.tool_words.get(word).into_iter().flatten().copied())
                }
                Repr::Cached(view) => ids.extend(view.tool_ids(word)),
            }
        }
        ids.into_iter()
            .filter_map(|id| {
                let tool = match &self.repr {
                    Repr::Memory(index) => index.tools.get(id as usize).cloned(),
                    Repr::Cached(view) => view.tool(id),
                };
                tool.map(|t| (id as usize, t))
            })
            .collect()
    }

    pub fn machine_count(&self) -> usize {
        match &self.repr {
            Repr::Memory(index) => index.machines.len(),
            Repr::Cached(view) => view.machine_count(),
        }
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

/// Validates the parsed files together and builds the index.
pub(super) fn build(
    sources: &[Source],
    files: Vec<CatalogFile>,
) -> Result<Catalog, Vec<CatalogError>> {
    let mut b = Builder {
        catalog: Index::default(),
        errors: Vec::new(),
        seen_names: HashMap::new(),
        module_machines: Vec::new(),
        duplicates: Vec::new(),
    };
    let mut once: HashMap<&str, usize> = HashMap::new();
    let mut forge = None;
    // Tools are ordered module tools first, then verbs, each in file order, so that
    // "catalog order" is the order a reader of the merged files sees.
    let mut verbs = Vec::new();
    for (source, file) in sources.iter().zip(files) {
        let mut single = |key: &'static str, offset: usize, b: &mut Builder| {
            if once.insert(key, offset).is_some() {
                b.errors.push(source.error(
                    Some(offset),
                    format!("`{key}` may appear in only one catalog file"),
                ));
            }
        };
        if let Some(v) = &file.version {
            single("version", v.span().start, &mut b);
            if *v.get_ref() != 1 {
                b.errors.push(source.error(
                    Some(v.span().start),
                    format!(
                        "unsupported catalog version {} (this mesh-guard reads version 1)",
                        v.get_ref()
                    ),
                ));
            }
        }
        if let Some(mesh) = &file.mesh {
            single("mesh", mesh.span().start, &mut b);
            for d in &mesh.get_ref().domains {
                let domain = normalize_host(d.get_ref().trim_start_matches('.'));
                if domain.is_empty()
                    || domain.contains(|c: char| c.is_whitespace() || c == '/' || c == '@')
                {
                    b.errors.push(source.error(
                        Some(d.span().start),
                        format!("`{}` is not a domain name", d.get_ref()),
                    ));
                } else {
                    b.catalog.ranges.domains.push(domain);
                }
            }
            for n in &mesh.get_ref().networks {
                match n.get_ref().parse::<Cidr>() {
                    Ok(cidr) => b.catalog.ranges.networks.push(cidr),
                    Err(e) => b.errors.push(source.error(Some(n.span().start), e)),
                }
            }
        }
        if let Some(r) = &file.record {
            single("record", r.span().start, &mut b);
            if let Some(v) = &r.get_ref().syslog {
                if crate::record::forward::Target::parse(v.get_ref()).is_none() {
                    b.errors.push(source.error(
                        Some(v.span().start),
                        format!(
                            "`{}` is not none, journald, unix:PATH, udp://HOST:PORT or tcp://HOST:PORT",
                            v.get_ref()
                        ),
                    ));
                } else {
                    b.catalog.ranges.syslog = Some(v.get_ref().clone());
                }
            }
        }
        if let Some(f) = file.forge {
            single("forge", f.span().start, &mut b);
            forge = Some((source, f.into_inner()));
        }
        for machine in &file.machine {
            let index = b.catalog.machines.len();
            b.catalog
                .machines
                .push(normalize_host(machine.name.get_ref()));
            for name in std::iter::once(&machine.name).chain(&machine.aliases) {
                b.machine_name(source, name, index);
            }
        }
        for module in file.module {
            b.module(source, module);
        }
        verbs.extend(file.verb.into_iter().map(|v| (source, v)));
    }
    for (source, verb) in verbs {
        b.tool(source, verb, None);
    }
    if let Some((source, f)) = forge {
        match b
            .catalog
            .machine_by_name
            .get(&normalize_host(f.machine.get_ref()))
        {
            Some(&machine) => {
                b.catalog.ranges.forge = Some((b.catalog.machines[machine].clone(), f.git_user))
            }
            None => b.errors.push(source.error(
                Some(f.machine.span().start),
                format!(
                    "the forge machine `{}` is not a machine of this catalog",
                    f.machine.get_ref()
                ),
            )),
        }
    }
    // A catalog says which format it is written in, once.
    if !once.contains_key("version") {
        b.errors.push(CatalogError {
            file: sources.first().map(|s| s.path.clone()).unwrap_or_default(),
            line: None,
            message: "the catalog has no `version = 1` (write it once, in any of its files)".into(),
        });
    }
    // Module machine lists are checked once every file's machines are known.
    for (machine, error) in std::mem::take(&mut b.module_machines) {
        if !b.catalog.machine_by_name.contains_key(&machine) {
            b.errors.push(error);
        }
    }
    if !b.errors.is_empty() {
        if !b.duplicates.is_empty() {
            say_first_definitions(sources, &mut b.errors, &b.duplicates);
        }
        return Err(b.errors);
    }
    b.catalog.index_tool_words();
    Ok(Catalog {
        repr: Repr::Memory(Box::new(b.catalog)),
    })
}

/// Adds to each duplicate's error where its name was first defined, found by reading the
/// files again in the order `build` did: only a catalog with duplicates pays for it.
fn say_first_definitions(
    sources: &[Source],
    errors: &mut [CatalogError],
    duplicates: &[(usize, &'static str, String)],
) {
    let mut first: HashMap<(&'static str, String), String> = HashMap::new();
    let mut note = |what: &'static str, key: String, source: &Source, offset: usize| {
        first
            .entry((what, key))
            .or_insert_with(|| format!("{}:{}", source.path.display(), source.line_of(offset)));
    };
    let mut verbs = Vec::new();
    for source in sources {
        let Ok(file) = toml::from_str::<CatalogFile>(&source.text) else {
            continue;
        };
        for machine in &file.machine {
            for name in std::iter::once(&machine.name).chain(&machine.aliases) {
                note(
                    "machine name",
                    normalize_host(name.get_ref()),
                    source,
                    name.span().start,
                );
            }
        }
        for module in &file.module {
            let name = &module.name;
            note("module", name.get_ref().clone(), source, name.span().start);
            for c in &module.containers {
                note("container", c.get_ref().clone(), source, c.span().start);
            }
            for u in &module.units {
                note(
                    "unit",
                    unit_key(u.get_ref()).to_string(),
                    source,
                    u.span().start,
                );
            }
            for tool in &module.tool {
                let name = &tool.name;
                note(
                    "tool or verb",
                    name.get_ref().clone(),
                    source,
                    name.span().start,
                );
            }
        }
        verbs.extend(file.verb.into_iter().map(|v| (source, v.name)));
    }
    for (source, name) in verbs {
        note(
            "tool or verb",
            name.get_ref().clone(),
            source,
            name.span().start,
        );
    }
    for (index, what, key) in duplicates {
        if let (Some(at), Some(error)) = (first.get(&(*what, key.clone())), errors.get_mut(*index))
        {
            error.message.push_str(&format!(", first defined at {at}"));
        }
    }
}

struct Builder {
    catalog: Index,
    errors: Vec<CatalogError>,
    /// Tool names, to reject duplicates across verbs and module tools.
    seen_names: HashMap<String, ()>,
    /// Each machine a module names, with the error to report if it is not a machine.
    module_machines: Vec<(String, CatalogError)>,
    /// Each duplicate's error (by index) with its kind and key, to say where the first
    /// definition is once all files are read.
    duplicates: Vec<(usize, &'static str, String)>,
}

impl Builder {
    fn duplicate(
        &mut self,
        source: &Source,
        span: std::ops::Range<usize>,
        what: &'static str,
        name: &str,
        key: &str,
    ) {
        self.duplicates
            .push((self.errors.len(), what, key.to_string()));
        self.errors
            .push(source.error(Some(span.start), format!("duplicate {what} `{name}`")));
    }

    fn machine_name(&mut self, source: &Source, name: &toml::Spanned<String>, index: usize) {
        let key = normalize_host(name.get_ref());
        if key.is_empty() {
            self.errors
                .push(source.error(Some(name.span().start), "a machine name may not be empty"));
            return;
        }
        if key.contains(|c: char| c.is_whitespace() || matches!(c, '/' | '@' | ',')) {
            self.errors.push(source.error(
                Some(name.span().start),
                format!(
                    "`{}` is not a host name (no spaces, `/`, `@` or `,`)",
                    name.get_ref()
                ),
            ));
            return;
        }
        match self.catalog.machine_by_name.entry(key) {
            Entry::Occupied(o) => {
                let key = o.key().clone();
                self.duplicate(source, name.span(), "machine name", name.get_ref(), &key)
            }
            Entry::Vacant(v) => {
                v.insert(index);
            }
        }
    }

    fn module(&mut self, source: &Source, module: super::Module) {
        let index = self.catalog.modules.len();
        let name = module.name.get_ref().clone();
        if self
            .catalog
            .module_by_name
            .insert(name.clone(), index)
            .is_some()
        {
            self.duplicate(source, module.name.span(), "module", &name, &name);
        }
        for c in &module.containers {
            if self
                .catalog
                .module_by_container
                .insert(c.get_ref().clone(), index)
                .is_some()
            {
                self.duplicate(source, c.span(), "container", c.get_ref(), c.get_ref());
            }
        }
        for u in &module.units {
            if self
                .catalog
                .module_by_unit
                .insert(unit_key(u.get_ref()).to_string(), index)
                .is_some()
            {
                self.duplicate(source, u.span(), "unit", u.get_ref(), unit_key(u.get_ref()));
            }
        }
        for m in &module.machines {
            let error = source.error(
                Some(m.span().start),
                format!(
                    "module `{name}` names machine `{}`, which is not a machine of this catalog",
                    m.get_ref()
                ),
            );
            self.module_machines
                .push((normalize_host(m.get_ref()), error));
        }
        self.catalog.modules.push(ModuleEntry {
            name: name.clone(),
            machines: module
                .machines
                .iter()
                .map(|m| m.get_ref().clone())
                .collect(),
        });
        for tool in module.tool {
            self.tool(source, tool, Some(name.clone()));
        }
    }

    fn tool(&mut self, source: &Source, tool: super::Tool, module: Option<String>) {
        let name = tool.name.get_ref().clone();
        if self.seen_names.insert(name.clone(), ()).is_some() {
            self.duplicate(source, tool.name.span(), "tool or verb", &name, &name);
        }
        for r in &tool.replaces {
            if r.get_ref().split_whitespace().next().is_none() {
                self.errors.push(
                    source.error(Some(r.span().start), "a `replaces` entry may not be empty"),
                );
            }
        }
        self.catalog.tools.push(ToolEntry {
            name,
            usage: tool.usage,
            replaces: tool.replaces.into_iter().map(|r| r.into_inner()).collect(),
            module,
        });
    }
}
