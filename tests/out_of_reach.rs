//! What the guard trusts must be out of the agent's reach (issue 42, decisions 0069 and
//! 0070): the signers list, the binary the launcher runs, and a guard file under any of its
//! names. The hook runs here as uid 54321, an account that owns none of the guard's files
//! unless a test gives it one (which needs root to arrange).

mod common;
use common::grant;
use common::*;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};

const AGENT: u32 = 54_321;

/// A change to a layout's files.
type Change = dyn Fn(&Layout);

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// `bin ARGS` run as the agent's account, with `stdin`, and only `env` and a fixed PATH.
fn as_agent(bin: &Path, args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(bin);
    command
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .current_dir("/")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setgroups, setgid and setuid are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setgid(AGENT) != 0
                || libc::setuid(AGENT) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// An operator's catalog and signers list, root's and readable by all, a record the agent's
/// account may write, and the binary where that account can run it.
struct Layout {
    op: grant::Operator,
    etc: PathBuf,
    signers: PathBuf,
    db: PathBuf,
    bin: Reachable,
}

impl Layout {
    fn new(name: &str) -> Layout {
        let op = grant::Operator::new(name);
        chmod(&op.dir.0, 0o755);
        let etc = op.catalog.parent().unwrap().to_path_buf();
        chmod(&etc, 0o755);
        let signers = etc.join("allowed_signers");
        chmod(&signers, 0o644);
        chmod(&op.catalog, 0o644);
        let data = op.dir.path("data");
        std::fs::create_dir(&data).unwrap();
        chown(&data, Some(AGENT), Some(AGENT)).unwrap();
        let bin = reachable_by_every_user(&[Path::new(BIN)]);
        Layout {
            etc,
            signers,
            db: data.join("audit.db"),
            bin,
            op,
        }
    }

    fn hook(&self, grant: &str, command: &str) -> Output {
        let (catalog, db) = (self.op.catalog.to_str().unwrap(), self.db.to_str().unwrap());
        as_agent(
            &self.bin.files[0],
            &["--catalog", catalog, "--db", db, "hook"],
            &[("MESH_GUARD_OVERRIDE", grant)],
            &bash_event(command),
        )
    }

    fn check(&self, grant: &str, command: &str) -> Output {
        let catalog = self.op.catalog.to_str().unwrap();
        as_agent(
            &self.bin.files[0],
            &[
                "--catalog",
                catalog,
                "check",
                "--override",
                grant,
                "--",
                command,
            ],
            &[],
            b"",
        )
    }

    /// The kind and reason of the record's last row, read as root.
    fn last_row(&self) -> (String, String) {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        conn.query_row(
            "SELECT kind, reason FROM events ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }
}

#[test]
fn a_signers_list_the_agents_account_could_change_signs_for_no_one() {
    if !is_root() {
        eprintln!("NOT CHECKED: files owned by another account, and a hook run as one, need root");
        return;
    }
    let layout = Layout::new("reach-signers");
    let granted = layout.op.grant(&["--reason", "incident 4711"]);

    // Root's list, in root's directories: the operator's grant is honoured, as `check` says.
    let out = layout.hook(&granted, "ssh atlas uptime");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert_eq!(layout.last_row().0, "override");
    let preview = layout.check(&granted, "ssh atlas uptime");
    assert!(
        preview.stdout.contains("covers the whole session"),
        "{}{}",
        preview.stdout,
        preview.stderr
    );

    // Each way the agent's account could change the list: the same grant is refused, the
    // refusal says why and how to fix it, the attempt is recorded, and `check` agrees.
    let file_theirs = |l: &Layout| chown(&l.signers, Some(AGENT), None).unwrap();
    let dir_theirs = |l: &Layout| chown(&l.etc, Some(AGENT), None).unwrap();
    let dir_group_writable = |l: &Layout| chmod(&l.etc, 0o775);
    let file_writable = |l: &Layout| chmod(&l.signers, 0o646);
    let cases: [(&Change, &str); 4] = [
        (
            &file_theirs,
            "allowed_signers beside the catalog is owned by the account the guard runs as (uid 54321)",
        ),
        (
            &dir_theirs,
            "a directory above allowed_signers beside the catalog is owned by the account the guard runs as (uid 54321)",
        ),
        (
            &dir_group_writable,
            "a directory above allowed_signers beside the catalog is writable by its group or others (mode 775)",
        ),
        (
            &file_writable,
            "allowed_signers beside the catalog is writable by its group or others (mode 646)",
        ),
    ];
    for (make_reachable, why) in cases {
        make_reachable(&layout);
        let out = layout.hook(&granted, "ssh atlas uptime");
        assert_eq!(out.code, 2, "{why}: {}", out.stdout);
        let denial = claude_denial(&out.stdout);
        assert!(
            denial.contains(&format!("The operator's override was not honoured: {why}"))
                && denial.contains(
                    "sudo install -D -o root -g root -m 0644 allowed_signers /etc/mesh-guard/allowed_signers"
                ),
            "{denial}"
        );
        let (kind, reason) = layout.last_row();
        assert_eq!(kind, "override-attempt");
        assert!(reason.contains(why), "{reason}");
        let preview = layout.check(&granted, "ssh atlas uptime");
        assert_eq!(preview.code, 1, "{}", preview.stdout);
        assert!(
            preview.stdout.contains("the grant is not honoured") && preview.stdout.contains(why),
            "{}",
            preview.stdout
        );
        // Back to root's, mode 0644 and 0755: honoured again.
        chown(&layout.signers, Some(0), None).unwrap();
        chown(&layout.etc, Some(0), None).unwrap();
        chmod(&layout.etc, 0o755);
        chmod(&layout.signers, 0o644);
        assert_eq!(layout.hook(&granted, "ssh atlas uptime").code, 0, "{why}");
    }
}

/// A list that links to root's list is root's list: what is read is what is judged.
#[test]
fn a_link_to_a_root_owned_list_is_judged_by_the_list_it_names() {
    if !is_root() {
        eprintln!("NOT CHECKED: a hook run as another account needs root");
        return;
    }
    let layout = Layout::new("reach-link");
    let granted = layout.op.grant(&["--reason", "x"]);
    let elsewhere = layout.op.dir.path("agents");
    std::fs::create_dir(&elsewhere).unwrap();
    chown(&elsewhere, Some(AGENT), None).unwrap();
    // The agent's own list, and the catalog's list a link to it: refused.
    let own = elsewhere.join("list");
    std::fs::copy(&layout.signers, &own).unwrap();
    chown(&own, Some(AGENT), None).unwrap();
    std::fs::rename(&layout.signers, layout.etc.join("root-list")).unwrap();
    std::os::unix::fs::symlink(&own, &layout.signers).unwrap();
    let out = layout.hook(&granted, "ssh atlas uptime");
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(
        claude_denial(&out.stdout).contains("is owned by the account the guard runs as"),
        "{}",
        out.stdout
    );
    // Pointed at root's list instead: honoured.
    std::fs::remove_file(&layout.signers).unwrap();
    std::os::unix::fs::symlink(layout.etc.join("root-list"), &layout.signers).unwrap();
    assert_eq!(layout.hook(&granted, "ssh atlas uptime").code, 0);
}

/// The launcher runs a root-owned binary before one the account could write, whatever
/// their order; with no root-owned one, the first it finds.
#[test]
fn the_launcher_prefers_a_root_owned_binary_over_an_account_one() {
    if !is_root() {
        eprintln!("NOT CHECKED: a binary owned by another account needs root to make");
        return;
    }
    let dir = Scratch::new("reach-launcher");
    let script = |name: &str| {
        let path = dir.write(
            &format!("{name}/bin/mesh-guard"),
            &format!("#!/bin/sh\necho {name}\n"),
        );
        chmod(&path, 0o755);
        chmod(path.parent().unwrap(), 0o755);
        chmod(path.parent().unwrap().parent().unwrap(), 0o755);
        path
    };
    let account = script("account");
    chown(account.parent().unwrap(), Some(AGENT), None).unwrap();
    let system = script("system");
    let launcher = launcher_looking_in(&dir, &[&account, &system]);
    let run = || {
        let out = std::process::Command::new("/bin/sh")
            .arg(&launcher)
            .arg("mcp")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(), "system");
    // A root-owned file in a directory others may write is within their reach.
    chmod(system.parent().unwrap(), 0o777);
    assert_eq!(run(), "account");
    chmod(system.parent().unwrap(), 0o755);
    chown(&system, Some(AGENT), None).unwrap();
    assert_eq!(run(), "account", "neither is root's: the first place");
    chown(&system, Some(0), None).unwrap();
    std::fs::remove_file(&account).unwrap();
    assert_eq!(run(), "system");
}

/// A guard's home: its config directory with a catalog and a signers list.
fn guard_home(dir: &Scratch) -> (PathBuf, PathBuf, PathBuf) {
    let home = dir.path("home");
    let config = home.join(".config/mesh-guard");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(example_catalog(), config.join("catalog.toml")).unwrap();
    std::fs::write(config.join("allowed_signers"), "").unwrap();
    let signers = config.join("allowed_signers");
    (home, config.join("catalog.toml"), signers)
}

fn check_in(home: &Path, catalog: &Path, db: &Path, command: &str) -> Output {
    call_env(
        &[
            "--catalog",
            catalog.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "check",
            "--",
            command,
        ],
        &[("HOME", home.to_string_lossy().into_owned())],
        b"",
    )
}

#[test]
fn a_guard_file_written_through_another_name_is_still_the_guards() {
    let dir = Scratch::new("reach-names");
    let (home, catalog, signers) = guard_home(&dir);
    let db = dir.path("audit.db");
    let check = |command: &str| check_in(&home, &catalog, &db, command).code;
    // A second name, made before the session: writing it writes the list.
    let second = dir.path("h");
    std::fs::hard_link(&signers, &second).unwrap();
    let refused = format!("echo 'agent ssh-ed25519 AAAA' >> {}", second.display());
    assert_eq!(check(&refused), 1, "{refused}");
    assert_eq!(check(&format!("sed -i 1d {}", second.display())), 1);
    // Another file with two names is no guard file.
    let other = dir.write("notes", "");
    std::fs::hard_link(&other, dir.path("notes2")).unwrap();
    assert_eq!(
        check(&format!("echo x >> {}", dir.path("notes2").display())),
        0
    );
    assert_eq!(
        check(&format!("echo x >> {}", dir.path("fresh").display())),
        0
    );
    // Making a second name is refused; a symbolic one is not (a write through it is seen).
    for command in [
        "ln ~/.config/mesh-guard/allowed_signers /tmp/h",
        "ln -f -- ~/.config/mesh-guard/allowed_signers /tmp/h",
        "link ~/.config/mesh-guard/allowed_signers /tmp/h",
        "cp -al ~/.config /tmp/backup",
        "cd ~/.config/mesh-guard && ln allowed_signers /tmp/h",
    ] {
        assert_eq!(check(command), 1, "{command}");
    }
    assert_eq!(
        check("ln -s ~/.config/mesh-guard/allowed_signers /tmp/s"),
        0
    );
    assert_eq!(check("ln notes /tmp/n"), 0);
}

#[test]
fn cd_goes_where_cdpath_takes_it() {
    let dir = Scratch::new("reach-cdpath");
    let (home, catalog, _) = guard_home(&dir);
    std::fs::create_dir_all(home.join(".config/other")).unwrap();
    let db = dir.path("audit.db");
    let check = |command: &str| check_in(&home, &catalog, &db, command).code;
    for command in [
        "CDPATH=~/.config cd mesh-guard && echo k >> allowed_signers",
        "export CDPATH=/nonexistent:~/.config; cd mesh-guard; echo k >> allowed_signers",
        "CDPATH=~/.config pushd mesh-guard >/dev/null && tee -a allowed_signers < k",
    ] {
        assert_eq!(check(command), 1, "{command}");
    }
    // CDPATH is not read for `./DIR`, and elsewhere the name is nobody's.
    assert_eq!(
        check("CDPATH=~/.config cd other && echo k >> allowed_signers"),
        0
    );
    assert_eq!(
        check("CDPATH=~/.config cd ./mesh-guard && echo k >> allowed_signers"),
        0
    );
}

#[test]
fn every_audit_format_draws_the_control_characters_of_a_command() {
    let dir = Scratch::new("reach-csv");
    let db = dir.path("audit.db");
    let command = "ssh atlas uptime # \u{1b}[2J\u{1b}]0;owned\u{7}\rok \u{202e}x \u{9b}1m";
    let hook = call_env(
        &strs(&with_paths(&example_catalog(), &db, &["hook"])),
        &[],
        &bash_event(command),
    );
    assert_eq!(hook.code, 2, "{}", hook.stdout);
    let audit = |format: &str| {
        let out = call_env(
            &["--db", db.to_str().unwrap(), "audit", "--format", format],
            &[],
            b"",
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let csv = audit("csv");
    let body = csv.replace("\r\n", "\n");
    for c in ['\u{1b}', '\u{7}', '\r', '\u{202e}', '\u{9b}'] {
        assert!(!body.contains(c), "{c:?} raw in the CSV: {csv:?}");
    }
    assert!(
        csv.contains("ssh atlas uptime # ␛[2J␛]0;owned␇␍ok \u{fffd}x \u{fffd}1m"),
        "{csv:?}"
    );
    for format in ["json", "table"] {
        let text = audit(format);
        for c in ['\u{1b}', '\u{7}', '\r', '\u{202e}', '\u{9b}'] {
            assert!(!text.contains(c), "{c:?} raw in {format}: {text:?}");
        }
    }
    // JSON escapes without loss: the command reads back as recorded.
    let json: serde_json::Value = serde_json::from_str(&audit("json")).unwrap();
    assert_eq!(json[0]["command"], command);
    let export = call_env(
        &[
            "--db",
            db.to_str().unwrap(),
            "audit",
            "export",
            "--format",
            "jsonl",
        ],
        &[],
        b"",
    );
    assert!(!export.stdout.contains('\u{202e}'), "{:?}", export.stdout);
    let line: serde_json::Value = serde_json::from_str(export.stdout.trim()).unwrap();
    assert_eq!(line["command"], command);
}

/// `doctor` says, per file the guard trusts, whether the agent's user could change it, and
/// which signers list the hook would use.
#[test]
fn doctor_says_which_trusted_files_the_agents_user_could_change() {
    if !is_root() {
        eprintln!("NOT CHECKED: files owned by another account need root to make");
        return;
    }
    let Some(nobody) = std::fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("nobody:"))
        .map(|l| l.split(':').nth(2).unwrap().parse::<u32>().unwrap())
    else {
        eprintln!("NOT CHECKED: no user nobody in /etc/passwd");
        return;
    };
    let layout = Layout::new("reach-doctor");
    let doctor = || {
        let out = run_env(
            &[
                "--catalog",
                layout.op.catalog.to_str().unwrap(),
                "doctor",
                "--json",
                "--user",
                "nobody",
            ],
            &[],
            b"",
        );
        serde_json::from_str::<serde_json::Value>(&out.stdout).expect(&out.stdout)
    };
    let signers_entry = |report: &serde_json::Value| {
        report["trusted_files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["file"] == "allowed_signers")
            .cloned()
            .unwrap()
    };
    let report = doctor();
    let entry = signers_entry(&report);
    assert_eq!(entry["agent_can_change"], false, "{entry}");
    let catalog = report["trusted_files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == "catalog")
        .cloned()
        .unwrap();
    assert_eq!(catalog["agent_can_change"], false, "{catalog}");
    assert_eq!(
        report["paths"]["allowed_signers"],
        layout.signers.to_str().unwrap()
    );

    chown(&layout.etc, Some(nobody), None).unwrap();
    let report = doctor();
    let entry = signers_entry(&report);
    assert_eq!(entry["agent_can_change"], true, "{entry}");
    assert!(
        entry["meaning"]
            .as_str()
            .unwrap()
            .contains("could list its own key and sign its own override grant"),
        "{entry}"
    );
    let findings = report["findings"].to_string();
    assert!(
        findings.contains("is not trusted") && findings.contains("/etc/mesh-guard/allowed_signers"),
        "{findings}"
    );
    assert!(report["paths"]["allowed_signers"].is_null(), "{report}");
}
