//! The mesh tools that replace a refused command: `replaces` shapes matched against the
//! command's forms (`forms`), ranked as the contract says, usages filled (`fill`) from
//! what the command determines (`known`).

mod fill;
mod forms;
mod known;
mod placeholder;

pub use fill::Values;
pub use known::Known;
pub use placeholder::Placeholder;

use crate::argv::base_name;
use crate::catalog::{Catalog, ToolEntry};
use crate::decide::{Refusal, target::machine_in};
use crate::rule::Rule;

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
    /// The command fills every placeholder of the usage: a ready invocation beats one
    /// the agent must complete.
    filled: bool,
    words: usize,
    literals: usize,
    module_tool: bool,
    /// Earlier in the catalog is better, so this counts down.
    order: std::cmp::Reverse<usize>,
}

/// The tools for a refusal, best first (up to `limit`), as every surface names them: the
/// hook's refusal, `check`, `search` and MCP `mesh_search`. Only a refusal of what the mesh
/// has tools for (its machines, daemons, containers and units, or a target that may be one
/// of them) has any.
pub fn for_refusal(catalog: &Catalog, refusal: &Refusal, limit: usize) -> Vec<Suggestion> {
    if is_replaceable(refusal) {
        rank_refusal(catalog, refusal, limit)
    } else {
        Vec::new()
    }
}

/// Whether a mesh tool may replace what was refused.
pub fn is_replaceable(refusal: &Refusal) -> bool {
    refusal.unknown.is_some()
        || matches!(
            refusal.rule,
            Rule::RemoteAccess | Rule::RemoteDaemon | Rule::MeshContainer | Rule::MeshUnit
        )
}

/// The best tools (up to `limit`) for a refusal, best first.
fn rank_refusal(catalog: &Catalog, refusal: &Refusal, limit: usize) -> Vec<Suggestion> {
    let known = Known::from_command(catalog, refusal);
    let forms = forms::forms(
        refusal,
        known.get(&Placeholder::Machine).map(String::as_str),
    );
    let mut ranked = rank_forms(catalog, &forms, &known, usize::MAX);
    // Through a jump host to elsewhere: a tool that runs on a mesh machine replaces it
    // only where that machine is known (`ssh -J atlas git@forge`), never the jump host.
    if refusal.hop {
        ranked.retain(|s| !s.usage.contains("<machine>"));
    }
    ranked.truncate(limit);
    ranked
}

/// A row of the "instead of" table: a `replaces` shape and the tool for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub instead_of: String,
    pub tool: String,
    /// Filled with what the tool alone determines (`Known::of_tool`), as a refusal fills it.
    pub usage: String,
}

/// The "instead of" table as Markdown, the form an agent reads (`instead-of`, the
/// session-start context, an agent's instructions file).
pub fn markdown(catalog: &Catalog) -> String {
    let mut out = String::from("| instead of | use | tool |\n|---|---|---|\n");
    for r in table(catalog) {
        out.push_str(&format!(
            "| `{}` | `{}` | {} |\n",
            r.instead_of.replace('|', "\\|"),
            r.usage.replace('|', "\\|"),
            r.tool
        ));
    }
    out
}

/// The "instead of" table: every `replaces` shape, in catalog order (module tools first,
/// the order ranking breaks ties in).
pub fn table(catalog: &Catalog) -> Vec<Row> {
    let mut rows = Vec::new();
    for tool in catalog.tools() {
        let known = Known::of_tool(catalog, tool);
        let usage = fill::fill_known(&tool.usage, &|p| known.value(p, tool));
        rows.extend(tool.replaces.iter().map(|shape| Row {
            instead_of: shape.clone(),
            tool: tool.name.clone(),
            usage: usage.clone(),
        }));
    }
    rows
}

/// The best tools (up to `limit`) for a command's words, best first.
pub fn rank(catalog: &Catalog, words: &[String], known: &Known, limit: usize) -> Vec<Suggestion> {
    rank_forms(catalog, &[words.to_vec()], known, limit)
}

fn rank_forms(
    catalog: &Catalog,
    forms: &[Vec<String>],
    known: &Known,
    limit: usize,
) -> Vec<Suggestion> {
    let mut best: Vec<(Score, Suggestion)> = Vec::new();
    // Only the tools the command's words could match, not the whole catalog's.
    let keys = forms
        .iter()
        .flatten()
        .flat_map(|w| [w.as_str(), base_name(w)]);
    for (order, tool) in catalog.tools_named_by(keys) {
        if !known.is_for(catalog, &tool) {
            continue;
        }
        let mut top: Option<(Score, Suggestion)> = None;
        for entry in &tool.replaces {
            for form in forms {
                if let Some((mut score, bindings)) =
                    match_entry(catalog, entry, form, &tool, order, known)
                {
                    // The machine the refusal reaches is the one to fill, not the first
                    // machine word (`ssh -J bastion render`: the jump comes first); the
                    // command it would run is the whole one the refusal carries.
                    let values = |p: &Placeholder| {
                        let reached = matches!(p, Placeholder::Machine | Placeholder::Command)
                            .then(|| known.get(p).cloned())
                            .flatten();
                        reached.or_else(|| {
                            bindings
                                .iter()
                                .find(|(k, _)| k == p)
                                .map(|(_, v)| v.clone())
                                .or_else(|| known.value(p, &tool))
                        })
                    };
                    let usage = fill::fill(&tool.usage, &values);
                    score.filled = !has_open_placeholder(&usage);
                    if top.as_ref().is_some_and(|(s, _)| score <= *s) {
                        continue;
                    }
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

fn match_entry(
    catalog: &Catalog,
    entry: &str,
    words: &[String],
    tool: &ToolEntry,
    order: usize,
    known: &Known,
) -> Option<(Score, Vec<(Placeholder, String)>)> {
    let mut shape = entry.split_whitespace();
    let program = shape.next()?;
    if base_name(words.first()?) != program {
        return None;
    }
    let mut bindings: Vec<(Placeholder, String)> = Vec::new();
    let mut rest = words[1..].iter();
    let mut literals = 1;
    let mut count = 1;
    for want in shape {
        count += 1;
        let placeholder = Placeholder::in_word(want);
        if placeholder.is_none() {
            literals += 1;
        }
        // `<command>` is the rest of the command, however many words it has.
        if placeholder == Some(Placeholder::Command) {
            let words: Vec<String> = rest.by_ref().cloned().collect();
            if words.is_empty() {
                return None;
            }
            if !bindings.iter().any(|(k, _)| *k == Placeholder::Command) {
                let line = crate::shell::quote::join(&words, &[]);
                bindings.push((Placeholder::Command, line));
            }
            continue;
        }
        let found = rest.by_ref().find_map(|word| match &placeholder {
            None => (word == want).then_some(None),
            // A target that cannot be known may be any mesh object: it matches, unbound.
            Some(kind) if known.any_target && word.contains(crate::shell::UNKNOWN) => {
                kind.is_object().then_some(None)
            }
            // What the refusal knows an object to be is what the shape's word must name, and
            // a jump host is never the machine: `ssh -J bastion render` runs on `render`.
            Some(kind) => placeholder_value(catalog, kind, word)
                .filter(|v| !kind.is_object() || known.value(kind, tool).is_none_or(|k| k == *v))
                .filter(|v| *kind != Placeholder::Machine || known.hop.as_ref() != Some(v))
                .map(|v| Some((kind.clone(), v))),
        })?;
        if let Some((kind, value)) = found
            && !bindings.iter().any(|(k, _)| *k == kind)
        {
            bindings.push((kind, value));
        }
    }
    let score = Score {
        filled: false,
        words: count,
        literals,
        module_tool: tool.module.is_some(),
        order: std::cmp::Reverse(order),
    };
    Some((score, bindings))
}

/// The value a word gives a shape's placeholder, as shell text; `None`: it does not match.
fn placeholder_value(catalog: &Catalog, kind: &Placeholder, word: &str) -> Option<String> {
    match kind {
        // `-o ProxyJump=atlas`, `-J a,atlas`: the value, or one of its hosts, names it.
        Placeholder::Machine => machine_in(catalog, word).or_else(|| {
            let value = word.split_once('=').map_or(word, |(_, v)| v);
            value.split(',').find_map(|hop| machine_in(catalog, hop))
        }),
        Placeholder::Module => catalog.module(word).map(|m| m.name().to_string()),
        Placeholder::Container => {
            let name = word.split(':').next().unwrap_or(word);
            catalog.container(name).map(|c| c.name().to_string())
        }
        Placeholder::Unit => catalog.unit(word).map(|u| u.name().to_string()),
        _ => Some(crate::shell::quote::shown(word, &[], false)),
    }
}

/// A `<name>` left in a filled usage.
fn has_open_placeholder(usage: &str) -> bool {
    usage.split('<').skip(1).any(|rest| {
        rest.split_once('>').is_some_and(|(name, _)| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        })
    })
}
