//! In-process figures: `cargo bench` (or `cargo bench -- 10,1000` for some sizes only).
//!
//! A plain `harness = false` main rather than criterion: the figures wanted are a handful
//! of medians, and criterion would add a large dependency tree to every build of the
//! crate for no better answer. Each case runs many times, each run timed on its own, and
//! the median is reported (the median ignores the odd preempted run).

use mesh_guard::app;
use mesh_guard::catalog::{self, LazyCatalog};
use mesh_guard::config::Paths;
use mesh_guard::rules::Rules;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

fn machine(i: usize) -> String {
    format!("m{i:06}")
}

fn module(j: usize) -> String {
    format!("mod{j:05}")
}

/// The same catalog shape as `scripts/bench-hook` generates: one module per 10 machines
/// (two containers, two units and a tool each), six seat verbs plus one per 1000 machines.
fn generate(n: usize) -> String {
    use std::fmt::Write;
    let modules = (n / 10).max(1);
    let mut out = String::from(
        "version = 1\n\n[mesh]\ndomains = [\"mesh.lan\"]\nnetworks = [\"10.20.0.0/16\", \"fd00:20::/64\"]\n\n\
         [forge]\nmachine = \"forge\"\ngit_user = \"git\"\n\n\
         [[machine]]\nname = \"forge\"\naliases = [\"forge.mesh.lan\", \"10.20.0.2\"]\n\n",
    );
    for i in 0..n {
        let m = machine(i);
        let _ = writeln!(
            out,
            "[[machine]]\nname = \"{m}\"\naliases = [\"{m}.dc1.example\", \"10.{}.{}.{}\"]\n",
            100 + i / 65536,
            i / 256 % 256,
            i % 256
        );
    }
    for j in 0..modules {
        let m = module(j);
        let _ = writeln!(
            out,
            "[[module]]\nname = \"{m}\"\nmachines = [\"{}\", \"{}\"]\ncontainers = [\"{m}-app\", \"{m}-db\"]\nunits = [\"{m}.service\", \"{m}-backup.timer\"]\n\n  \
             [[module.tool]]\n  name = \"{m}_status\"\n  usage = \"mesh {m} status\"\n  replaces = [\"{m}ctl status\", \"docker exec <container> {m}-cli status\"]\n",
            machine(j * 10 % n),
            machine((j * 10 + 1) % n)
        );
    }
    let mut verbs: Vec<(String, String, Vec<String>)> = [
        (
            "logs",
            "mesh logs <module> [--machine <machine>]",
            &[
                "journalctl",
                "docker logs",
                "ssh <machine> journalctl",
                "docker compose logs",
                "podman logs",
            ][..],
        ),
        (
            "exec",
            "mesh exec <machine> -- <command>",
            &[
                "ssh <machine>",
                "mosh <machine>",
                "autossh <machine>",
                "docker exec <container>",
            ],
        ),
        (
            "copy",
            "mesh copy <source> <machine>:<path>",
            &["scp", "rsync", "sftp <machine>", "docker cp"],
        ),
        (
            "status",
            "mesh status <module> [--machine <machine>]",
            &[
                "systemctl status",
                "docker ps",
                "docker inspect",
                "docker stats",
            ],
        ),
        (
            "restart",
            "mesh restart <module> [--machine <machine>]",
            &[
                "systemctl restart",
                "docker restart",
                "docker compose restart",
            ],
        ),
        (
            "top",
            "mesh top [--machine <machine>]",
            &["docker stats", "docker top", "ssh <machine> top"],
        ),
    ]
    .iter()
    .map(|(n, u, r)| {
        (
            n.to_string(),
            u.to_string(),
            r.iter().map(|s| s.to_string()).collect(),
        )
    })
    .collect();
    verbs.extend((0..n / 1000).map(|k| {
        (
            format!("verb{k:04}"),
            format!("mesh verb{k:04} <module>"),
            vec![format!("verb{k:04}-tool <module>")],
        )
    }));
    for (name, usage, replaces) in verbs {
        let replaces: Vec<String> = replaces.iter().map(|r| format!("\"{r}\"")).collect();
        let _ = writeln!(
            out,
            "[[verb]]\nname = \"{name}\"\nusage = \"{usage}\"\nreplaces = [{}]\n",
            replaces.join(", ")
        );
    }
    out
}

/// One command of each kind, aimed at the middle of an n-machine catalog.
fn commands(n: usize) -> Vec<(&'static str, String, bool)> {
    let (target, module) = (machine(n / 2), module((n / 10).max(1) / 2));
    let mut compound: Vec<String> = (0..6)
        .map(|k| {
            format!(
                "cd /src/project{k} && git pull --rebase && cargo build --release 2>&1 | tail -n 20"
            )
        })
        .collect();
    compound.extend(
        [
            "for f in src/*.rs; do grep -n TODO \"$f\" | sed 's/^/  /'; done",
            "docker ps --format '{{.Names}}' | sort",
            "find . -name '*.log' -mtime +7 -print0 | xargs -0 rm -f",
            "if [ -f Makefile ]; then make -j2 test; else echo none; fi",
            "ssh build@ci.example.com 'systemctl status runner'",
            "echo \"$(date -u +%FT%TZ) done\" >> build.log",
        ]
        .map(String::from),
    );
    let mut heredoc =
        String::from("git add -A && git commit -F - <<'EOF'\nFix the log shipping on the mesh\n\n");
    for k in 0..30 {
        let m = machine(k);
        heredoc.push_str(&format!(
            "- {m}: `ssh {m} journalctl -u {module}.service` no longer needed, use mesh logs\n"
        ));
    }
    heredoc.push_str("\nRefs: docker logs mesh-controller, scp, rsync\nEOF");
    vec![
        (
            "no guarded program",
            "cargo build --release 2>&1 | tail -n 20 && git status --short".into(),
            false,
        ),
        (
            "guarded elsewhere",
            "ssh deploy@build.example.com 'uptime && df -h'".into(),
            false,
        ),
        (
            "refusal",
            format!("ssh {target} journalctl -u {module}.service -n 50"),
            true,
        ),
        ("long compound", compound.join(" && "), false),
        ("heredoc commit", heredoc, false),
    ]
}

/// The median of `runs` timings of `f`, after a few untimed runs.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..runs.min(3) {
        f();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn show(what: &str, d: Duration) {
    let us = d.as_secs_f64() * 1e6;
    if us < 10_000.0 {
        println!("| {what} | {us:.1} µs |");
    } else {
        println!("| {what} | {:.1} ms |", us / 1000.0);
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other argument is a comma-separated size list.
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(|a| a.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![10, 1_000, 10_000, 100_000]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    println!("| case | median |\n|---|---:|");
    show(
        "rules: built-in rules parsed",
        median(200, || drop(black_box(Rules::load(None).unwrap()))),
    );
    let rules = Rules::load(None).unwrap();
    for &n in &sizes {
        std::fs::write(dir.path().join(format!("catalog-{n}.toml")), generate(n)).unwrap();
    }
    // A catalog written in the last two seconds is checked by content ("racy"); the
    // steady state a hook sees is an older file.
    std::thread::sleep(Duration::from_millis(2500));
    for n in sizes {
        let path = dir.path().join(format!("catalog-{n}.toml"));
        let paths = Paths::resolve(
            Some(path.clone()),
            Some(dir.path().join(format!("data-{n}/audit.db"))),
            None,
        );
        let runs = if n >= 100_000 {
            5
        } else if n >= 10_000 {
            20
        } else {
            200
        };
        show(
            &format!("{n} machines: catalog parsed from TOML"),
            median(runs, || drop(black_box(catalog::load(&path).unwrap()))),
        );
        let _ = paths.lazy_catalog().get().unwrap();
        show(
            &format!("{n} machines: cache opened (header, stamps)"),
            median(500, || {
                black_box(paths.lazy_catalog().get().is_ok());
            }),
        );
        bench_decide(n, &paths, &rules, &path);
    }
}

fn bench_decide(n: usize, paths: &Paths, rules: &Rules, path: &Path) {
    let loaded = LazyCatalog::ready(catalog::load(path).unwrap());
    for (kind, command, refuses) in commands(n) {
        let outcome = app::decide(paths, rules, &loaded, &command, None);
        let cached = app::decide(paths, rules, &paths.lazy_catalog(), &command, None);
        assert_eq!(
            cached.decision, outcome.decision,
            "{n} machines, {kind}: cache"
        );
        assert_eq!(
            matches!(outcome.decision, mesh_guard::decide::Decision::Refuse(_)),
            refuses,
            "{n} machines, {kind}: {:?}",
            outcome.decision
        );
        // What a hook call pays: the cache opened afresh, then probed.
        show(
            &format!("{n} machines: decide, {kind} (through the cache)"),
            median(500, || {
                let catalog = paths.lazy_catalog();
                drop(black_box(app::decide(
                    paths, rules, &catalog, &command, None,
                )))
            }),
        );
        show(
            &format!("{n} machines: decide, {kind} (catalog in memory)"),
            median(500, || {
                drop(black_box(app::decide(
                    paths, rules, &loaded, &command, None,
                )))
            }),
        );
    }
}
