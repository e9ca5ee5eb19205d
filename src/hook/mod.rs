//! Agents' hook wire formats: the event each agent CLI sends before a tool runs, and the
//! refusal it understands. The only module that knows them (docs/agents/ has the sources).

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

/// Reads one event. Anything not of the expected shape is an error: the caller refuses.
pub fn parse(choice: AgentChoice, input: &[u8]) -> Result<Event, String> {
    let text = std::str::from_utf8(input).map_err(|_| "the hook input is not UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Err("the hook input is empty".into());
    }
    let json: Value =
        serde_json::from_str(text).map_err(|_| "the hook input is not valid JSON".to_string())?;
    if !json.is_object() {
        return Err("the hook input is not a JSON object".into());
    }
    let agent = match choice {
        AgentChoice::Auto => {
            detect(&json).ok_or("the hook input is not an event of any agent mesh-guard knows")?
        }
        AgentChoice::Claude => Agent::Claude,
        AgentChoice::Codex => Agent::Codex,
        AgentChoice::Gemini => Agent::Gemini,
        AgentChoice::Copilot if json.get("toolName").is_some() => Agent::Copilot,
        AgentChoice::Copilot => Agent::CopilotClaudeStyle,
        AgentChoice::Cursor => Agent::Cursor,
    };
    let field = |name: &str| {
        json.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let action = match agent {
        Agent::Claude | Agent::Codex | Agent::CopilotClaudeStyle => claude_style(&json)?,
        Agent::Gemini => gemini(&json)?,
        Agent::Copilot => copilot(&json)?,
        Agent::Cursor => cursor(&json)?,
    };
    let session_id = match agent {
        Agent::Copilot => field("sessionId"),
        Agent::Cursor => json
            .get("conversation_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| field("session_id")),
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

/// Which agent sent an event, from its shape (docs/agents/hook-spec.md).
fn detect(json: &Value) -> Option<Agent> {
    let event = json.get("hook_event_name").and_then(Value::as_str);
    let has = |k: &str| json.get(k).is_some();
    match event {
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
        None if has("cursor_version") || has("conversation_id") => Some(Agent::Cursor),
        None if has("toolName") => Some(Agent::Copilot),
        _ => None,
    }
}

fn command_of(input: Option<&Value>, tool: &str) -> Result<Action, String> {
    match input.and_then(|i| i.get("command")) {
        Some(Value::String(command)) => Ok(Action::Shell {
            command: command.clone(),
        }),
        Some(_) => Err(format!("the {tool} event's command is not a string")),
        None => Err(format!("the {tool} event has no command")),
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

fn claude_style(json: &Value) -> Result<Action, String> {
    let tool = json
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("the event has no tool_name")?;
    let input = json.get("tool_input");
    match tool {
        "Bash" | "shell" | "local_shell" | "exec_command" => command_of(input, tool),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch" | "create" | "edit" => {
            Ok(write_of(input))
        }
        _ => Ok(Action::Other),
    }
}

fn gemini(json: &Value) -> Result<Action, String> {
    let tool = json
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("the event has no tool_name")?;
    let input = json.get("tool_input");
    match tool {
        "run_shell_command" => command_of(input, tool),
        "write_file" | "replace" => Ok(write_of(input)),
        _ => Ok(Action::Other),
    }
}

fn copilot(json: &Value) -> Result<Action, String> {
    let tool = json
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or("the event has no toolName")?;
    // toolArgs is a JSON object, or that object serialized as a string.
    let args = match json.get("toolArgs") {
        Some(Value::String(s)) => Some(
            serde_json::from_str::<Value>(s)
                .map_err(|_| "the event's toolArgs is not JSON".to_string())?,
        ),
        other => other.cloned(),
    };
    match tool {
        "bash" | "powershell" | "shell" => command_of(args.as_ref(), tool),
        "create" | "edit" | "write" | "apply_patch" => Ok(write_of(args.as_ref())),
        _ => Ok(Action::Other),
    }
}

fn cursor(json: &Value) -> Result<Action, String> {
    match json.get("hook_event_name").and_then(Value::as_str) {
        Some("beforeShellExecution") => match json.get("command") {
            Some(Value::String(c)) => Ok(Action::Shell { command: c.clone() }),
            _ => Err("the beforeShellExecution event has no command".into()),
        },
        Some("preToolUse") => match json.get("tool_name").and_then(Value::as_str) {
            Some("Shell") => command_of(json.get("tool_input"), "Shell"),
            Some("Write" | "Edit") => Ok(write_of(json.get("tool_input"))),
            _ => Ok(Action::Other),
        },
        _ => Ok(Action::Other),
    }
}

/// The refusal as the agent reads it on stdout (stderr carries the message too; the exit
/// code is 2 for every agent: docs/agents/).
pub fn deny(agent: Agent, message: &str) -> String {
    let json = match agent {
        Agent::Claude | Agent::Codex | Agent::CopilotClaudeStyle => serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": message,
            }
        }),
        Agent::Gemini => serde_json::json!({ "decision": "deny", "reason": message }),
        Agent::Copilot => {
            serde_json::json!({ "permissionDecision": "deny", "permissionDecisionReason": message })
        }
        Agent::Cursor => {
            serde_json::json!({ "permission": "deny", "user_message": message, "agent_message": message })
        }
    };
    json.to_string()
}
