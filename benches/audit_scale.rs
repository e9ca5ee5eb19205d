//! The record at fleet scale: `cargo bench --bench audit_scale [SIZES...]`.
//!
//! Grows one record to each size (default 10000 100000 1000000 rows, through the record's own
//! insert and chain, `Store::append_bulk`), then runs every `audit` view of it as a child
//! process of the release binary, stdout to /dev/null, and prints each view's wall time and
//! peak resident memory (the child's `ru_maxrss`, from `wait4`). Decision 0062: the peaks
//! should not grow with the record. Not a test: the figures are the machine's.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mesh_guard::record::{Event, Kind, Store};

/// The binary measured: `MESH_GUARD_BIN`, else the one cargo built beside this benchmark.
fn binary() -> String {
    std::env::var("MESH_GUARD_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mesh-guard").into())
}

const SHAPES: [&str; 8] = [
    "docker inspect <container>",
    "journalctl -u <unit> --since <time>",
    "ssh <machine> df -h",
    "podman logs <container>",
    "systemctl --host <machine> status <unit>",
    "rsync <path> <machine>:<path>",
    "scp <path> <machine>:<path>",
    "kubectl --context <cluster> get pods",
];

/// Row `i` of `total`: mostly refusals (one in five naming no tool), some overrides and
/// session starts, spread over the last 23 hours so `--since 24h` selects them all.
fn event(i: u64, total: u64, start_ms: i64) -> Event {
    let kind = match i % 50 {
        0 => Kind::SessionStart,
        1 => Kind::Override,
        2 => Kind::OverrideAttempt,
        _ => Kind::Refusal,
    };
    let mut e = Event::now(kind);
    e.time_ms = start_ms + (i as i64) * (23 * 3_600_000 / total.max(1) as i64);
    e.agent = ["claude", "codex", "gemini"][(i % 3) as usize].into();
    e.session_id = format!("{:08x}-5e7b-4c1d-9a2e-123456789abc", i / 200);
    e.tool_use_id = format!("toolu_{i:012}");
    e.cwd = format!("/home/ops/work/project-{}", i % 37);
    e.user = "ops".into();
    e.host = format!("seat-{}", i % 11);
    let machine = ["atlas", "orion", "vega", "lyra"][(i % 4) as usize];
    e.command = format!(
        "ssh {machine} 'journalctl -u mesh-controller --since today | grep -i error | tail -n {}'",
        i % 500
    );
    e.rule = mesh_guard::rule::Rule::RemoteAccess.into();
    e.target = machine.into();
    if kind == Kind::Refusal && i.is_multiple_of(5) {
        e.shape = SHAPES[(i / 5 % SHAPES.len() as u64) as usize].into();
    } else {
        e.tools = vec![format!("mesh logs controller --machine {machine}")];
    }
    if kind == Kind::Override {
        e.reason = "incident 4711: controller down".into();
        e.scope = format!("machine:{machine}");
    }
    e
}

/// One view's run: wall time, peak resident memory in KiB, exit code.
type Measured = (Duration, i64, i32);

/// Runs `args` against `db`.
// The child is reaped by `wait4`, which also gives its resource usage; `Child::wait` cannot.
#[allow(clippy::zombie_processes)]
fn measure(db: &Path, args: &[&str]) -> Measured {
    let t = Instant::now();
    let child = Command::new(binary())
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for the child just spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: waits for our own child, which `Child` never waits for (it is not used again).
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (t.elapsed(), usage.ru_maxrss, code)
}

/// The system log's copy of rows after `after`, as `journalctl -o json` would write it.
fn log_rows(store: &Store, db: &Path, after: i64, log: &mut impl Write) -> i64 {
    let record = std::path::absolute(db).unwrap().display().to_string();
    let mut last = after;
    store
        .each_row_after(after, |r| {
            let line = serde_json::json!({
                "MESSAGE": format!("mesh-guard {} id={}", r.event.kind, r.id),
                "MESH_GUARD_ID": r.id.to_string(),
                "MESH_GUARD_KIND": r.event.kind.as_str(),
                "MESH_GUARD_HASH": r.hash,
                "MESH_GUARD_RECORD": record,
            });
            writeln!(log, "{line}").unwrap();
            last = r.id;
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
    last
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![10_000, 100_000, 1_000_000];
    }
    sizes.sort();
    let total = *sizes.last().unwrap_or(&0);
    // AUDIT_SCALE_DIR keeps the record and its log there, to run a view by hand afterwards.
    let dir = tempfile::tempdir()?;
    let keep = std::env::var_os("AUDIT_SCALE_DIR").map(std::path::PathBuf::from);
    let dir = keep.as_deref().unwrap_or(dir.path());
    std::fs::create_dir_all(dir)?;
    let db = dir.join("audit.db");
    let log_path = dir.join("journal.json");
    let mut log = std::io::BufWriter::new(std::fs::File::create(&log_path)?);
    let log_arg = log_path.display().to_string();
    let start_ms = mesh_guard::record::now_ms() - 23 * 3_600_000;
    let mut store = Store::open(&db)?;
    let (mut grown, mut logged) = (0u64, 0i64);
    let mut results: Vec<(String, Vec<Measured>)> = Vec::new();
    for &size in &sizes {
        let t = Instant::now();
        store.append_bulk((grown..size).map(|i| event(i, total, start_ms)))?;
        grown = size;
        logged = log_rows(&store, &db, logged, &mut log);
        log.flush()?;
        let middle = (size / 2).to_string();
        eprintln!("grown to {size} rows in {:.1} s", t.elapsed().as_secs_f64());
        let views: Vec<(&str, Vec<&str>)> = vec![
            ("audit (table, every row)", vec!["audit"]),
            ("audit --since 24h", vec!["audit", "--since", "24h"]),
            ("audit --format json", vec!["audit", "--format", "json"]),
            ("audit --format csv", vec!["audit", "--format", "csv"]),
            (
                "audit --kind override --limit 50",
                vec!["audit", "--kind", "override", "--limit", "50"],
            ),
            (
                "audit --after MIDDLE --limit 50",
                vec!["audit", "--after", &middle, "--limit", "50"],
            ),
            (
                "audit export --format jsonl",
                vec!["audit", "export", "--format", "jsonl"],
            ),
            ("audit missing", vec!["audit", "missing"]),
            ("audit verify", vec!["audit", "verify"]),
            (
                "audit verify --log FILE",
                vec!["audit", "verify", "--log", &log_arg],
            ),
        ];
        for (i, (name, args)) in views.iter().enumerate() {
            let m = measure(&db, args);
            eprintln!(
                "  {name:<34} {:>7.2} s {:>7.1} MiB exit {}",
                m.0.as_secs_f64(),
                m.1 as f64 / 1024.0,
                m.2
            );
            if results.len() <= i {
                results.push((name.to_string(), Vec::new()));
            }
            results[i].1.push(m);
        }
    }
    println!("audit views: wall time / peak RSS (ru_maxrss), stdout to /dev/null");
    print!("| view |");
    for s in &sizes {
        print!(" {s} rows |");
    }
    println!();
    print!("|---|");
    for _ in &sizes {
        print!("---|");
    }
    println!();
    for (name, ms) in &results {
        print!("| `{name}` |");
        for (t, kib, code) in ms {
            let failed = if *code == 0 {
                String::new()
            } else {
                format!(" (exit {code})")
            };
            print!(
                " {:.2} s, {:.1} MiB{failed} |",
                t.as_secs_f64(),
                *kib as f64 / 1024.0
            );
        }
        println!();
    }
    Ok(())
}
