//! Refusals the agent can act on: ranking, filled usages, "one must be created", and the
//! operators' `search` and `instead-of` views (issue 5).

mod common;
use common::*;

/// A small catalog whose tools exercise each tie-break.
const RANKING: &str = r#"
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
name = "logs"
usage = "mesh logs <module>"
replaces = ["docker logs"]
[[verb]]
name = "logs_follow"
usage = "mesh logs <module> --follow"
replaces = ["docker logs -f <container>"]
[[verb]]
name = "any_docker"
usage = "mesh docker <container>"
replaces = ["docker <verb> <container>"]
[[verb]]
name = "first"
usage = "mesh first"
replaces = ["journalctl"]
[[verb]]
name = "second"
usage = "mesh second"
replaces = ["journalctl"]
"#;

fn check(catalog: &std::path::Path, command: &str) -> serde_json::Value {
    let dir = Scratch::new("instead-check");
    let out = call(
        &["check", "--json", command],
        &[
            ("MESH_GUARD_CATALOG", catalog),
            ("MESH_GUARD_DB", &dir.path("a.db")),
        ],
        b"",
    );
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|_| panic!("{command}: {} {}", out.stdout, out.stderr))
}

fn tools(json: &serde_json::Value) -> Vec<String> {
    json["instead"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn ranking_tie_breaks() {
    let dir = Scratch::new("ranking");
    let catalog = dir.write("catalog.toml", RANKING);
    // More words first: `docker logs -f <container>` (4) beats `docker <verb> <container>` (3),
    // which beats the two-word entries.
    let json = check(&catalog, "docker logs -f mesh-controller");
    assert_eq!(tools(&json), ["logs_follow", "any_docker", "ctl_logs"]);
    // Same words: more literal words first (`docker logs` has 2 literals, `docker <verb> <container>` 1 of 3).
    let json = check(&catalog, "docker logs mesh-controller");
    assert_eq!(tools(&json)[0], "any_docker", "three words beat two");
    assert_eq!(
        tools(&json)[1..],
        ["ctl_logs", "logs"],
        "a module's own tool before a seat verb"
    );
    // Everything equal: catalog order.
    let json = check(&catalog, "journalctl -u mesh-controller");
    assert_eq!(tools(&json), ["first", "second"]);
}

#[test]
fn usages_are_filled_from_what_the_command_named() {
    let json = check(
        &example_catalog(),
        "ssh atlas journalctl -u mesh-controller",
    );
    assert_eq!(
        json["instead"][0]["usage"],
        "mesh logs controller --machine atlas"
    );
    let json = check(
        &example_catalog(),
        "docker exec -it mesh-postgres psql -U app",
    );
    assert_eq!(json["instead"][0]["usage"], "mesh db shell postgres");
    // A module on two machines: the machine is not known, and its optional part is left out.
    let json = check(&example_catalog(), "docker logs mesh-gateway");
    assert_eq!(json["instead"][0]["usage"], "mesh logs gateway");
}

/// Every rule family, with a tool in the catalog and without one.
#[test]
fn every_family_with_and_without_a_tool() {
    let dir = Scratch::new("families");
    let bare = dir.write(
        "bare.toml",
        "version = 1\n[mesh]\ndomains = [\"mesh.lan\"]\n[[machine]]\nname = \"atlas\"\n[[module]]\nname = \"app\"\nmachines = [\"atlas\"]\ncontainers = [\"app-1\"]\nunits = [\"app.service\"]\n",
    );
    let cases = [
        (
            "ssh atlas uptime",
            "ssh <machine> uptime",
            "mesh exec atlas -- uptime",
        ),
        (
            "scp f atlas:/tmp",
            "scp <machine>",
            "mesh copy f atlas:/tmp",
        ),
        (
            "docker -H ssh://atlas ps",
            "docker ps",
            "mesh status <module> --machine atlas",
        ),
        (
            "docker logs app-1",
            "docker logs <container>",
            "mesh logs app --machine atlas",
        ),
        (
            "journalctl -u app",
            "journalctl -u <unit>",
            "mesh logs app --machine atlas",
        ),
        (
            "systemctl restart app",
            "systemctl restart <unit>",
            "mesh restart app --machine atlas",
        ),
        // A D-Bus call ranks as the systemctl command its method comes to.
        (
            "busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
             org.freedesktop.systemd1.Manager RestartUnit ss app.service replace",
            "systemctl restart <unit>",
            "mesh restart app --machine atlas",
        ),
        (
            "dbus-send --system --dest=org.freedesktop.systemd1 \
             /org/freedesktop/systemd1/unit/app_2eservice org.freedesktop.systemd1.Unit.TryRestart",
            "systemctl try-restart <unit>",
            "mesh restart app --machine atlas",
        ),
        (
            "gdbus call --system -d org.freedesktop.systemd1 -o /org/freedesktop/systemd1 \
             -m org.freedesktop.systemd1.Manager.ReloadOrRestartUnit \"'app.service'\" \"'replace'\"",
            "systemctl reload-or-restart <unit>",
            "mesh restart app --machine atlas",
        ),
    ];
    let with_tools = dir.write(
        "tools.toml",
        &format!(
            "{}\n{}",
            std::fs::read_to_string(&bare).unwrap(),
            r#"
[[verb]]
name = "exec"
usage = "mesh exec <machine> -- <command>"
replaces = ["ssh <machine>"]
[[verb]]
name = "copy"
usage = "mesh copy <source> <machine>:<path>"
replaces = ["scp"]
[[verb]]
name = "status"
usage = "mesh status <module> [--machine <machine>]"
replaces = ["docker ps"]
[[verb]]
name = "logs"
usage = "mesh logs <module> [--machine <machine>]"
replaces = ["docker logs <container>", "journalctl -u <unit>"]
[[verb]]
name = "restart"
usage = "mesh restart <module> [--machine <machine>]"
replaces = ["systemctl restart <unit>"]
"#
        ),
    );
    for (command, shape, usage) in cases {
        let none = check(&bare, command);
        let message = none["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Decided by mesh-guard, not an error: do not retry or work round it. No mesh tool does `{shape}` yet: one must be created."
            )),
            "{command}: {message}"
        );
        let found = check(&with_tools, command);
        let message = found["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("Decided by mesh-guard, not an error: do not retry or work round it. Use the mesh's own tool instead: `{usage}`")),
            "{command}: {message}"
        );
        for m in [none["message"].as_str().unwrap(), message] {
            assert!(m.chars().count() < 1000 && m.contains("Nothing else is disabled"));
            assert!(
                !m.contains(&*dir.0.to_string_lossy())
                    && !m.contains("/root")
                    && !m.contains("/home"),
                "no host paths: {m}"
            );
        }
    }
}

#[test]
fn search_ranks_and_says_why() {
    let env = [("MESH_GUARD_CATALOG", example_catalog())];
    let env: Vec<_> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let out = call(
        &[
            "search",
            "ssh",
            "atlas",
            "journalctl",
            "-u",
            "mesh-controller",
        ],
        &env,
        b"",
    );
    assert_eq!(out.code, 0);
    let first = out.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("mesh logs controller --machine atlas\tlogs"),
        "{}",
        out.stdout
    );
    assert!(
        first.contains("replaces `ssh <machine> journalctl`"),
        "{first}"
    );
    let out = call(&["search", "docker kill mesh-controller"], &env, b"");
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("one must be created"));
}

/// The table fills what each tool alone determines, as a refusal would (issue 30): a
/// module's own tool knows its module.
#[test]
fn instead_of_table_in_markdown_and_json() {
    let env = [("MESH_GUARD_CATALOG", example_catalog())];
    let env: Vec<_> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let md = call(&["instead-of"], &env, b"");
    assert_eq!(md.code, 0);
    assert!(
        md.stdout
            .starts_with("| instead of | use | tool |\n|---|---|---|\n")
    );
    assert!(
        md.stdout
            .contains("| `docker exec <container> psql` | `mesh db shell postgres` | db_shell |"),
        "{}",
        md.stdout
    );
    let json = call(&["instead-of", "--format", "json"], &env, b"");
    let list: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|r| r["instead_of"] == "scp" && r["tool"] == "copy")
    );
}

#[test]
fn catalog_check_names_file_and_line() {
    let dir = Scratch::new("catalog-errors");
    let catalog = dir.write(
        "mesh/b.toml",
        "[[machine]]\nname = \"atlas\"\n\n[[machine]]\nname = \"ATLAS.\"\n",
    );
    dir.write("mesh/a.toml", "version = 1\n[forge]\nmachine = \"nowhere\"\ngit_user = \"git\"\n[mesh]\nnetworks = [\"10.0.0.0/33\"]\n");
    let _ = catalog;
    let out = call(
        &["catalog", "check"],
        &[("MESH_GUARD_CATALOG", &dir.path("mesh"))],
        b"",
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("b.toml:5: duplicate machine name `ATLAS.`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("a.toml:3: the forge machine `nowhere` is not a machine"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("a.toml:6: `10.0.0.0/33` is not a network"),
        "{}",
        out.stderr
    );
    let out = call(
        &["catalog", "check"],
        &[("MESH_GUARD_CATALOG", &example_catalog())],
        b"",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let unknown = dir.write(
        "unknown.toml",
        "version = 1\n[[machine]]\nname = \"a\"\nalias = [\"b\"]\n",
    );
    let out = call(
        &["catalog", "check"],
        &[("MESH_GUARD_CATALOG", &unknown)],
        b"",
    );
    assert!(
        out.code == 1 && out.stderr.contains("unknown.toml:4"),
        "{}",
        out.stderr
    );
}

/// `search ls`: nothing needs replacing, which is not "one must be created"; both list no
/// tool, so both exit 1 (decision 0013). `--json` says which.
#[test]
fn search_json_and_nothing_to_replace() {
    let env = [("MESH_GUARD_CATALOG", example_catalog())];
    let env: Vec<_> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let out = call(&["search", "ls"], &env, b"");
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("Nothing needs replacing"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("one must be created"));

    let out = call(&["search", "--json", "ssh atlas uptime"], &env, b"");
    assert_eq!(out.code, 0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "found");
    assert_eq!(json["tools"][0]["usage"], "mesh exec atlas -- uptime");
    assert_eq!(json["tools"][0]["tool"], "exec");

    let out = call(
        &["search", "--json", "docker kill mesh-controller"],
        &env,
        b"",
    );
    assert_eq!(out.code, 1);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "create");
    assert_eq!(json["shape"], "docker kill <container>");

    let out = call(&["search", "--json", "ls"], &env, b"");
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["outcome"], "nothing");
}

/// Under the plugin (`hook --mcp`) a refusal points at `mesh_search`; without the server it
/// does not mention a tool the agent lacks. Both stay under 1,000 characters.
#[test]
fn the_refusal_mentions_mesh_search_only_with_the_server() {
    let dir = Scratch::new("mcp-hint");
    let db = dir.path("a.db");
    let event = bash_event("ssh atlas journalctl -u mesh-controller");
    let hook = |args: &[&str]| {
        call(
            &strs(&with_paths(&example_catalog(), &db, args)),
            &[],
            &event,
        )
    };
    let with = hook(&["hook", "--agent", "claude", "--mcp"]);
    let without = hook(&["hook", "--agent", "claude"]);
    assert_eq!((with.code, without.code), (2, 2));
    let (with, without) = (claude_denial(&with.stdout), claude_denial(&without.stdout));
    assert_eq!(
        with,
        "Decided by mesh-guard, not an error: do not retry or work round it. Use the mesh's own tool instead: `mesh logs controller --machine atlas` (or `mesh exec atlas -- journalctl -u mesh-controller`). mesh-guard refused `ssh atlas journalctl -u mesh-controller`: it reaches mesh machine `atlas` over ssh. Before a shell command, ask the MCP tool `mesh_search` which mesh tool replaces it. Nothing else is disabled: other commands and tools still work."
    );
    assert!(!without.contains("mesh_search"), "{without}");
    assert!(with.chars().count() < 1000);
    let env = [("MESH_GUARD_CATALOG", example_catalog())];
    let env: Vec<_> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let md = call(&["instead-of", "--mcp"], &env, b"");
    assert!(md.stdout.contains("`mesh_search`"), "{}", md.stdout);
    let plain = call(&["instead-of"], &env, b"");
    assert!(!plain.stdout.contains("mesh_search"));
}

#[test]
fn a_refusal_found_in_an_unknown_programs_arguments_says_so() {
    let json = check(&example_catalog(), "hyperfine 'ssh atlas uptime'");
    assert_eq!(json["decision"], "refuse");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.contains("it is an argument of `hyperfine`, a program mesh-guard does not know"),
        "{message}"
    );
    // A program the rules know is refused for what it is, with nothing about arguments.
    let json = check(&example_catalog(), "ssh atlas uptime");
    assert!(!json["message"].as_str().unwrap().contains("argument of"));
}

/// Issue 40, item 5: `<command>` in a `replaces` shape is the whole remote command, and a
/// usage the command fills completely ranks ahead of one it leaves open.
const LAB: &str = r#"
version = 1
[[machine]]
name = "db1"
[[machine]]
name = "web1"
[[verb]]
name = "lab_run"
usage = "lab run <machine> <script> -- <command>"
replaces = ["ssh <machine> <command>"]
[[verb]]
name = "lab_exec"
usage = "lab exec <machine> -- <command>"
replaces = ["ssh <machine> <command>"]
[[verb]]
name = "lab_shell"
usage = "lab shell <machine>"
replaces = ["ssh <machine>"]
"#;

#[test]
fn a_command_placeholder_binds_the_whole_remote_command() {
    let dir = Scratch::new("lab");
    let catalog = dir.write("catalog.toml", LAB);
    let json = check(&catalog, "ssh db1 df -h");
    assert_eq!(json["instead"][0]["tool"], "lab_exec", "{json}");
    // Every word of it, each shell-quoted as the other surfaces fill `<command>`: pasted,
    // it runs `df -h`, never `df` alone.
    assert_eq!(json["instead"][0]["usage"], "lab exec db1 -- df -h");
    let json = check(&catalog, "ssh -J web1 db1 'cd /srv && make -j4'");
    assert_eq!(
        json["instead"][0]["usage"],
        "lab exec db1 -- 'cd /srv && make -j4'"
    );
}

#[test]
fn a_usage_filled_completely_ranks_ahead_of_one_left_open() {
    let dir = Scratch::new("lab-rank");
    let catalog = dir.write("catalog.toml", LAB);
    // lab_run matches as many words and comes first in the catalog, but leaves `<script>`
    // open: both filled ones come before it.
    let json = check(&catalog, "ssh db1 uptime");
    assert_eq!(tools(&json), ["lab_exec", "lab_shell", "lab_run"], "{json}");
}
