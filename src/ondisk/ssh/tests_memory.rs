//! Files from memory for the parsers' tests.

use crate::ondisk::read::{Files, Read};
use std::collections::BTreeMap;

/// Files from memory; globs match with ssh's wildcards, sorted like glob(3).
#[derive(Default)]
pub struct Memory {
    pub files: BTreeMap<String, String>,
    pub reads: usize,
}

impl Files for Memory {
    fn read(&mut self, path: &str) -> Read {
        self.reads += 1;
        match self.files.get(path) {
            Some(text) if text == "<unreadable>" => Read::Unreadable,
            Some(text) => Read::Text(text.clone()),
            None => Read::Absent,
        }
    }
    fn glob(&mut self, pattern: &str) -> Option<Vec<String>> {
        let found = self.files.keys();
        Some(
            found
                .filter(|p| crate::ondisk::pattern::wildcard(pattern, p))
                .cloned()
                .collect(),
        )
    }
}
