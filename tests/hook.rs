//! The hook end to end, as Claude Code runs it: an event on stdin, the exact answer out.

mod common;
use common::*;

fn hook(command: &str) -> (Output, Scratch) {
    let dir = Scratch::new("hook");
    let args = with_paths(
        &example_catalog(),
        &dir.path("audit.db"),
        &["hook", "--agent", "claude"],
    );
    let out = run(&strs(&args), &[], &bash_event(command));
    (out, dir)
}

fn assert_refused(command: &str) -> String {
    let (out, _dir) = hook(command);
    assert_eq!(out.code, 2, "{command}: {}", out.stderr);
    let message = claude_denial(&out.stdout);
    assert!(
        out.stderr.contains(&message),
        "the message is on stderr too"
    );
    assert!(message.chars().count() < 1000);
    message
}

fn assert_passes(command: &str) {
    let (out, _dir) = hook(command);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, ""),
        "{command} should pass: {}",
        out.stderr
    );
}

#[test]
fn a_refusal_is_the_exact_deny_json_with_a_ready_invocation() {
    let message = assert_refused("ssh atlas journalctl -u mesh-controller");
    assert_eq!(
        message,
        "Decided by mesh-guard, not an error: do not retry or work round it. Use the mesh's own tool instead: `mesh logs controller --machine atlas` (or `mesh exec atlas -- journalctl -u mesh-controller`). \
         mesh-guard refused `ssh atlas journalctl -u mesh-controller`: it reaches mesh machine `atlas` over ssh. \
         Nothing else is disabled: other commands and tools still work."
    );
}

#[test]
fn each_family_refuses_at_the_mesh_and_passes_elsewhere() {
    let cases = [
        (
            "ssh -p 2222 root@atlas.mesh.lan uptime",
            "ssh example.org uptime",
        ),
        (
            "scp notes.txt db1:/tmp/",
            "scp notes.txt backup.example.org:/tmp/",
        ),
        ("sftp orion", "sftp files.example.org"),
        (
            "rsync -av ./build/ 10.20.0.12:/srv/app/",
            "rsync -av ./build/ ./dist/",
        ),
        ("mosh vega", "mosh laptop.home"),
        (
            "sshpass -p secret ssh atlas",
            "sshpass -p secret ssh example.org",
        ),
        (
            "autossh -M 0 -N -L 8080:localhost:80 orion",
            "autossh -M 0 -N example.org",
        ),
        ("docker logs -f mesh-gateway", "docker logs -f my-app"),
        (
            "podman exec -it mesh-postgres psql",
            "podman exec -it scratch psql",
        ),
        (
            "docker -H ssh://root@atlas ps",
            "docker -H unix:///var/run/docker.sock ps",
        ),
        (
            "DOCKER_HOST=tcp://10.20.0.11:2376 docker ps",
            "DOCKER_HOST=tcp://127.0.0.1:2376 docker ps",
        ),
        ("journalctl -fu mesh-postgres", "journalctl -fu nginx"),
        ("journalctl -H lyra -n 50", "journalctl -n 50"),
        (
            "systemctl restart mesh-gateway.service",
            "systemctl restart nginx.service",
        ),
        ("systemctl -H orion status", "systemctl status"),
    ];
    for (refused, passing) in cases {
        assert_refused(refused);
        assert_passes(passing);
    }
}

#[test]
fn the_forge_git_account_passes_and_other_accounts_do_not() {
    assert_passes("ssh -T git@forge");
    assert_passes("ssh git@git.mesh.lan info");
    assert_passes("git clone git@forge:platform/mesh.git");
    assert_refused("ssh root@forge");
    assert_refused("ssh forge");
}

#[test]
fn data_that_mentions_the_mesh_passes() {
    assert_passes("echo 'ssh atlas is down'");
    assert_passes("grep -r mesh-controller docs/");
    assert_passes("git commit -m \"$(cat <<'EOF'\nFix the atlas (controller) restart)\nEOF\n)\"");
    assert_passes("cat <<EOF > notes.md\nssh atlas journalctl -u mesh-controller\nEOF");
    assert_passes("ssh -V");
    assert_passes("ssh-keygen -t ed25519 -f /tmp/key -N ''");
}

#[test]
fn one_must_be_created_names_the_shape() {
    let message = assert_refused("docker kill mesh-controller");
    assert!(
        message
            .starts_with("Decided by mesh-guard, not an error: do not retry or work round it. No mesh tool does `docker kill <container>` yet: one must be created."),
        "{message}"
    );
    assert!(message.contains("Tell the operator"), "{message}");
    assert!(
        message.contains("container `mesh-controller` of mesh module `controller`"),
        "{message}"
    );
}

#[test]
fn fail_closed_on_bad_input() {
    let dir = Scratch::new("bad-input");
    let args = with_paths(
        &example_catalog(),
        &dir.path("audit.db"),
        &["hook", "--agent", "claude"],
    );
    let inputs: [&[u8]; 8] = [
        b"",
        b"   \n",
        b"{not json",
        b"[1,2]",
        b"\xff\xfe{}",
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}"#,
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":42}}"#,
        br#"{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}"#,
    ];
    for input in inputs {
        let out = run(&strs(&args), &[], input);
        assert_eq!(out.code, 2, "{:?}", String::from_utf8_lossy(input));
        let message = claude_denial(&out.stdout);
        assert!(message.contains("could not check"), "{message}");
        assert!(!message.contains('/'), "no host paths: {message}");
    }
}

#[test]
fn a_broken_catalog_refuses_guarded_programs_only() {
    let dir = Scratch::new("broken-catalog");
    let catalog = dir.write(
        "catalog.toml",
        "version = 1\n[[machine]]\nname = \"atlas\"\nbogus = 1\n",
    );
    for catalog in [catalog, dir.path("missing.toml")] {
        let args = with_paths(&catalog, &dir.path("audit.db"), &["hook"]);
        let out = run(&strs(&args), &[], &bash_event("ssh atlas uptime"));
        assert_eq!(out.code, 2);
        let message = claude_denial(&out.stdout);
        // Issue 14: addressed to the operator, with the file and its first error.
        assert!(
            message.starts_with("Decided by mesh-guard, not an error: do not retry or work round it. Tell the operator: mesh-guard's catalog cannot be used: ")
                && message.contains(&*catalog.to_string_lossy()),
            "{message}"
        );
        let out = run(
            &strs(&args),
            &[],
            &bash_event("cargo build --release && ls target"),
        );
        assert_eq!((out.code, out.stdout.as_str()), (0, ""));
    }
}

#[test]
fn tools_other_than_bash_pass_and_writes_to_the_guard_are_refused() {
    let dir = Scratch::new("tools");
    let catalog = example_catalog();
    let args = with_paths(&catalog, &dir.path("audit.db"), &["hook"]);
    let hook = strs(&args);
    let read = br#"{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/etc/hosts"}}"#;
    assert_eq!(run(&hook, &[], read).code, 0);
    let write = serde_json::json!({"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path": catalog, "content":"version = 1\n"}});
    let out = run(&hook, &[], write.to_string().as_bytes());
    assert_eq!(out.code, 2);
    assert!(claude_denial(&out.stdout).contains("guard's own files"));
    let export = br#"{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/tmp/x/.bashrc","old_string":"a","new_string":"export MESH_GUARD_OVERRIDE=yes"}}"#;
    assert_eq!(run(&hook, &[], export).code, 2);
    let ordinary = br#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/tmp/x/src/main.rs","content":"fn main() {}"}}"#;
    assert_eq!(run(&hook, &[], ordinary).code, 0);
}

#[test]
fn a_panic_inside_becomes_a_refusal() {
    let dir = Scratch::new("panic");
    let args = with_paths(&example_catalog(), &dir.path("a.db"), &["hook"]);
    let env = [("MESH_GUARD_DEBUG_PANIC", "1".to_string())];
    let out = run_env(&strs(&args), &env, &bash_event("ls"));
    assert_eq!(out.code, 2);
    let message = claude_denial(&out.stdout);
    assert!(message.contains("internal error"), "{message}");
    assert!(
        !out.stderr.contains("panicked"),
        "no panic report reaches the agent: {}",
        out.stderr
    );
}

#[test]
fn a_hang_becomes_a_refusal_at_the_deadline() {
    // A hook whose input never ends hangs in its read: the deadline must still refuse.
    let dir = Scratch::new("hang");
    let mut child = std::process::Command::new(BIN)
        .args(strs(&with_paths(
            &example_catalog(),
            &dir.path("a.db"),
            &["hook"],
        )))
        .env("MESH_GUARD_DEBUG_DEADLINE_MS", "300")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn mesh-guard");
    // Held open, never written: the read cannot finish.
    let stdin = child.stdin.take();
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "the hook hung past its deadline"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message = claude_denial(&stdout);
    assert!(message.contains("took too long"), "{message}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(&message));
}

#[test]
fn sixty_four_wrappers_and_nothing_after_them_is_checked_without_a_panic() {
    let catalog = example_catalog();
    let only_wrappers = "nohup ".repeat(64);
    let out = run(
        &["check", "--", only_wrappers.trim()],
        &[("MESH_GUARD_CATALOG", &catalog)],
        b"",
    );
    assert_eq!(out.code, 0, "nothing runs, so it passes: {}", out.stderr);
    assert!(!out.stderr.contains("internal error"), "{}", out.stderr);
    // Past the bound the program is not looked for: refused, never a panic.
    let deep = format!("{}ssh atlas", "nohup ".repeat(64));
    let out = run(
        &["check", "--", &deep],
        &[("MESH_GUARD_CATALOG", &catalog)],
        b"",
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("internal error"), "{}", out.stderr);
}

/// The hook run by `command` (its arguments, environment and limits already set) on
/// `event`: its exit code, or none when a signal ended it, and its stdout.
fn spawned_hook(command: &mut std::process::Command, event: &[u8]) -> (Option<i32>, String) {
    use std::io::Write;
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(event).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Memory that runs out ends in a refusal, not Rust's abort (exit 134, which agents take for
/// a failed hook and run the command). A command of 4,000 words needs far more than the 64 MiB
/// of address space the hook is given here.
#[test]
fn memory_that_runs_out_is_a_refusal() {
    use std::os::unix::process::CommandExt;
    let home = tempfile::tempdir().unwrap();
    let words: Vec<String> = (0..4000).map(|i| format!("w{i}")).collect();
    let event = serde_json::json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": format!("ssh atlas {}", words.join(" "))},
    });
    let mut command = std::process::Command::new(BIN);
    command
        .args(strs(&with_paths(
            &example_catalog(),
            &home.path().join("audit.db"),
            &["hook"],
        )))
        .env("HOME", home.path())
        .env_remove("MESH_GUARD_CATALOG")
        .env_remove("MESH_GUARD_OVERRIDE");
    // SAFETY: setrlimit is async-signal-safe and touches only the child.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64 << 20,
                rlim_max: 64 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (code, stdout) = spawned_hook(&mut command, event.to_string().as_bytes());
    assert_eq!(code, Some(2), "stdout {stdout}");
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecision"], "deny",
        "{stdout}"
    );
}

/// A user `/etc/passwd` does not list, with no HOME: the guard must not ask NSS's modules for
/// a home (a static glibc binary crashed in `libnss_systemd` there, a crash the agent takes
/// for a failed hook). Needs root, to run as such a user.
#[test]
fn a_user_with_no_home_anywhere_still_gets_an_answer() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("NOT CHECKED: running as a user /etc/passwd does not list needs root");
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    std::fs::set_permissions(cwd.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // The checkout may sit where only its owner may enter (`/root`, a 0700 home): the
    // other user runs copies of the binary and the catalog from a directory it can reach.
    let reachable = reachable_by_every_user(&[std::path::Path::new(BIN), &example_catalog()]);
    let (bin, catalog) = (&reachable.files[0], &reachable.files[1]);
    let mut command = std::process::Command::new(bin);
    command
        .args(["--catalog", catalog.to_str().unwrap(), "hook"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir(cwd.path());
    // SAFETY: setgroups, setgid and setuid are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(54_321) != 0
                || libc::setuid(54_321) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let event = br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ssh atlas journalctl -u mesh-controller"}}"#;
    let (code, stdout) = spawned_hook(&mut command, event);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stdout.contains("\"deny\""), "{stdout}");
}
