//! The questions a catalog answers, asked of either form: the in-memory index (a catalog
//! just parsed) or the compiled cache (read a record at a time). `Catalog` builds every
//! answer on these, so a new form of the catalog is one more implementation.

use super::{Index, ModuleEntry, Ranges, ToolEntry};
use crate::catalog::cache::{Table, View};

pub(crate) trait Lookup {
    /// What both forms keep in memory: domains, networks, the forge account, the syslog.
    fn ranges(&self) -> &Ranges;
    /// The machine a normalised host names.
    fn machine_named(&self, key: &str) -> Option<String>;
    /// The module a container (`Table::Containers`) or a unit (`Table::Units`) belongs to.
    fn module_of(&self, table: Table, key: &str) -> Option<String>;
    fn module_entry(&self, name: &str) -> Option<ModuleEntry>;
    /// Tools in catalog order.
    fn tools(&self) -> &[ToolEntry];
    /// The tools filed under a word of their `replaces` entries.
    fn tool_ids(&self, word: &str) -> Vec<u32>;
    fn tool(&self, id: u32) -> Option<ToolEntry>;
    fn machine_count(&self) -> usize;
}

impl Lookup for Index {
    fn ranges(&self) -> &Ranges {
        &self.ranges
    }

    fn machine_named(&self, key: &str) -> Option<String> {
        self.machine_by_name
            .get(key)
            .map(|&i| self.machines[i].clone())
    }

    fn module_of(&self, table: Table, key: &str) -> Option<String> {
        let map = if table == Table::Containers {
            &self.module_by_container
        } else {
            &self.module_by_unit
        };
        map.get(key).map(|&m| self.modules[m].name.clone())
    }

    fn module_entry(&self, name: &str) -> Option<ModuleEntry> {
        self.module_by_name
            .get(name)
            .map(|&i| self.modules[i].clone())
    }

    fn tools(&self) -> &[ToolEntry] {
        &self.tools
    }

    fn tool_ids(&self, word: &str) -> Vec<u32> {
        self.tool_words.get(word).cloned().unwrap_or_default()
    }

    fn tool(&self, id: u32) -> Option<ToolEntry> {
        self.tools.get(id as usize).cloned()
    }

    fn machine_count(&self) -> usize {
        self.machines.len()
    }
}

impl Lookup for View {
    fn ranges(&self) -> &Ranges {
        View::ranges(self)
    }

    fn machine_named(&self, key: &str) -> Option<String> {
        self.string(Table::Machines, key)
    }

    fn module_of(&self, table: Table, key: &str) -> Option<String> {
        self.string(table, key)
    }

    fn module_entry(&self, name: &str) -> Option<ModuleEntry> {
        self.module(name)
    }

    fn tools(&self) -> &[ToolEntry] {
        View::tools(self)
    }

    fn tool_ids(&self, word: &str) -> Vec<u32> {
        View::tool_ids(self, word)
    }

    fn tool(&self, id: u32) -> Option<ToolEntry> {
        View::tool(self, id)
    }

    fn machine_count(&self) -> usize {
        View::machine_count(self)
    }
}
