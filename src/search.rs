//! "Which mesh tool replaces this shell command?": the one answer `mesh-guard search` prints
//! and the MCP tool `mesh_search` returns. The command is decided first, exactly as the hook
//! would (the same disk, the same catalog), and its tools are the refusal's own
//! (`instead::for_refusal`): the same ranking, the same fills.

use crate::catalog::{Catalog, LazyCatalog};
use crate::decide::Guard;
use crate::instead::{self, Known, Suggestion};
use crate::rules::Rules;
use crate::world::World;
use serde_json::{Value, json};

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The tools that replace the command, best first.
    Found(Vec<Suggestion>),
    /// The guard refuses the command and no tool replaces it: one must be created for `shape`.
    Create { shape: String },
    /// The guard lets the command through and no tool replaces it: nothing needs replacing.
    Nothing,
}

/// The search's answer for `source` (a shell command), decided in `world` (what the disk
/// says), or why there is none (not shell words).
pub fn search(
    catalog: &Catalog,
    rules: &Rules,
    world: &World,
    source: &str,
) -> Result<Answer, crate::error::InputError> {
    let lazy = LazyCatalog::ready(catalog.clone());
    let guard = Guard {
        rules,
        catalog: &lazy,
        world,
    };
    // A refusal only reported (decision 0060) wants its tool all the same.
    let decision = guard.decide(source);
    let (found, refused) = match decision.refusal() {
        Some(refusal) if instead::is_replaceable(refusal) => (
            instead::for_refusal(catalog, refusal, usize::MAX),
            Some(refusal.shape.clone()),
        ),
        refusal => match shell_words::split(source) {
            // Refused for another reason (self-protection, the override): still not a
            // command to run, so a tool is wanted for what it does; it names no mesh object
            // the refusal resolved, so nothing is filled.
            Ok(words) => {
                let refused = refusal
                    .is_some()
                    .then(|| words.first().cloned().unwrap_or_default());
                (
                    instead::rank(catalog, &words, &Known::default(), usize::MAX),
                    refused,
                )
            }
            Err(_) => return Err(crate::error::InputError::NotShellWords),
        },
    };
    Ok(match refused {
        _ if !found.is_empty() => Answer::Found(found),
        Some(shape) if !shape.is_empty() => Answer::Create { shape },
        Some(_) => Answer::Create {
            shape: source.to_string(),
        },
        None => Answer::Nothing,
    })
}

impl Answer {
    /// `"found"`, `"create"` or `"nothing"`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Answer::Found(_) => "found",
            Answer::Create { .. } => "create",
            Answer::Nothing => "nothing",
        }
    }

    /// One sentence for a reader (an agent or an operator) when no tool was found.
    pub fn summary(&self, source: &str) -> String {
        match self {
            Answer::Found(tools) => match tools.first() {
                Some(best) => format!("Use `{}` instead of `{source}`.", best.usage),
                None => String::new(),
            },
            Answer::Create { shape } => format!(
                "No mesh tool replaces `{source}`: one must be created for `{shape}`. Tell the operator that the mesh needs a tool for `{shape}`, rather than working round it."
            ),
            Answer::Nothing => format!(
                "Nothing needs replacing: mesh-guard lets `{source}` through, so run it as it is."
            ),
        }
    }

    /// The answer as one JSON object (`search --json`, the MCP tool's structured content).
    pub fn to_json(&self, source: &str) -> Value {
        let tools: Vec<Value> = match self {
            Answer::Found(tools) => tools
                .iter()
                .map(|s| {
                    json!({
                        "tool": s.tool, "usage": s.usage, "replaces": s.matched,
                        "module": s.module,
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        let shape = match self {
            Answer::Create { shape } => Value::String(shape.clone()),
            _ => Value::Null,
        };
        json!({
            "command": source,
            "outcome": self.outcome(),
            "tools": tools,
            "shape": shape,
            "message": self.summary(source),
        })
    }

    /// The answer as lines of text: one per tool, or the summary.
    pub fn to_text(&self, source: &str) -> String {
        match self {
            Answer::Found(tools) => tools
                .iter()
                .map(|s| {
                    let owner = s
                        .module
                        .as_deref()
                        .map(|m| format!("tool of module {m}"))
                        .unwrap_or_else(|| "seat verb".into());
                    format!(
                        "{}\t{}\t({owner}; replaces `{}`)\n",
                        s.usage, s.tool, s.matched
                    )
                })
                .collect(),
            _ => format!("{}\n", self.summary(source)),
        }
    }
}
