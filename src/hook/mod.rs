//! Agents' hook wire formats: the event each agent CLI sends before a tool runs, and the
//! refusal it understands. The only module that knows them (docs/agents/ has the sources).

mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentChoice {
    Auto,
    Claude,
    Codex,
    Gemini,
    Copilot,
    Cursor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
    /// Copilot CLI's own camelCase event (`toolName`, `toolArgs`).
    Copilot,
    /// Copilot CLI reading a Claude-style `PreToolUse` configuration.
    CopilotClaudeStyle,
    Cursor,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot | Agent::CopilotClaudeStyle => "copilot",
            Agent::Cursor => "cursor",
        }
    }
}

/// What the agent is about to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Shell {
        command: String,
    },
    /// A tool that writes a file: checked for self-protection.
    WriteFile {
        path: String,
        content: String,
    },
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub agent: Agent,
    pub action: Action,
    pub session_id: String,
    pub cwd: String,
    pub tool_use_id: String,
}

/// Why a hook's input is not an event mesh-guard reads: the caller refuses, saying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventError {
    NotUtf8,
    Empty,
    NotJson,
    NotAnObject,
    /// No agent's shape, or not the shape of the agent `--agent` names.
    UnknownAgent(AgentChoice),
    /// The protocol's field naming the tool is missing.
    NoTool(&'static str),
    /// A shell tool's call without a command, or with one that is not a string.
    NoCommand {
        tool: String,
    },
    CommandNotText {
        tool: String,
    },
    /// A Cursor event of a kind mesh-guard does not read.
    NotACursorEvent,
}

impl std::fmt::Display for EventError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventError::NotUtf8 => f.write_str("the hook input is not UTF-8"),
            EventError::Empty => f.write_str("the hook input is empty"),
            EventError::NotJson => f.write_str("the hook input is not valid JSON"),
            EventError::NotAnObject => f.write_str("the hook input is not a JSON object"),
            EventError::UnknownAgent(AgentChoice::Auto) => {
                f.write_str("the hook input is not an event of any agent mesh-guard knows")
            }
            EventError::UnknownAgent(choice) => write!(
                f,
                "the hook input is not an event mesh-guard reads for --agent {}",
                choice.name()
            ),
            EventError::NoTool(field) => write!(f, "the event has no {field}"),
            EventError::NoCommand { tool } => write!(f, "the {tool} event has no command"),
            EventError::CommandNotText { tool } => {
                write!(f, "the {tool} event's command is not a string")
            }
            EventError::NotACursorEvent => {
                f.write_str("the event is not a Cursor event mesh-guard reads")
            }
        }
    }
}

impl std::error::Error for EventError {}

/// Reads one event. Anything not of the expected shape is an error: the caller refuses.
pub fn parse(choice: AgentChoice, input: &[u8]) -> Result<Event, EventError> {
    let text = std::str::from_utf8(input).map_err(|_| EventError::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(EventError::Empty);
    }
    let json: Value = serde_json::from_str(text).map_err(|_| EventError::NotJson)?;
    if !json.is_object() {
        return Err(EventError::NotAnObject);
    }
    let agent = resolve(choice, detect(&json)).ok_or(EventError::UnknownAgent(choice))?;
    let field = |name: &str| {
        json.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let action = match agent {
        Agent::Claude | Agent::CopilotClaudeStyle => tool_call(&json, &claude::TOOLS)?,
        Agent::Codex => tool_call(&json, &codex::TOOLS)?,
        Agent::Gemini => tool_call(&json, &gemini::TOOLS)?,
        Agent::Copilot => tool_call(&json, &copilot::TOOLS)?,
        Agent::Cursor => cursor::action(&json)?,
    };
    let session_id = match agent {
        Agent::Copilot => field(copilot::SESSION_ID),
        Agent::Cursor => cursor::session_id(&json).unwrap_or_else(|| field("session_id")),
        _ => field("session_id"),
    };
    Ok(Event {
        agent,
        action,
        session_id,
        cwd: field("cwd"),
        tool_use_id: field("tool_use_id"),
    })
}

impl AgentChoice {
    /// The protocol to answer in before the event says which agent sent it (unreadable
    /// input, a panic, a timeout): the one asked for, or Claude's, which every agent reads
    /// as a refusal by its exit code 2.
    pub fn fallback(self) -> Agent {
        match self {
            AgentChoice::Gemini => Agent::Gemini,
            AgentChoice::Copilot => Agent::Copilot,
            AgentChoice::Cursor => Agent::Cursor,
            AgentChoice::Codex => Agent::Codex,
            AgentChoice::Claude | AgentChoice::Auto => Agent::Claude,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AgentChoice::Auto => "auto",
            AgentChoice::Claude => "claude",
            AgentChoice::Codex => "codex",
            AgentChoice::Gemini => "gemini",
            AgentChoice::Copilot => "copilot",
            AgentChoice::Cursor => "cursor",
        }
    }
}

/// Which agent sent an event, from its shape (docs/agents/hook-spec.md). First match wins.
fn detect(json: &Value) -> Option<Agent> {
    let event = json.get("hook_event_name").and_then(Value::as_str);
    let has = |k: &str| json.get(k).is_some();
    match event {
        // Copilot's own payload is the only camelCase one (and has no hook_event_name today).
        _ if has("toolName") => Some(Agent::Copilot),
        Some("BeforeTool") => Some(Agent::Gemini),
        Some("beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse") => {
            Some(Agent::Cursor)
        }
        Some("PreToolUse") if has("turn_id") => Some(Agent::Codex),
        Some("PreToolUse")
            if has("timestamp") && !has("tool_use_id") && !has("transcript_path") =>
        {
            Some(Agent::CopilotClaudeStyle)
        }
        Some("PreToolUse") => Some(Agent::Claude),
        _ => None,
    }
}

/// The agent an explicit `--agent` answers: the events of its own protocol, and (for
/// `claude`) those of Copilot CLI and Cursor, which also run the hooks in Claude Code's
/// settings. A Claude-shaped event under `--agent codex|copilot` is that agent's.
/// Anything else is refused: a Gemini event read as Claude's would pass unseen.
fn resolve(choice: AgentChoice, detected: Option<Agent>) -> Option<Agent> {
    use Agent::*;
    match (choice, detected?) {
        (AgentChoice::Auto, agent) => Some(agent),
        (AgentChoice::Claude, agent @ (Claude | Codex | CopilotClaudeStyle | Cursor)) => {
            Some(agent)
        }
        (AgentChoice::Codex, Claude | Codex) => Some(Codex),
        (AgentChoice::Gemini, Gemini) => Some(Gemini),
        (AgentChoice::Copilot, Claude | CopilotClaudeStyle) => Some(CopilotClaudeStyle),
        (AgentChoice::Copilot, Copilot) => Some(Copilot),
        (AgentChoice::Cursor, Cursor) => Some(Cursor),
        _ => None,
    }
}

/// Where a protocol puts the tool's name and arguments, and which tools run a shell
/// command or write a file (the rest pass).
struct Tools {
    name: &'static str,
    input: &'static str,
    shell: &'static [&'static str],
    writers: &'static [&'static str],
}

fn tool_call(json: &Value, tools: &Tools) -> Result<Action, EventError> {
    let tool = json
        .get(tools.name)
        .and_then(Value::as_str)
        .ok_or(EventError::NoTool(tools.name))?;
    // The arguments are an object, or (Copilot) that object serialized as a JSON string.
    let input = match json.get(tools.input) {
        Some(Value::String(s)) => {
            Some(serde_json::from_str::<Value>(s).unwrap_or_else(|_| Value::String(s.clone())))
        }
        other => other.cloned(),
    };
    if tools.shell.contains(&tool) {
        command_of(input.as_ref(), tool)
    } else if tools.writers.contains(&tool) {
        Ok(write_of(input.as_ref()))
    } else {
        Ok(Action::Other)
    }
}

fn command_of(input: Option<&Value>, tool: &str) -> Result<Action, EventError> {
    match input.and_then(|i| i.get("command")) {
        Some(Value::String(command)) => Ok(Action::Shell {
            command: command.clone(),
        }),
        Some(_) => Err(EventError::CommandNotText {
            tool: tool.to_string(),
        }),
        None => Err(EventError::NoCommand {
            tool: tool.to_string(),
        }),
    }
}

fn write_of(input: Option<&Value>) -> Action {
    let text = |k: &str| {
        input
            .and_then(|i| i.get(k))
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            })
            .unwrap_or_default()
    };
    let path = ["file_path", "notebook_path", "path", "absolute_path"]
        .iter()
        .map(|k| text(k))
        .find(|p| !p.is_empty())
        .unwrap_or_default();
    // Every string the tool would write: new content, edits, a patch.
    let content = input.map(|i| i.to_string()).unwrap_or_default();
    Action::WriteFile { path, content }
}

/// The SessionStart answer: the context an agent is given when a session starts, in that
/// agent's own form.
pub fn session_start(agent: Agent, context: &str) -> String {
    match agent {
        Agent::Claude => claude::session_start(context),
        Agent::Codex => codex::session_start(context),
        Agent::Gemini => gemini::session_start(context),
        Agent::Copilot | Agent::CopilotClaudeStyle => copilot::session_start(context),
        Agent::Cursor => cursor::session_start(context),
    }
}

/// The refusal as the agent reads it on stdout (stderr carries the message too; the exit
/// code is 2 for every agent: docs/agents/).
pub fn deny(agent: Agent, message: &str) -> String {
    let json = match agent {
        Agent::Claude | Agent::CopilotClaudeStyle => claude::deny(message),
        Agent::Codex => codex::deny(message),
        Agent::Gemini => gemini::deny(message),
        Agent::Copilot => copilot::deny(message),
        Agent::Cursor => cursor::deny(message),
    };
    json.to_string()
}
