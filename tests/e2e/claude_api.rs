//! The scripted Anthropic Messages API the Claude Code CLI talks to in the
//! end-to-end tests, on the shared loopback server of `tests/common_e2e`.
//!
//! The script: the first model turn proposes one tool call (usually `Bash`),
//! and the turn after it (which carries the `tool_result`) ends the
//! conversation with a line of text. Every request is kept, so a test can
//! read back what the model was told.

use crate::common_e2e::{FakeApi, Reply, Request};
use serde_json::{Value, json};

/// The id of the one tool call the script makes.
pub const TOOL_USE_ID: &str = "toolu_e2e_mesh_guard_01";

/// The id of the tool search the script makes first when its tool is deferred.
pub const SEARCH_USE_ID: &str = "toolu_e2e_mesh_guard_search";

/// Claude Code's tool that loads a deferred tool (MCP tools, from 2.1.2xx on).
pub const TOOL_SEARCH: &str = "ToolSearch";

/// The one tool call the scripted model makes.
#[derive(Clone, Debug)]
pub struct ToolCall {
    pub name: String,
    pub input: Value,
}

impl ToolCall {
    pub fn bash(command: &str) -> ToolCall {
        ToolCall {
            name: "Bash".into(),
            input: json!({
                "command": command,
                "description": "Run the command the end-to-end test scripted",
            }),
        }
    }
}

/// Starts a fake API whose model makes `call`.
pub fn start(call: ToolCall) -> FakeApi {
    FakeApi::start(move |request| answer(request, &call))
}

/// The text of every `tool_result` for our tool call that the CLI sent back
/// to the model (one per request that carried it).
pub fn tool_results(api: &FakeApi) -> Vec<String> {
    api.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
        .filter_map(|r| find_tool_result(&r.body))
        .collect()
}

fn answer(request: &Request, call: &ToolCall) -> Reply {
    let route = request.path.split('?').next().unwrap_or_default();
    match (request.method.as_str(), route) {
        ("POST", "/v1/messages") => {
            let message = reply_to(&request.body, call);
            if request.body["stream"] == true {
                Reply::sse(&events(&message))
            } else {
                Reply::json(&message)
            }
        }
        ("POST", "/v1/messages/count_tokens") => Reply::json(&json!({"input_tokens": 1})),
        // Anything else (feature flags, metrics, registries...) is
        // nonessential; a 404 makes the CLI fall back to its defaults.
        _ => Reply::not_found(),
    }
}

/// The scripted model. The main conversation offers the tool: its first turn
/// calls it, and once the result is in, it stops. Where the CLI defers the tool (names it
/// to the model but leaves it out of the request's tools until its tool search loads it),
/// the model first asks the tool search for it by name, as a real model does. Side requests
/// the CLI may make on its own (titles, summaries: the tool not offered) get a short text.
fn reply_to(request: &Value, call: &ToolCall) -> Value {
    let model = request["model"].as_str().unwrap_or("claude-e2e");
    let offers = |name: &str| {
        request["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
    };
    let deferred = !offers(&call.name)
        && offers(TOOL_SEARCH)
        && request.to_string().contains(&call.name)
        && !has_tool_use(request, SEARCH_USE_ID);
    if offers(&call.name) && find_tool_result(request).is_none() {
        message(
            model,
            json!({"type": "tool_use", "id": TOOL_USE_ID, "name": call.name, "input": call.input}),
            "tool_use",
        )
    } else if deferred {
        message(
            model,
            json!({"type": "tool_use", "id": SEARCH_USE_ID, "name": TOOL_SEARCH,
                "input": {"query": format!("select:{}", call.name), "max_results": 1}}),
            "tool_use",
        )
    } else {
        message(
            model,
            json!({"type": "text", "text": "Done: the scripted turn is over."}),
            "end_turn",
        )
    }
}

/// Whether the conversation holds the model's tool call `id`.
fn has_tool_use(request: &Value, id: &str) -> bool {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .any(|block| block["type"] == "tool_use" && block["id"] == id)
}

fn message(model: &str, block: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_e2e_mesh_guard",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    })
}

/// The same message as server-sent events, the way the real API streams it:
/// the block's content arrives in a delta, not in the start event.
fn events(message: &Value) -> Vec<(&'static str, Value)> {
    let block = &message["content"][0];
    let (empty_block, delta) = if block["type"] == "tool_use" {
        (
            json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": block["text"]}),
        )
    };
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    vec![
        (
            "message_start",
            json!({"type": "message_start", "message": start}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": empty_block}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": null},
                "usage": {"output_tokens": 10},
            }),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

/// The text of the `tool_result` for our call in a request's messages, if any.
fn find_tool_result(request: &Value) -> Option<String> {
    let messages = request["messages"].as_array()?;
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == TOOL_USE_ID)
        .map(|block| match &block["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
}

/// The id of step `n` (from 0) of a scripted sequence of tool calls.
#[allow(dead_code)] // used by the hardened install's test only
pub fn step_id(n: usize) -> String {
    format!("toolu_e2e_mesh_guard_step_{n:02}")
}

/// Starts a fake API whose model makes `calls` in turn: each once the result of the one
/// before it is in, then ends the conversation.
#[allow(dead_code)] // used by the hardened install's test only
pub fn start_script(calls: Vec<ToolCall>) -> FakeApi {
    FakeApi::start(move |request| {
        let route = request.path.split('?').next().unwrap_or_default();
        match (request.method.as_str(), route) {
            ("POST", "/v1/messages") => {
                let body = &request.body;
                let model = body["model"].as_str().unwrap_or("claude-e2e");
                let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
                let done = step_results(body).len();
                let message = match calls.get(done) {
                    Some(call) if offers_tools => message(
                        model,
                        json!({"type": "tool_use", "id": step_id(done), "name": call.name, "input": call.input}),
                        "tool_use",
                    ),
                    _ => message(
                        model,
                        json!({"type": "text", "text": "Done: the scripted turn is over."}),
                        "end_turn",
                    ),
                };
                if body["stream"] == true {
                    Reply::sse(&events(&message))
                } else {
                    Reply::json(&message)
                }
            }
            ("POST", "/v1/messages/count_tokens") => Reply::json(&json!({"input_tokens": 1})),
            _ => Reply::not_found(),
        }
    })
}

/// The results of the scripted steps in a request's messages, in order: (id, text).
#[allow(dead_code)] // used by the hardened install's test only
pub fn step_results(request: &Value) -> Vec<(String, String)> {
    let Some(messages) = request["messages"].as_array() else {
        return Vec::new();
    };
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| {
            b["type"] == "tool_result"
                && b["tool_use_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with("toolu_e2e_mesh_guard_step_"))
        })
        .map(|b| {
            let text = match &b["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            };
            (
                b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                text,
            )
        })
        .collect()
}

/// The step results of the longest conversation the CLI sent.
#[allow(dead_code)] // used by the hardened install's test only
pub fn script_results(api: &FakeApi) -> Vec<(String, String)> {
    api.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
        .map(|r| step_results(&r.body))
        .max_by_key(Vec::len)
        .unwrap_or_default()
}
