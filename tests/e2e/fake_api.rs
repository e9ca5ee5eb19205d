//! A scripted stand-in for the Anthropic Messages API, on loopback.
//!
//! The end-to-end tests run the real Claude Code CLI offline. The CLI talks to
//! `ANTHROPIC_BASE_URL`; this server answers it with a fixed script: the first
//! model turn proposes one tool call (usually `Bash`), and the turn after it
//! (which carries the `tool_result`) ends the conversation with a line of text. Every request is
//! recorded so a test can read back what the model would have been told.
//!
//! Plain std (TcpListener and a thread per connection): each connection serves
//! one request and is closed, which every HTTP/1.1 client handles.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// The id of the one tool call the script makes.
pub const TOOL_USE_ID: &str = "toolu_e2e_mesh_guard_01";

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

/// One request the CLI made.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub body: String,
}

struct Shared {
    call: ToolCall,
    requests: Mutex<Vec<Request>>,
    stop: AtomicBool,
}

pub struct FakeApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<thread::JoinHandle<()>>,
}

impl FakeApi {
    /// Starts a server whose model makes `call`.
    pub fn start(call: ToolCall) -> FakeApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake API on loopback");
        let addr = listener.local_addr().expect("fake API address");
        let shared = Arc::new(Shared {
            call,
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let for_thread = Arc::clone(&shared);
        let accept_thread = thread::spawn(move || {
            for stream in listener.incoming() {
                if for_thread.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let shared = Arc::clone(&for_thread);
                thread::spawn(move || {
                    // A connection the client drops half-way is its business;
                    // the test judges by what was recorded.
                    let _ = serve(stream, &shared);
                });
            }
        });
        FakeApi {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// The text of every `tool_result` for our tool call that the CLI sent
    /// back to the model (one per request that carried it).
    pub fn tool_results(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
            .filter_map(|r| serde_json::from_str::<Value>(&r.body).ok())
            .filter_map(|body| find_tool_result(&body))
            .collect()
    }

    /// One line per request, for failure messages.
    pub fn request_log(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("{} {} ({} bytes)", r.method, r.path, r.body.len()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(handle) = self.accept_thread.take() {
            let _ = handle.join();
        }
    }
}

fn serve(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line)? == 0 {
        return Ok(());
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();

    let mut content_length = 0usize;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            if name == "content-length" {
                content_length = value.parse().unwrap_or(0);
            } else if name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked") {
                chunked = true;
            }
        }
    }
    let body = if chunked {
        read_chunked(&mut reader)?
    } else {
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body)?;
        body
    };
    let body = String::from_utf8_lossy(&body).into_owned();
    shared.requests.lock().unwrap().push(Request {
        method: method.clone(),
        path: path.clone(),
        body: body.clone(),
    });

    let route = path.split('?').next().unwrap_or_default();
    let mut stream = stream;
    match (method.as_str(), route) {
        ("POST", "/v1/messages") => {
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let reply = reply_to(&request, &shared.call);
            if request["stream"] == Value::Bool(true) {
                write_response(&mut stream, "200 OK", "text/event-stream", &sse(&reply))
            } else {
                write_response(
                    &mut stream,
                    "200 OK",
                    "application/json",
                    &reply.to_string(),
                )
            }
        }
        ("POST", "/v1/messages/count_tokens") => write_response(
            &mut stream,
            "200 OK",
            "application/json",
            r#"{"input_tokens":1}"#,
        ),
        // Anything else (feature flags, metrics, MCP registries...) is
        // nonessential; a 404 makes the CLI fall back to its defaults.
        _ => write_response(
            &mut stream,
            "404 Not Found",
            "application/json",
            r#"{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}"#,
        ),
    }
}

fn read_chunked(reader: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.read_line(&mut size_line)?;
        let size_hex = size_line.trim().split(';').next().unwrap_or("0");
        let size = usize::from_str_radix(size_hex, 16).unwrap_or(0);
        let mut chunk = vec![0; size + 2]; // the chunk and its CRLF
        reader.read_exact(&mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

fn write_response(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// The scripted model. The main conversation offers the tool: its first turn
/// calls it, and once the result is in, it stops. Side requests the CLI may
/// make on its own (titles, summaries: the tool not offered) get a short text.
fn reply_to(request: &Value, call: &ToolCall) -> Value {
    let model = request["model"].as_str().unwrap_or("claude-e2e");
    let offers_tool = request["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == call.name.as_str()));
    if offers_tool && find_tool_result(request).is_none() {
        message(
            model,
            json!({"type": "tool_use", "id": TOOL_USE_ID, "name": call.name, "input": call.input}),
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

/// The same message as a stream of server-sent events, the way the real API
/// streams it: the block's content arrives in a delta, not in the start event.
fn sse(message: &Value) -> String {
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
    let events = [
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
    ];
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
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
