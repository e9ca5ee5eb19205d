//! Running the program as an agent or an operator would: spawned (`run`), or in this
//! process through `mesh_guard::run` (`call`), which most tests need and is faster.
#![allow(dead_code)]

pub mod grant;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::rc::Rc;

pub const BIN: &str = env!("CARGO_BIN_EXE_mesh-guard");

pub fn example_catalog() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/catalog.toml")
}

/// A scratch directory, removed when dropped.
pub struct Scratch(pub PathBuf, tempfile::TempDir);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("mesh-guard-{name}-"))
            .tempdir()
            .expect("scratch dir");
        Scratch(dir.path().to_path_buf(), dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// Copies of `files` in a fresh directory every user may enter and read, for a test that
/// runs them as another user: the checkout itself may sit under a directory only its owner
/// may enter. Panics, naming the directory, when the system's temporary directory is itself
/// out of others' reach (there the test cannot check what it is for).
pub struct Reachable {
    pub files: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

pub fn reachable_by_every_user(files: &[&Path]) -> Reachable {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("mesh-guard-reachable-")
        .tempdir()
        .expect("scratch dir");
    for ancestor in dir.path().ancestors().skip(1) {
        let mode = std::fs::metadata(ancestor).map_or(0, |m| m.permissions().mode());
        assert!(
            mode & 0o001 != 0,
            "{} is closed to other users (mode {:o}): set TMPDIR to a directory they may enter",
            ancestor.display(),
            mode & 0o777
        );
    }
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let files = files
        .iter()
        .map(|file| {
            let copy = dir.path().join(file.file_name().expect("a file name"));
            std::fs::copy(file, &copy).expect("copy a file for another user");
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
            copy
        })
        .collect();
    Reachable { files, _dir: dir }
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `mesh-guard ARGS` with `env` (and nothing of the caller's MESH_GUARD_*), feeding `stdin`.
pub fn run(args: &[&str], env: &[(&str, &Path)], stdin: &[u8]) -> Output {
    run_env(
        args,
        &env.iter()
            .map(|(k, v)| (*k, v.to_string_lossy().into_owned()))
            .collect::<Vec<_>>(),
        stdin,
    )
}

/// The caller's variables a run never inherits: the guard's own, and the plugin's root.
const NOT_INHERITED: [&str; 6] = [
    "MESH_GUARD_CATALOG",
    "MESH_GUARD_DB",
    "MESH_GUARD_RULES",
    "MESH_GUARD_OVERRIDE",
    "MESH_GUARD_SYSLOG",
    "CLAUDE_PLUGIN_ROOT",
];

pub fn run_env(args: &[&str], env: &[(&str, String)], stdin: &[u8]) -> Output {
    let mut command = Command::new(BIN);
    command.args(args);
    for var in NOT_INHERITED {
        command.env_remove(var);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mesh-guard");
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// As `run`, in this process (`mesh_guard::run`): the same answer without a spawn. What
/// only a process shows (the deadline, a panic's exit, a signal) is for `run`.
pub fn call(args: &[&str], env: &[(&str, &Path)], stdin: &[u8]) -> Output {
    call_env(
        args,
        &env.iter()
            .map(|(k, v)| (*k, v.to_string_lossy().into_owned()))
            .collect::<Vec<_>>(),
        stdin,
    )
}

/// As `run_env`, in this process.
pub fn call_env(args: &[&str], env: &[(&str, String)], stdin: &[u8]) -> Output {
    let mut vars: HashMap<OsString, OsString> = std::env::vars_os()
        .filter(|(k, _)| !NOT_INHERITED.iter().any(|v| k == v))
        .collect();
    vars.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    let stdout = Captured::default();
    let stderr = Captured::default();
    let io = mesh_guard::io::Io {
        stdin: Box::new(std::io::Cursor::new(stdin.to_vec())),
        stdout: Box::new(stdout.clone()),
        stderr: Box::new(stderr.clone()),
        env: vars,
    };
    let code = mesh_guard::run(args.iter().copied(), io);
    Output {
        code,
        stdout: stdout.text(),
        stderr: stderr.text(),
    }
}

/// A writer whose bytes the test reads back after the call.
#[derive(Clone, Default)]
struct Captured(Rc<RefCell<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A Claude Code PreToolUse event for a Bash command.
pub fn bash_event(command: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": "sess-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_use_id": "toolu_1",
    })
    .to_string()
    .into_bytes()
}

/// The deny message out of a Claude refusal, checking the JSON is exactly the contract's shape.
pub fn claude_denial(stdout: &str) -> String {
    let json: serde_json::Value =
        serde_json::from_str(stdout.trim()).expect("stdout is one JSON object");
    let object = json.as_object().expect("object");
    assert_eq!(object.len(), 1, "only hookSpecificOutput: {stdout}");
    let specific = json["hookSpecificOutput"]
        .as_object()
        .expect("hookSpecificOutput");
    assert_eq!(specific.len(), 3, "{stdout}");
    assert_eq!(specific["hookEventName"], "PreToolUse");
    assert_eq!(specific["permissionDecision"], "deny");
    specific["permissionDecisionReason"]
        .as_str()
        .expect("reason")
        .to_string()
}

/// `args` after the global options that name the catalog and the record: how `install`
/// writes a hook's command line, the only place a hook takes its paths from.
pub fn with_paths(catalog: &Path, db: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec![
        "--catalog".to_string(),
        catalog.to_string_lossy().into_owned(),
        "--db".to_string(),
        db.to_string_lossy().into_owned(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    all
}

/// `with_paths` as the `&str`s `run` and `call` take.
pub fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A copy of the plugin's launcher that looks in `places` instead of its fixed ones (which
/// a test cannot write): the same script, its one list replaced.
pub fn launcher_looking_in(dir: &Scratch, places: &[&Path]) -> PathBuf {
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/bin/mesh-guard"),
    )
    .unwrap();
    let list: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
    let start = script
        .find("\nPLACES='")
        .expect("the launcher's PLACES line")
        + 1;
    let end = start + script[start..].find('\n').unwrap();
    let copy = format!(
        "{}PLACES='{}'{}",
        &script[..start],
        list.join(" "),
        &script[end..]
    );
    let path = dir.write("plugin/bin/mesh-guard", &copy);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
