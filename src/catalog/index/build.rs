//! Building the in-memory index from the parsed catalog: every name checked once, duplicates
//! and dangling references reported with their file and line.

use super::{Catalog, Index, ModuleEntry, Repr, ToolEntry, normalize_host, unit_key};
use crate::catalog::{CatalogError, CatalogFile, Cidr, Source};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// Validates the parsed files together and builds the index.
pub(crate) fn build(
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
                    Err(e) => b
                        .errors
                        .push(source.error(Some(n.span().start), e.to_string())),
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
        if let Some(m) = &file.mode {
            single("mode", m.span().start, &mut b);
            crate::catalog::mode::table(
                source,
                m.get_ref(),
                &mut b.catalog.ranges.modes,
                &mut b.errors,
            );
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
            if let Some(pattern) = &machine.pattern {
                match super::pattern::compile(pattern.get_ref()) {
                    Ok(_) => b
                        .catalog
                        .ranges
                        .patterns
                        .push(pattern.get_ref().clone(), b.catalog.machines[index].clone()),
                    Err(e) => b.errors.push(source.error(
                        Some(pattern.span().start),
                        format!(
                            "`{}` is not a valid pattern: {}",
                            pattern.get_ref(),
                            e.to_string().lines().last().unwrap_or("invalid").trim()
                        ),
                    )),
                }
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
    // A module may name its machines by alias or in another case: it runs on the machine
    // whose name the refusal gives, so the entry keeps that name.
    let index = &mut b.catalog;
    for module in &mut index.modules {
        for machine in &mut module.machines {
            if let Some(&i) = index.machine_by_name.get(&normalize_host(machine)) {
                machine.clone_from(&index.machines[i]);
            }
        }
    }
    index.ranges.modes.keep_unset(&index.modules);
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
pub(crate) fn say_first_definitions(
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

pub(crate) struct Builder {
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

    fn module(&mut self, source: &Source, module: crate::catalog::Module) {
        let index = self.catalog.modules.len();
        let name = module.name.get_ref().clone();
        if let Some(mode) = &module.mode {
            match crate::catalog::mode::value(source, mode) {
                Ok(mode) => self.catalog.ranges.modes.modules.push((name.clone(), mode)),
                Err(e) => self.errors.push(e),
            }
        }
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

    fn tool(&mut self, source: &Source, tool: crate::catalog::Tool, module: Option<String>) {
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
