//! `mesh-guard mcp`, spoken to as an MCP client would: newline-delimited JSON-RPC 2.0 on
//! stdio (issue 18).

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn search(id: u64, command: &str) -> String {
    request(
        id,
        "tools/call",
        json!({"name": "mesh_search", "arguments": {"command": command}}),
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Feeds `lines` to a server on `catalog`, closes stdin, and returns the exit code and the
/// answers (one JSON value per stdout line).
fn session(catalog: &std::path::Path, lines: &[String]) -> (i32, Vec<Value>) {
    let mut input = lines.join("\n");
    input.push('\n');
    let out = run(
        &["mcp"],
        &[("MESH_GUARD_CATALOG", catalog)],
        input.as_bytes(),
    );
    let answers = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}\n{}", out.stderr))
        })
        .collect();
    (out.code, answers)
}

fn by_id(answers: &[Value], id: u64) -> &Value {
    answers
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no answer to request {id}: {answers:#?}"))
}

#[test]
fn initialize_then_tools_with_their_schemas() {
    let (code, answers) = session(
        &example_catalog(),
        &[
            INITIALIZE.to_string(),
            INITIALIZED.to_string(),
            request(2, "tools/list", json!({})),
            request(3, "ping", json!({})),
        ],
    );
    assert_eq!(code, 0, "stdin closed: the server exits 0");
    // The notification gets no answer: three requests, three answers.
    assert_eq!(answers.len(), 3, "{answers:#?}");
    let init = &by_id(&answers, 1)["result"];
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "mesh-guard");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert_eq!(by_id(&answers, 3)["result"], json!({}));

    let tools = by_id(&answers, 2)["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["mesh_search", "mesh_instead_of"]);
    let search = &tools[0];
    assert_eq!(search["inputSchema"]["type"], "object");
    assert_eq!(
        search["inputSchema"]["properties"]["command"]["type"],
        "string"
    );
    assert_eq!(search["inputSchema"]["required"], json!(["command"]));
    for tool in tools {
        assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| d.len() > 20));
    }
    assert!(
        search["outputSchema"]["properties"]["tools"]["items"]["properties"]["usage"].is_object()
    );
}

#[test]
fn search_fills_the_usage_as_a_refusal_does() {
    let command = "ssh atlas journalctl -u mesh-controller";
    let (_, answers) = session(
        &example_catalog(),
        &[INITIALIZE.to_string(), search(2, command)],
    );
    let result = &by_id(&answers, 2)["result"];
    assert_eq!(result["isError"], false, "{result}");
    let structured = &result["structuredContent"];
    assert_eq!(structured["outcome"], "found");
    assert_eq!(structured["command"], command);
    let first = &structured["tools"][0];
    assert_eq!(first["usage"], "mesh logs controller --machine atlas");
    assert_eq!(first["tool"], "logs");
    assert_eq!(first["replaces"], "ssh <machine> journalctl");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["content"][0]["type"], "text");
    assert!(
        text.contains("mesh logs controller --machine atlas"),
        "{text}"
    );

    // The refusal's own ranking: the hook names the same tools, in the same order.
    let dir = Scratch::new("mcp-check");
    let check = run(
        &["check", "--json", command],
        &[
            ("MESH_GUARD_CATALOG", &example_catalog()),
            ("MESH_GUARD_DB", &dir.path("a.db")),
        ],
        b"",
    );
    let check: Value = serde_json::from_str(&check.stdout).unwrap();
    let refused: Vec<&Value> = check["instead"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["usage"])
        .collect();
    let searched: Vec<&Value> = structured["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["usage"])
        .take(refused.len())
        .collect();
    assert_eq!(searched, refused);
}

#[test]
fn a_command_nothing_replaces_and_one_that_needs_nothing() {
    let (_, answers) = session(
        &example_catalog(),
        &[
            search(2, "docker kill mesh-controller"),
            search(3, "ls -la"),
        ],
    );
    let create = &by_id(&answers, 2)["result"];
    assert_eq!(create["isError"], false);
    assert_eq!(create["structuredContent"]["outcome"], "create");
    assert_eq!(
        create["structuredContent"]["shape"],
        "docker kill <container>"
    );
    assert_eq!(create["structuredContent"]["tools"], json!([]));
    let text = create["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("one must be created") && text.contains("docker kill <container>"),
        "{text}"
    );

    let nothing = &by_id(&answers, 3)["result"];
    assert_eq!(nothing["structuredContent"]["outcome"], "nothing");
    let text = nothing["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Nothing needs replacing"), "{text}");
    assert!(!text.contains("one must be created"), "{text}");
}

#[test]
fn errors_are_answers_and_the_server_goes_on() {
    let (code, answers) = session(
        &example_catalog(),
        &[
            "{not json".to_string(),
            request(
                2,
                "tools/call",
                json!({"name": "rm_rf", "arguments": {"command": "ls"}}),
            ),
            request(
                3,
                "tools/call",
                json!({"name": "mesh_search", "arguments": {"cmd": "ssh atlas"}}),
            ),
            request(
                4,
                "tools/call",
                json!({"name": "mesh_search", "arguments": {"command": 42}}),
            ),
            request(5, "no/such/method", json!({})),
            "[1, 2]".to_string(),
            // Still serving after all of that.
            search(6, "ssh atlas uptime"),
        ],
    );
    assert_eq!(code, 0);
    let parse = answers
        .iter()
        .find(|a| a["error"]["code"] == -32700)
        .unwrap_or_else(|| panic!("no parse error: {answers:#?}"));
    assert_eq!(parse["id"], Value::Null);
    assert_eq!(by_id(&answers, 2)["error"]["code"], -32602);
    assert!(
        by_id(&answers, 2)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rm_rf")
    );
    for id in [3, 4] {
        assert_eq!(
            by_id(&answers, id)["result"]["isError"],
            true,
            "{answers:#?}"
        );
    }
    assert_eq!(by_id(&answers, 5)["error"]["code"], -32601);
    assert!(answers.iter().any(|a| a["error"]["code"] == -32600));
    assert_eq!(
        by_id(&answers, 6)["result"]["structuredContent"]["tools"][0]["usage"],
        "mesh exec atlas -- uptime"
    );
}

#[test]
fn instead_of_table_as_a_tool() {
    let (_, answers) = session(
        &example_catalog(),
        &[request(
            2,
            "tools/call",
            json!({"name": "mesh_instead_of", "arguments": {}}),
        )],
    );
    let result = &by_id(&answers, 2)["result"];
    let rows = result["structuredContent"]["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["instead_of"] == "docker exec <container> psql"
                && r["usage"] == "mesh db shell postgres")
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("| instead of | use | tool |"), "{text}");
    assert!(text.contains("`mesh_search`"), "{text}");
}

/// A catalog the server cannot read is a tool error naming the problem, not a crash.
#[test]
fn an_invalid_catalog_is_a_tool_error() {
    let dir = Scratch::new("mcp-bad-catalog");
    let catalog = dir.write("catalog.toml", "version = 1\n[[machine]]\nnom = \"x\"\n");
    let (code, answers) = session(&catalog, &[search(2, "ssh atlas uptime")]);
    assert_eq!(code, 0);
    let result = &by_id(&answers, 2)["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("catalog")
    );
}

/// A real client waits for each answer before it sends the next request: the server must
/// answer each line as it comes, not at end of input.
#[test]
fn answers_each_request_before_stdin_closes() {
    let mut child = Command::new(BIN)
        .arg("mcp")
        .env("MESH_GUARD_CATALOG", example_catalog())
        .env_remove("MESH_GUARD_RULES")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (lines, answers) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    // A generous bound, only so that a server that never answers fails instead of hanging.
    let next = || answers.recv_timeout(Duration::from_secs(60));
    writeln!(stdin, "{INITIALIZE}").unwrap();
    let first: Value = serde_json::from_str(&next().expect("no answer to initialize")).unwrap();
    assert_eq!(first["id"], 1);
    writeln!(stdin, "{}", search(2, "ssh atlas uptime")).unwrap();
    let second: Value = serde_json::from_str(&next().expect("no answer to the search")).unwrap();
    assert_eq!(second["id"], 2);
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stdin closed: exit 0");
}

/// The plugin starts the server through its launcher: with no binary, the launcher says so
/// on stderr (the MCP client shows it) and exits 2, never hangs or prints a half protocol.
#[test]
fn the_launcher_explains_a_missing_binary() {
    let dir = Scratch::new("mcp-launcher");
    let missing = dir.path("no-such-mesh-guard");
    let launcher = launcher_looking_in(&dir, &[&missing]);
    let out = Command::new("sh")
        .arg(&launcher)
        .arg("mcp")
        // No variable chooses the binary (decision 0059).
        .env("MESH_GUARD_BIN", BIN)
        .env(
            "PATH",
            format!(
                "{}:/usr/bin:/bin",
                std::path::Path::new(BIN).parent().unwrap().display()
            ),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on the protocol channel");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("MCP server (mesh_search) cannot start")
            && stderr.contains("No mesh-guard was found"),
        "{stderr}"
    );

    // With the binary in one of its places, the launcher hands stdio to it.
    let launcher = launcher_looking_in(&dir, &[&missing, std::path::Path::new(BIN)]);
    let out = Command::new("sh")
        .arg(&launcher)
        .arg("mcp")
        .env("MESH_GUARD_CATALOG", example_catalog())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "{INITIALIZE}")?;
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "mesh-guard");
}

/// Another catalog, three searches: the ranking's tie-breaks and the filling reach the
/// MCP answer unchanged.
#[test]
fn searches_on_another_catalog() {
    let dir = Scratch::new("mcp-other-catalog");
    let catalog = dir.write(
        "catalog.toml",
        r#"
version = 1
[[machine]]
name = "atlas"
[[module]]
name = "controller"
machines = ["atlas"]
containers = ["mesh-controller"]
units = ["mesh-controller.service"]
  [[module.tool]]
  name = "ctl_logs"
  usage = "mesh controller logs"
  replaces = ["docker logs"]
[[verb]]
name = "logs_follow"
usage = "mesh logs <module> --follow"
replaces = ["docker logs -f <container>"]
[[verb]]
name = "restart"
usage = "mesh restart <module> --machine <machine>"
replaces = ["systemctl restart <unit>", "ssh <machine> systemctl restart"]
"#,
    );
    let (_, answers) = session(
        &catalog,
        &[
            search(1, "docker logs -f mesh-controller"),
            search(2, "docker logs mesh-controller"),
            search(3, "ssh atlas sudo systemctl restart mesh-controller"),
        ],
    );
    let best = |id| by_id(&answers, id)["result"]["structuredContent"]["tools"][0]["usage"].clone();
    assert_eq!(best(1), "mesh logs controller --follow");
    assert_eq!(best(2), "mesh controller logs");
    assert_eq!(best(3), "mesh restart controller --machine atlas");
}

/// The in-process entry (`common::call`) reads the server's stdin a line at a time as the
/// process does: the same answers, byte for byte, and the same exit.
#[test]
fn in_process_and_spawned_servers_answer_alike() {
    let mut input = [
        INITIALIZE.to_string(),
        INITIALIZED.to_string(),
        request(2, "tools/list", json!({})),
        search(3, "ssh atlas uptime"),
    ]
    .join("\n");
    input.push('\n');
    let catalog = example_catalog();
    let env = [("MESH_GUARD_CATALOG", catalog.as_path())];
    let spawned = run(&["mcp"], &env, input.as_bytes());
    let called = call(&["mcp"], &env, input.as_bytes());
    assert_eq!(spawned.stdout.lines().count(), 3, "{}", spawned.stdout);
    assert_eq!(called.stdout, spawned.stdout);
    assert_eq!(called.code, spawned.code);
}
