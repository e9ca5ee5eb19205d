//! YAML anchors in a compose file, as far as a service's `container_name` can come through
//! them: a mapping anchored with `&name` (an `x-` block, a service, any mapping) gives its own
//! `container_name` and its `<<` merges; a scalar anchored with `&name` gives its value.
//! What cannot be told for sure (an anchor named twice, one in a list, a cycle, a merge of
//! one that is not here) is unknown: never a wrong known name.

use super::Value;
use std::collections::BTreeMap;

/// How deep merges of merges are followed before the name is unknown.
const MAX_DEPTH: usize = 8;

/// A reference to a container name: a value, or an alias of a scalar anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NameRef {
    Value(Value),
    Alias(String),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Mapping {
    container_name: Option<NameRef>,
    merges: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Anchor {
    Mapping(Mapping),
    Scalar(Value),
    /// Named twice, or on something not read here.
    Unknown,
}

#[derive(Debug, Default)]
pub(super) struct Anchors(BTreeMap<String, Anchor>);

impl Anchors {
    /// Every anchor in `text`, read line by line at any depth. Block scalars (`key: |`) are
    /// skipped whole: their text is not YAML.
    pub(super) fn read(text: &str) -> Anchors {
        let mut anchors: BTreeMap<String, Anchor> = BTreeMap::new();
        // Open mapping anchors: name, the anchored key's indent, its children's indent.
        let mut open: Vec<(String, usize, Option<usize>)> = Vec::new();
        let mut block_scalar: Option<usize> = None;
        for line in text.lines() {
            let body = line.trim_start_matches(' ');
            let indent = line.len() - body.len();
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            if block_scalar.is_some_and(|at| indent > at) {
                continue;
            }
            block_scalar = None;
            while open.last().is_some_and(|(_, at, _)| *at >= indent) {
                open.pop();
            }
            if let Some((_, _, children)) = open.last_mut() {
                children.get_or_insert(indent);
            }
            let Some((key, value)) = key_value(body) else {
                // An anchor on a list item or a flow value: not read, so not trusted.
                if let Some(name) = anchor_name(body.trim_start_matches("- ")) {
                    anchors.insert(name.to_string(), Anchor::Unknown);
                }
                continue;
            };
            if value.starts_with(['|', '>']) {
                block_scalar = Some(indent);
            }
            // A direct child of the innermost open mapping anchor.
            if let Some((name, _, Some(children))) = open.last()
                && *children == indent
                && let Some(Anchor::Mapping(mapping)) = anchors.get_mut(name)
            {
                match key {
                    "container_name" => mapping.container_name = Some(name_ref(value)),
                    "<<" => mapping.merges.extend(merges(value).unwrap_or_default()),
                    _ => {}
                }
            }
            let Some(name) = anchor_name(value) else {
                continue;
            };
            let rest = value[1 + name.len()..].trim();
            let anchor = if rest.is_empty() {
                open.push((name.to_string(), indent, None));
                Anchor::Mapping(Mapping::default())
            } else {
                match super::compose::scalar(rest) {
                    Ok(value) => Anchor::Scalar(value),
                    Err(_) => Anchor::Unknown,
                }
            };
            let redefined = anchors.insert(name.to_string(), anchor).is_some();
            if redefined {
                anchors.insert(name.to_string(), Anchor::Unknown);
            }
        }
        Anchors(anchors)
    }

    /// The container name a reference comes to.
    pub(super) fn name(&self, reference: &NameRef) -> Value {
        match reference {
            NameRef::Value(value) => value.clone(),
            NameRef::Alias(alias) => match self.0.get(alias) {
                Some(Anchor::Scalar(value)) => value.clone(),
                _ => Value::Unknown,
            },
        }
    }

    /// The container name the merged mappings give, the first in the list first (YAML's
    /// merge: earlier keys win); `None` when none gives one.
    pub(super) fn merged(&self, aliases: &[String]) -> Option<Value> {
        self.merged_within(aliases, 0)
    }

    fn merged_within(&self, aliases: &[String], depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return Some(Value::Unknown);
        }
        for alias in aliases {
            let Some(Anchor::Mapping(mapping)) = self.0.get(alias) else {
                return Some(Value::Unknown);
            };
            if let Some(reference) = &mapping.container_name {
                return Some(self.name(reference));
            }
            if let Some(found) = self.merged_within(&mapping.merges, depth + 1) {
                return Some(found);
            }
        }
        None
    }
}

/// `key: value` of a block mapping line (the comment off), or `None`.
fn key_value(body: &str) -> Option<(&str, &str)> {
    let colon = body
        .char_indices()
        .find(|&(i, c)| c == ':' && body[i + 1..].chars().next().is_none_or(|n| n == ' '))
        .map(|(i, _)| i)?;
    let key = body[..colon].trim_matches(['"', '\'']);
    let value = body[colon + 1..].trim();
    let value = match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None if value.starts_with('#') => "",
        None => value,
    };
    Some((key, value))
}

/// The name of the anchor `value` starts with (`&name …`).
fn anchor_name(value: &str) -> Option<&str> {
    let name = value.strip_prefix('&')?;
    let end = name.find([' ', '\t']).unwrap_or(name.len());
    (end > 0).then(|| &name[..end])
}

/// A `container_name` value: an alias (`*name`) or a scalar.
pub(super) fn name_ref(value: &str) -> NameRef {
    match value.strip_prefix('*') {
        Some(alias) => NameRef::Alias(alias.trim().to_string()),
        None => NameRef::Value(super::compose::scalar(value).unwrap_or(Value::Unknown)),
    }
}

/// The aliases a merge key names: `*a` or `[*a, *b]`; `None` for anything else.
pub(super) fn merges(value: &str) -> Option<Vec<String>> {
    let list = match value.strip_prefix('[') {
        Some(inner) => inner.strip_suffix(']')?,
        None => value,
    };
    list.split(',')
        .map(|item| {
            item.trim()
                .strip_prefix('*')
                .filter(|a| !a.is_empty() && !a.contains(' '))
                .map(String::from)
        })
        .collect()
}
