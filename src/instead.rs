//! The mesh tools that replace a refused command: `replaces` shapes matched against the
//! command's words, ranked as the contract says, usages filled from what the command named.

use crate::argv::base_name;
use crate::catalog::{Catalog, MeshObject, ToolEntry};
use crate::decide::{Refusal, target::machine_in};
use std::collections::HashMap;

/// One tool to use instead, its usage filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub tool: String,
    pub usage: String,
    /// The `replaces` entry that matched, and why, for `search`.
    pub matched: String,
    pub module: Option<String>,
}

/// How well an entry matched: compared field by field, larger is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Score {
    words: usize,
    literals: usize,
    module_tool: bool,
    /// Earlier in the catalog is better, so this counts down.
    order: std::cmp::Reverse<usize>,
}

/// The best tools (up to `limit`) for a command's words, best first.
pub fn rank(catalog: &Catalog, words: &[String], known: &Known, limit: usize) -> Vec<Suggestion> {
    let mut best: Vec<(Score, Suggestion)> = Vec::new();
    // Only the tools the command's words could match, not the whole catalog's.
    let keys = words.iter().flat_map(|w| [w.as_str(), base_name(w)]);
    for (order, tool) in catalog.tools_named_by(keys) {
        let mut top: Option<(Score, Suggestion)> = None;
        for entry in &tool.replaces {
            for candidate in command_forms(words) {
                if let Some((score, bindings)) =
                    match_entry(catalog, entry, candidate, &tool, order)
                    && top.as_ref().is_none_or(|(s, _)| score > *s)
                {
                    let usage = fill(&tool.usage, &bindings, known);
                    top = Some((
                        score,
                        Suggestion {
                            tool: tool.name.clone(),
                            usage,
                            matched: entry.clone(),
                            module: tool.module.clone(),
                        },
                    ));
                }
            }
        }
        best.extend(top);
    }
    best.sort_by_key(|b| std::cmp::Reverse(b.0));
    best.into_iter().take(limit).map(|(_, s)| s).collect()
}

/// The command, and every command it carries for another machine to run (ssh's remote
/// command): `ssh atlas journalctl -u x` is also `journalctl -u x`.
fn command_forms(words: &[String]) -> impl Iterator<Item = &[String]> {
    let remote = matches!(
        words.first().map(|w| base_name(w)),
        Some("ssh" | "autossh" | "mosh" | "sshpass")
    );
    let extra = if remote { 1..words.len() } else { 0..0 };
    std::iter::once(words).chain(extra.map(move |i| &words[i..]))
}

fn match_entry(
    catalog: &Catalog,
    entry: &str,
    words: &[String],
    tool: &ToolEntry,
    order: usize,
) -> Option<(Score, HashMap<String, String>)> {
    let mut shape = entry.split_whitespace();
    let program = shape.next()?;
    if base_name(words.first()?) != program {
        return None;
    }
    let mut bindings = HashMap::new();
    let mut rest = words[1..].iter();
    let mut literals = 1;
    let mut count = 1;
    for want in shape {
        count += 1;
        let placeholder = want.strip_prefix('<').and_then(|w| w.strip_suffix('>'));
        if placeholder.is_none() {
            literals += 1;
        }
        let found = rest.by_ref().find_map(|word| match placeholder {
            None => (word == want).then_some(None),
            Some(kind) => {
                placeholder_value(catalog, kind, word).map(|v| Some((kind.to_string(), v)))
            }
        })?;
        if let Some((kind, value)) = found {
            bindings.entry(kind).or_insert(value);
        }
    }
    let score = Score {
        words: count,
        literals,
        module_tool: tool.module.is_some(),
        order: std::cmp::Reverse(order),
    };
    Some((score, bindings))
}

fn placeholder_value(catalog: &Catalog, kind: &str, word: &str) -> Option<String> {
    match kind {
        // `-o ProxyJump=atlas`, `DOCKER_HOST=ssh://atlas`: the value names the machine.
        // `-o ProxyJump=atlas`, `-J a,atlas`: the value, or one of its hosts, names it.
        "machine" => machine_in(catalog, word).or_else(|| {
            let value = word.split_once('=').map_or(word, |(_, v)| v);
            value.split(',').find_map(|hop| machine_in(catalog, hop))
        }),
        "module" => catalog.module(word).map(|m| m.name().to_string()),
        "container" => {
            let name = word.split(':').next().unwrap_or(word);
            catalog.container(name).map(|c| c.name().to_string())
        }
        "unit" => catalog.unit(word).map(|u| u.name().to_string()),
        _ => Some(word.to_string()),
    }
}

/// What the refusal knows, for placeholders the matched entry did not bind.
#[derive(Debug, Clone, Default)]
pub struct Known(HashMap<String, String>);

impl Known {
    /// What the refusal found, then what the command's other words name (`ssh atlas
    /// journalctl -u mesh-controller` names module `controller` too), and for a remote
    /// command, the command itself.
    pub fn from_command(catalog: &Catalog, refusal: &Refusal) -> Known {
        let mut known = Known::from_refusal(refusal);
        for word in &refusal.command {
            let object = catalog
                .container(word)
                .or_else(|| catalog.unit(word))
                .or_else(|| catalog.module(word));
            match object {
                Some(MeshObject::Container { name, module }) => {
                    known.0.entry("container".into()).or_insert(name);
                    known.0.entry("module".into()).or_insert(module);
                }
                Some(MeshObject::Unit { name, module }) => {
                    known.0.entry("unit".into()).or_insert(name);
                    known.0.entry("module".into()).or_insert(module);
                }
                Some(MeshObject::Module { name }) => {
                    known.0.entry("module".into()).or_insert(name);
                }
                _ => {}
            }
        }
        if let Some(inner) = &refusal.inner {
            known.0.insert("command".into(), inner.clone());
        }
        // A module on a single machine: its containers and units are on that machine.
        if let Some(module) = known.0.get("module").and_then(|m| catalog.module_entry(m))
            && let [only] = module.machines.as_slice()
        {
            known
                .0
                .entry("machine".into())
                .or_insert_with(|| only.clone());
        }
        known
    }

    pub fn from_refusal(refusal: &Refusal) -> Known {
        let mut known = HashMap::new();
        if let Some(machine) = &refusal.machine {
            known.insert("machine".to_string(), machine.clone());
        }
        match &refusal.object {
            Some(MeshObject::Container { name, module }) => {
                known.insert("container".into(), name.clone());
                known.insert("module".into(), module.clone());
            }
            Some(MeshObject::Unit { name, module }) => {
                known.insert("unit".into(), name.clone());
                known.insert("module".into(), module.clone());
            }
            Some(MeshObject::Module { name }) => {
                known.insert("module".into(), name.clone());
            }
            Some(MeshObject::Machine(m)) => {
                known.insert("machine".into(), m.machine.clone());
            }
            None => {}
        }
        Known(known)
    }
}

/// Fills `<placeholders>`; an optional `[…]` part is kept, filled and unbracketed, when all
/// its placeholders are known, and otherwise left as written so the agent sees it.
fn fill(usage: &str, bindings: &HashMap<String, String>, known: &Known) -> String {
    let value = |name: &str| bindings.get(name).or_else(|| known.0.get(name)).cloned();
    let mut out = String::new();
    let mut rest = usage;
    while let Some(open) = rest.find(['[', '<']) {
        out.push_str(&rest[..open]);
        let close_char = if rest[open..].starts_with('[') {
            ']'
        } else {
            '>'
        };
        let Some(len) = rest[open..].find(close_char) else {
            break;
        };
        let part = &rest[open..open + len + 1];
        if close_char == '>' {
            out.push_str(&value(&part[1..part.len() - 1]).unwrap_or_else(|| part.to_string()));
        } else {
            let inner = &part[1..part.len() - 1];
            let filled = fill(inner, bindings, known);
            if filled.contains('<') {
                out.push_str(part)
            } else {
                out.push_str(&filled)
            }
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_parts_are_filled_or_kept() {
        let known = Known(
            [("module".to_string(), "controller".to_string())]
                .into_iter()
                .collect(),
        );
        assert_eq!(
            fill(
                "mesh logs <module> [--machine <machine>]",
                &HashMap::new(),
                &known
            ),
            "mesh logs controller [--machine <machine>]"
        );
        let bound: HashMap<String, String> = [("machine".to_string(), "atlas".to_string())]
            .into_iter()
            .collect();
        assert_eq!(
            fill("mesh logs <module> [--machine <machine>]", &bound, &known),
            "mesh logs controller --machine atlas"
        );
    }
}
