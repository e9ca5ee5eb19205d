//! `mesh-guard mcp`: a Model Context Protocol server on stdio, so an agent can ask which mesh
//! tool replaces a shell command *before* it reaches for ssh (decision 0013).
//!
//! MCP over stdio is newline-delimited JSON-RPC 2.0. This loop answers `initialize`, `ping`,
//! `tools/list` and `tools/call`, ignores notifications, and keeps serving after any bad
//! message: a parse error is -32700, an unknown method -32601, an unknown tool -32602, bad
//! arguments a tool result with `isError`. It ends, with exit 0, when stdin closes.

use crate::catalog::{self, Catalog};
use crate::cli::TableFormat;
use crate::config::Paths;
use crate::error::exit;
use crate::rules::Rules;
use crate::search;
use serde_json::{Value, json};

/// Protocol revisions this server speaks, newest first; a client asking for another gets
/// the newest, and decides itself whether it can go on.
const PROTOCOL_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Past this, a line is not read further and answered with a parse error.
const MAX_LINE_BYTES: u64 = 8 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// Serves stdin → stdout until stdin closes (exit 0), or stdout does (exit 0 too: the
/// client has gone).
pub fn serve(paths: &Paths) -> i32 {
    let server = Server { paths };
    loop {
        let mut line = Vec::new();
        match crate::io::read_line(MAX_LINE_BYTES + 1, &mut line) {
            Ok(0) | Err(_) => return exit::OK,
            Ok(_) => {}
        }
        if line.len() as u64 > MAX_LINE_BYTES && !line.ends_with(b"\n") {
            // The rest of the over-long line is skipped, not taken for the next message.
            let mut rest = Vec::new();
            let _ = crate::io::read_line(u64::MAX, &mut rest);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.handle_line(&line)))
                .unwrap_or_else(|_| {
                    Some(error(
                        Value::Null,
                        INTERNAL_ERROR,
                        "mesh-guard failed inside (an internal error)",
                    ))
                });
        if let Some(reply) = reply
            && (crate::io::write_out(format_args!("{reply}\n")).is_err()
                || crate::io::flush_out().is_err())
        {
            return exit::OK;
        }
    }
}

struct Server<'a> {
    paths: &'a Paths,
}

impl Server<'_> {
    /// The answer to one line, or None for a notification.
    fn handle_line(&self, line: &[u8]) -> Option<Value> {
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(e) => {
                return Some(error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("parse error: {e}"),
                ));
            }
        };
        let Some(object) = message.as_object() else {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "a message is one JSON-RPC object",
            ));
        };
        let id = object.get("id").cloned();
        let Some(method) = object.get("method").and_then(Value::as_str) else {
            // A response from the client (this server asks nothing) or garbage.
            return id.map(|id| error(id, INVALID_REQUEST, "a request needs a method"));
        };
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        // Notifications (no id) get no answer, whatever they say.
        let id = id?;
        Some(match self.call(method, &params) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, text)) => error(id, code, &text),
        })
    }

    fn call(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "initialize" => Ok(initialize(params)),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools()})),
            "tools/call" => self.call_tool(params),
            _ => Err((METHOD_NOT_FOUND, format!("unknown method `{method}`"))),
        }
    }

    fn call_tool(&self, params: &Value) -> Result<Value, (i64, String)> {
        let name = params["name"]
            .as_str()
            .ok_or((INVALID_PARAMS, "tools/call needs a tool `name`".to_string()))?;
        let arguments = &params["arguments"];
        if !(arguments.is_null() || arguments.is_object()) {
            return Ok(tool_error("`arguments` must be an object"));
        }
        match name {
            "mesh_search" => Ok(self.mesh_search(arguments)),
            "mesh_instead_of" => Ok(self.mesh_instead_of()),
            _ => Err((INVALID_PARAMS, format!("unknown tool `{name}`"))),
        }
    }

    fn mesh_search(&self, arguments: &Value) -> Value {
        let Some(command) = arguments["command"].as_str() else {
            return tool_error("`command` (a shell command, as a string) is required");
        };
        if command.trim().is_empty() {
            return tool_error("`command` is empty: give the shell command to replace");
        }
        let (catalog, rules) = match self.load() {
            Ok(loaded) => loaded,
            Err(why) => return tool_error(&why.to_string()),
        };
        let world = self.paths.world(std::env::current_dir().ok());
        match search::search(&catalog, &rules, &world, command) {
            Ok(answer) => {
                let structured = answer.to_json(command);
                let text = match &answer {
                    search::Answer::Found(_) => format!(
                        "The mesh tools that replace `{command}`, best first:\n{}",
                        answer.to_text(command)
                    ),
                    _ => answer.summary(command),
                };
                tool_result(text, structured)
            }
            Err(why) => tool_error(&why.to_string()),
        }
    }

    fn mesh_instead_of(&self) -> Value {
        let catalog = match catalog::load(&self.paths.catalog) {
            Ok(catalog) => catalog,
            Err(errors) => return tool_error(&Unloaded::Catalog(errors).to_string()),
        };
        let table = crate::commands::instead_of::instead_of_table(&catalog, TableFormat::Json);
        let rows: Value = serde_json::from_str(&table).unwrap_or_else(|_| json!([]));
        let text = crate::commands::instead_of::instead_of_table(&catalog, TableFormat::Markdown)
            + "\n"
            + crate::commands::instead_of::INSTEAD_OF_SEARCH;
        tool_result(text, json!({"rows": rows}))
    }

    /// The catalog and rules, read afresh for each call: an operator's edit counts at once.
    fn load(&self) -> Result<(Catalog, Rules), Unloaded> {
        let catalog = catalog::load(&self.paths.catalog).map_err(Unloaded::Catalog)?;
        let rules = Rules::load(self.paths.rules.as_deref()).map_err(Unloaded::Rules)?;
        Ok((catalog, rules))
    }
}

/// Why a tool call cannot be answered: the catalog or the rules do not load. Its text is the
/// tool's error result, which the agent's model reads.
#[derive(Debug)]
enum Unloaded {
    Catalog(Vec<catalog::CatalogError>),
    Rules(crate::rules::RulesError),
}

impl std::fmt::Display for Unloaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unloaded::Catalog(errors) => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "mesh-guard cannot read its catalog; tell the operator: {}",
                    list.join("; ")
                )
            }
            Unloaded::Rules(e) => write!(f, "the guard's rules are invalid: {e}"),
        }
    }
}

impl std::error::Error for Unloaded {}

fn initialize(params: &Value) -> Value {
    let asked = params["protocolVersion"].as_str();
    let version = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "mesh-guard", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "Before running a shell command aimed at the mesh's machines, containers or units (ssh, scp, docker, journalctl, systemctl and kin), ask mesh_search for the mesh tool that replaces it; mesh_instead_of lists them all.",
    })
}

fn tools() -> Value {
    let tool_row = json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "description": "the mesh tool's name"},
            "usage": {"type": "string", "description": "the invocation, filled in from the command"},
            "replaces": {"type": "string", "description": "the command shape it replaces"},
            "module": {"type": ["string", "null"], "description": "the module whose own tool it is; null for a seat verb"},
        },
        "required": ["tool", "usage", "replaces", "module"],
    });
    json!([
        {
            "name": "mesh_search",
            "title": "Find the mesh tool for a shell command",
            "description": "The mesh tools that replace a shell command (ssh, scp, docker, journalctl, systemctl... aimed at the mesh), best first, each with its usage filled in from the command. Ask before running such a command: mesh-guard refuses it. When no tool replaces it, the answer says that one must be created (tell the operator); when the command needs no replacing, it says so.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "the shell command you would run, e.g. `ssh atlas journalctl -u mesh-controller`"},
                },
                "required": ["command"],
                "additionalProperties": false,
            },
            "outputSchema": {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "outcome": {"type": "string", "enum": ["found", "create", "nothing"], "description": "found: use tools[0]; create: no tool replaces it, one must be created for `shape`; nothing: the guard lets the command through"},
                    "tools": {"type": "array", "items": tool_row},
                    "shape": {"type": ["string", "null"], "description": "the command shape that needs a tool (outcome create)"},
                    "message": {"type": "string"},
                },
                "required": ["command", "outcome", "tools", "shape", "message"],
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "mesh_instead_of",
            "title": "The mesh's \"instead of\" table",
            "description": "Every command shape the mesh has a tool for, with the tool and its usage: what to use instead of ssh, docker, journalctl and kin on the mesh.",
            "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
            "outputSchema": {
                "type": "object",
                "properties": {
                    "rows": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "instead_of": {"type": "string"},
                                "tool": {"type": "string"},
                                "usage": {"type": "string"},
                            },
                            "required": ["instead_of", "tool", "usage"],
                        },
                    },
                },
                "required": ["rows"],
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
    ])
}

fn tool_result(text: String, structured: Value) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": structured,
        "isError": false,
    })
}

fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
