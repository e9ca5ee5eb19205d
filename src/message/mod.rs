//! A refusal → the text an agent receives: the action first, then the facts from the
//! command, then that nothing else is disabled. Under 1,000 characters, no host paths.

use crate::decide::{OVERRIDE_VAR, Refusal};
use crate::rule::Rule;
pub mod setup;
pub mod why;

use crate::instead::Suggestion;
use crate::shell::{UNKNOWN, quote};

/// The contract: a refusal stays *under* 1,000 characters.
pub const MAX_MESSAGE_CHARS: usize = 999;
const MAX_COMMAND_CHARS: usize = 160;
/// Said where the MCP server is installed (a leading space: it follows a sentence).
pub const SEARCH: &str =
    " Before a shell command, ask the MCP tool `mesh_search` which mesh tool replaces it.";
const NOTHING_ELSE: &str = "Nothing else is disabled: other commands and tools still work.";
/// A refusal's first words. Agents' CLIs put their own words before it (Claude Code 2.1.332:
/// `PreToolUse:Bash hook error: `, whatever the answer's form), which read as a broken hook
/// to retry or get round; these say it is the guard's decision before anything else, and the
/// action follows at once (docs/agents/README.md has what each CLI shows the model).
pub const DECISION: &str = "Decided by mesh-guard, not an error: do not retry or work round it.";

/// What the agent has besides the shell, for the message to point at.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints {
    /// The agent has mesh-guard's MCP server, so it can ask `mesh_search` before it runs.
    pub mcp_search: bool,
}

pub fn render(refusal: &Refusal, instead: &[Suggestion]) -> String {
    render_for(refusal, instead, Hints::default())
}

pub fn render_for(refusal: &Refusal, instead: &[Suggestion], hints: Hints) -> String {
    let search = if hints.mcp_search { SEARCH } else { "" };
    let command = shorten(&echo(refusal));
    let text = match refusal.rule {
        Rule::RemoteAccess | Rule::RemoteDaemon | Rule::MeshContainer | Rule::MeshUnit => {
            let lead = match use_instead(instead) {
                Some(tools) => format!("Use the mesh's own tool instead: {tools}."),
                None => format!(
                    "No mesh tool does `{shape}` yet: one must be created. Tell the operator that the mesh needs a tool for `{shape}`, rather than working round this.",
                    shape = refusal.shape
                ),
            };
            let over = if refusal.over.is_empty() {
                String::new()
            } else {
                format!(" {}", over_phrase(refusal))
            };
            // `hyperfine 'ssh atlas uptime'`: why an argument counts as a command.
            let argument = match &refusal.why {
                crate::decide::Why::ArgumentOf(_) => format!(" ({})", why::clause(&refusal.why)),
                _ => String::new(),
            };
            match read_from(refusal) {
                Some((typed, what)) => format!(
                    "{lead} mesh-guard refused `{typed}`: {what} runs `{command}`, which reaches {}{over}{argument}.{search} {NOTHING_ELSE}",
                    refusal.reaches
                ),
                None => format!(
                    "{lead} mesh-guard refused `{command}`: it reaches {}{over}{argument}.{search} {NOTHING_ELSE}",
                    refusal.reaches
                ),
            }
        }
        Rule::Override => format!(
            "Ask the operator: only they can override mesh-guard, by starting the session with a grant they sign in {OVERRIDE_VAR}. mesh-guard refused `{command}`: {}. {NOTHING_ELSE}",
            why::clause(&refusal.why)
        ),
        Rule::SelfProtection => format!(
            "Ask the operator to make this change: mesh-guard refused `{command}`: {}. {NOTHING_ELSE}",
            why::clause(&refusal.why)
        ),
        Rule::Unverifiable => {
            let reaches = if refusal.reaches.is_empty() {
                String::new()
            } else {
                format!(" It names {}.", refusal.reaches)
            };
            // The shape is known though the target is not: name the tool for that case.
            let lead = match (&refusal.unknown, use_instead(instead)) {
                (Some((value, kind)), Some(tools)) => format!(
                    "If `{value}` is a mesh {kind}, use the mesh's own tool instead: {tools}; otherwise write the command with its targets spelled out."
                ),
                _ => "Write the command with its program and targets spelled out, or use the mesh's own tools (`mesh-guard instead-of` lists them).".to_string(),
            };
            let refused = match read_from(refusal) {
                Some((typed, what)) => format!("`{typed}`: {what} runs `{command}`"),
                None => format!("`{command}`"),
            };
            format!(
                "{lead} mesh-guard refused {refused}: {}.{reaches}{search} {NOTHING_ELSE}",
                why::clause(&refusal.why)
            )
        }
        Rule::FailClosed => {
            let what = if command.is_empty() {
                "the proposed command".to_string()
            } else {
                format!("`{command}`")
            };
            match &refusal.why {
                crate::decide::Why::Broken(broken) => format!(
                    "Tell the operator: {} Until the operator fixes it, mesh-guard refuses {what} and every command that runs a program it guards; the agent cannot fix this, so do not work round it. {NOTHING_ELSE}",
                    setup::reason(broken)
                ),
                why => format!(
                    "Tell the operator: mesh-guard could not check {what}: {}; it refuses what it cannot check. {NOTHING_ELSE}",
                    why::clause(why)
                ),
            }
        }
    };
    cap(format!("{DECISION} {text}"))
}

/// "over ssh", "through the container engine on that machine".
pub fn over_phrase(refusal: &Refusal) -> String {
    match refusal.rule {
        Rule::RemoteAccess => format!("over {}", refusal.over),
        Rule::RemoteDaemon => format!("through {} on that machine", refusal.over),
        _ => format!("through {} directly", refusal.over),
    }
}

/// The best tool's usage, then the others': "`a` (or `b`, `c`)".
fn use_instead(instead: &[Suggestion]) -> Option<String> {
    let (best, others) = instead.split_first()?;
    let mut text = format!("`{}`", best.usage);
    if !others.is_empty() {
        let others: Vec<String> = others.iter().map(|s| format!("`{}`", s.usage)).collect();
        text.push_str(&format!(" (or {})", others.join(", ")));
    }
    Some(text)
}

/// The refused command as the agent wrote it: its words shell-quoted, so that it means
/// exactly what ran, or (for source text) on one line.
fn echo(refusal: &Refusal) -> String {
    if refusal.verbatim {
        let text = refusal.command.join(" ").replace(UNKNOWN, "…");
        quote::one_line(&text)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        quote::join(&refusal.command, &refusal.written)
    }
}

/// The task runner's command and the recipe it read, shortened, where the refused command
/// came from one.
fn read_from(refusal: &Refusal) -> Option<(String, String)> {
    let (typed, what) = refusal.read_from.as_ref()?;
    Some((shorten(typed), shorten(what)))
}

fn shorten(command: &str) -> String {
    if command.chars().count() <= MAX_COMMAND_CHARS {
        return command.to_string();
    }
    let cut: String = command.chars().take(MAX_COMMAND_CHARS - 1).collect();
    format!("{cut}…")
}

fn cap(text: String) -> String {
    // No message holds a control character, whatever a value held.
    let text = quote::one_line(&text);
    if text.chars().count() <= MAX_MESSAGE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    format!("{cut}…")
}
