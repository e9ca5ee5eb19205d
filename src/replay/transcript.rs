//! The shell commands in one line of an agent's session transcript, whichever agent wrote it:
//! each format is recognised by its shape, line by line (pure: no I/O).
//!
//! Learned from what the pinned CLIs write (tests/fixtures/replay):
//! - Claude Code, `~/.claude/projects/<project>/<session>.jsonl`: `{"type":"assistant",
//!   "sessionId", "cwd", "timestamp", "message":{"content":[{"type":"tool_use","name":"Bash",
//!   "input":{"command"}}]}}`.
//! - Codex, `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: `{"type":"session_meta",
//!   "payload":{"id","cwd"}}`, then `{"type":"response_item","timestamp","payload":{"type":
//!   "function_call","name":"exec_command","arguments":"{\"cmd\":…}"}}` (older: `shell` with a
//!   `command` array, `local_shell_call` with `action.command`).
//! - Gemini CLI, `~/.gemini/tmp/<project>/chats/session-*.jsonl`: a header `{"sessionId",
//!   "projectHash"}`, then messages `{"type":"gemini","timestamp","toolCalls":[{"id","name":
//!   "run_shell_command","args":{"command"}}]}`, a message written again as it grows, and
//!   `{"$set":{"messages":[…]}}` updates.
//! - Copilot CLI, `~/.copilot/session-state/<session>/events.jsonl`: `{"type":"session.start",
//!   "data":{"sessionId","context":{"cwd"}}}`, then `{"type":"tool.execution_start",
//!   "timestamp","data":{"toolCallId","toolName":"bash","arguments":{"command"}}}`.

use crate::hook::Agent;
use serde_json::Value;
use std::collections::VecDeque;

/// One shell command an agent ran (or proposed), with where it was said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub agent: Agent,
    pub session: String,
    /// As the transcript wrote it (RFC 3339), or empty.
    pub time: String,
    pub cwd: String,
    pub command: String,
}

/// Codex's shell tools: the argument holding the command, and whether it is a word list.
const CODEX_SHELL: [(&str, &str); 4] = [
    ("exec_command", "cmd"),
    ("shell", "command"),
    ("shell_command", "command"),
    ("container.exec", "command"),
];
const COPILOT_SHELL: [&str; 3] = ["bash", "powershell", "shell"];
const GEMINI_SHELL: &str = "run_shell_command";
const CLAUDE_SHELL: &str = "Bash";
/// Tool call ids remembered to skip a call written again (Gemini rewrites a message as it
/// grows): the last few suffice, and the memory stays bounded.
const RECENT_IDS: usize = 256;

/// What one file's earlier lines said: the session, its directory, the calls already read.
#[derive(Debug, Default)]
pub struct FileState {
    session: String,
    cwd: String,
    recent: VecDeque<String>,
    /// Some line was of an agent transcript this reads.
    pub recognised: bool,
}

impl FileState {
    /// A call id not seen lately (and now remembered); calls without an id always count.
    fn first_time(&mut self, id: Option<&str>) -> bool {
        let Some(id) = id.filter(|id| !id.is_empty()) else {
            return true;
        };
        if self.recent.iter().any(|seen| seen == id) {
            return false;
        }
        if self.recent.len() == RECENT_IDS {
            self.recent.pop_front();
        }
        self.recent.push_back(id.to_string());
        true
    }
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The shell commands in `line` (one JSON value of a transcript).
pub fn commands(line: &Value, state: &mut FileState) -> Vec<Found> {
    let mut found = Vec::new();
    let kind = text(line, "type");
    if line.get("payload").is_some() {
        codex(line, kind, state, &mut found);
    } else if kind.contains('.') && line.get("data").is_some() {
        copilot(line, kind, state, &mut found);
    } else if line.get("message").is_some() && line.get("sessionId").is_some() {
        claude(line, state, &mut found);
    } else if line.get("projectHash").is_some() || line.get("toolCalls").is_some() {
        gemini_message(line, state, &mut found);
    } else if let Some(messages) = line.pointer("/$set/messages").and_then(Value::as_array) {
        state.recognised = true;
        for message in messages {
            gemini_message(message, state, &mut found);
        }
    } else if line.get("$set").is_some() || (kind == "user" && line.get("content").is_some()) {
        state.recognised |= !state.session.is_empty();
    }
    found
}

fn claude(line: &Value, state: &mut FileState, found: &mut Vec<Found>) {
    state.recognised = true;
    if text(line, "type") != "assistant" {
        return;
    }
    let content = line.pointer("/message/content").and_then(Value::as_array);
    for item in content.into_iter().flatten() {
        if text(item, "type") != "tool_use" || text(item, "name") != CLAUDE_SHELL {
            continue;
        }
        let command = item.pointer("/input/command").and_then(Value::as_str);
        if let Some(command) = command
            && state.first_time(item.get("id").and_then(Value::as_str))
        {
            found.push(Found {
                agent: Agent::Claude,
                session: text(line, "sessionId").to_string(),
                time: text(line, "timestamp").to_string(),
                cwd: text(line, "cwd").to_string(),
                command: command.to_string(),
            });
        }
    }
}

fn codex(line: &Value, kind: &str, state: &mut FileState, found: &mut Vec<Found>) {
    let payload = &line["payload"];
    match kind {
        "session_meta" => {
            state.recognised = true;
            state.session = text(payload, "id").to_string();
            state.cwd = text(payload, "cwd").to_string();
            return;
        }
        "turn_context" => {
            state.recognised = true;
            if let Some(cwd) = payload.get("cwd").and_then(Value::as_str) {
                state.cwd = cwd.to_string();
            }
            return;
        }
        "response_item" => state.recognised = true,
        _ => return,
    }
    let command = match text(payload, "type") {
        "function_call" => {
            let name = text(payload, "name");
            let Some(&(_, key)) = CODEX_SHELL.iter().find(|(tool, _)| *tool == name) else {
                return;
            };
            let arguments: Value =
                serde_json::from_str(text(payload, "arguments")).unwrap_or(Value::Null);
            arguments.get(key).and_then(shell_text)
        }
        "local_shell_call" => payload.pointer("/action/command").and_then(shell_text),
        _ => None,
    };
    let id = payload
        .get("call_id")
        .or_else(|| payload.get("id"))
        .and_then(Value::as_str);
    if let Some(command) = command
        && state.first_time(id)
    {
        found.push(Found {
            agent: Agent::Codex,
            session: state.session.clone(),
            time: text(line, "timestamp").to_string(),
            cwd: state.cwd.clone(),
            command,
        });
    }
}

/// A command given as text, or as words (`["bash", "-lc", "…"]` is the script it runs).
fn shell_text(value: &Value) -> Option<String> {
    if let Some(text) = value.as_str() {
        return Some(text.to_string());
    }
    let words: Vec<&str> = value.as_array()?.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, flag, script]
            if shell.ends_with("sh") && flag.starts_with('-') && flag.ends_with('c') =>
        {
            Some(script.to_string())
        }
        [] => None,
        words => Some(shell_words::join(words)),
    }
}

fn copilot(line: &Value, kind: &str, state: &mut FileState, found: &mut Vec<Found>) {
    let data = &line["data"];
    match kind {
        "session.start" => {
            state.recognised = true;
            state.session = text(data, "sessionId").to_string();
            if let Some(cwd) = data.pointer("/context/cwd").and_then(Value::as_str) {
                state.cwd = cwd.to_string();
            }
            return;
        }
        "tool.execution_start" => state.recognised = true,
        _ => {
            state.recognised |= kind.starts_with("session.") || kind.starts_with("assistant.");
            return;
        }
    }
    if !COPILOT_SHELL.contains(&text(data, "toolName")) {
        return;
    }
    let command = data.pointer("/arguments/command").and_then(Value::as_str);
    if let Some(command) = command
        && state.first_time(data.get("toolCallId").and_then(Value::as_str))
    {
        found.push(Found {
            agent: Agent::Copilot,
            session: state.session.clone(),
            time: text(line, "timestamp").to_string(),
            cwd: state.cwd.clone(),
            command: command.to_string(),
        });
    }
}

fn gemini_message(message: &Value, state: &mut FileState, found: &mut Vec<Found>) {
    state.recognised = true;
    if message.get("projectHash").is_some() {
        state.session = text(message, "sessionId").to_string();
        return;
    }
    let calls = message.get("toolCalls").and_then(Value::as_array);
    for call in calls.into_iter().flatten() {
        if text(call, "name") != GEMINI_SHELL {
            continue;
        }
        let command = call.pointer("/args/command").and_then(Value::as_str);
        if let Some(command) = command
            && state.first_time(call.get("id").and_then(Value::as_str))
        {
            found.push(Found {
                agent: Agent::Gemini,
                session: state.session.clone(),
                time: text(message, "timestamp").to_string(),
                cwd: String::new(),
                command: command.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(lines: &[Value]) -> (Vec<Found>, bool) {
        let mut state = FileState::default();
        let found = lines.iter().flat_map(|l| commands(l, &mut state)).collect();
        (found, state.recognised)
    }

    #[test]
    fn codex_word_lists_are_the_script_a_shell_runs_or_the_words_quoted() {
        assert_eq!(
            shell_text(&json!(["bash", "-lc", "ssh atlas 'uptime'"])).as_deref(),
            Some("ssh atlas 'uptime'")
        );
        assert_eq!(
            shell_text(&json!(["ssh", "atlas", "a b"])).as_deref(),
            Some("ssh atlas 'a b'")
        );
        assert_eq!(shell_text(&json!([])), None);
    }

    #[test]
    fn a_gemini_call_written_twice_counts_once() {
        let call =
            json!({"id": "c1", "name": "run_shell_command", "args": {"command": "ssh atlas"}});
        let (found, recognised) = all(&[
            json!({"sessionId": "s", "projectHash": "h"}),
            json!({"type": "gemini", "timestamp": "t", "toolCalls": [call]}),
            json!({"type": "gemini", "timestamp": "t", "toolCalls": [call]}),
            json!({"$set": {"messages": [{"type": "gemini", "toolCalls": [call]}]}}),
        ]);
        assert!(recognised);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].session, "s");
    }

    #[test]
    fn json_of_no_agent_is_not_recognised() {
        let (found, recognised) = all(&[json!({"name": "x"}), json!([1, 2]), json!("text")]);
        assert!(found.is_empty());
        assert!(!recognised);
    }

    #[test]
    fn other_tools_are_not_shell_commands() {
        let (found, _) = all(&[json!({"type": "assistant", "sessionId": "s",
            "message": {"content": [{"type": "tool_use", "name": "Write", "input": {"command": "x"}},
                                    {"type": "tool_use", "name": "Bash", "input": {"command": 7}}]}})]);
        assert!(found.is_empty());
    }
}
