//! The `audit` views of a fixed record, byte for byte (issue 35): each view's output is kept in
//! `tests/golden/audit/`, first written by the views that held the whole record in memory, so
//! the streaming ones are held to the same bytes. `UPDATE_GOLDEN=1 cargo test --test
//! audit_views` rewrites them; review the diff before committing it. Paging with `--limit` and
//! `--after`, alone and with filters, is checked against the whole listing.

mod common;
use common::*;
use std::path::{Path, PathBuf};

use mesh_guard::record::{Event, Kind, RowRule, Store};

const T0: i64 = 1_796_032_800_000; // 2026-11-30T10:00:00Z

fn event(kind: Kind, minute: i64, command: &str) -> Event {
    Event {
        time_ms: T0 + minute * 60_000 + 123,
        kind,
        agent: "claude".into(),
        session_id: format!("{minute:08}-5e7b-4c1d-9a2e-123456789abc"),
        tool_use_id: format!("toolu_{minute}"),
        cwd: "/home/ops/work".into(),
        user: "ops".into(),
        host: "seat-1".into(),
        command: command.into(),
        rule: mesh_guard::rule::Rule::RemoteAccess.into(),
        target: "atlas".into(),
        tools: vec!["mesh exec atlas".into()],
        shape: String::new(),
        reason: String::new(),
        scope: String::new(),
        signer: String::new(),
        grant_expires: String::new(),
    }
}

/// Twelve rows of every kind, with what the views must quote, clean or cut: commas, quotes,
/// newlines, control and bidirectional characters, wide and combining characters, empty
/// fields, long labels, and refusals naming no tool, two shapes counted unevenly.
fn record(dir: &Scratch) -> PathBuf {
    let db = dir.path("audit.db");
    let mut store = Store::open(&db).unwrap();
    let mut rows = vec![
        event(Kind::SessionStart, 0, ""),
        event(Kind::Refusal, 1, "ssh atlas 'uptime, load'"),
        event(
            Kind::Refusal,
            2,
            "ssh atlas \"journalctl -u mesh-controller\" | grep -i \"error, fatal\"\nsecond line",
        ),
        event(
            Kind::Refusal,
            3,
            "docker -H ssh://orion inspect c\u{1b}[31mred",
        ),
        event(Kind::Refusal, 4, "docker -H ssh://orion inspect d"),
        event(Kind::Refusal, 5, "ssh vega 'ls \u{202e}txt.exe'"),
        event(Kind::OverrideAttempt, 6, "MESH_GUARD_OVERRIDE=x ssh atlas"),
        event(
            Kind::Override,
            7,
            "ssh atlas sudo systemctl restart mesh-controller",
        ),
        event(Kind::Refusal, 8, "ssh 東京-gpu 'nvidia-smi' # é"),
        event(Kind::Refusal, 9, "docker -H ssh://orion inspect e"),
        event(Kind::Gap, 10, ""),
        event(Kind::Refusal, 11, &format!("ssh atlas {}", "x".repeat(300))),
    ];
    for (i, shape) in [
        (3, "docker inspect <container>"),
        (4, "docker inspect <container>"),
        (9, "docker inspect <container>"),
        (5, "ssh <machine> ls"),
    ] {
        rows[i].tools.clear();
        rows[i].shape = shape.into();
        rows[i].target = "orion/c".into();
    }
    rows[7].reason = "incident 4711: \"controller\" down, restart".into();
    rows[7].scope = "machine:atlas".into();
    rows[8].rule = RowRule::Other("a-rule-name-longer-than-twenty-four-characters".into());
    rows[8].target = "東京-gpu".into();
    rows[10].reason = "2 events not recorded: disk full".into();
    rows[11].tools = vec!["mesh exec atlas".into(), "mesh logs, controller".into()];
    for e in &rows {
        store.append(e).unwrap();
    }
    db
}

fn audit(db: &Path, args: &[&str]) -> Output {
    let mut all = vec!["audit"];
    all.extend(args);
    call(&all, &[("MESH_GUARD_DB", db)], b"")
}

const VIEWS: &[(&str, &[&str])] = &[
    ("table.txt", &["--wide"]),
    (
        "table-refusals.txt",
        &["--wide", "--kind", "refusal", "--target", "orion"],
    ),
    ("json.json", &["--format", "json"]),
    ("csv.csv", &["--format", "csv"]),
    ("none.txt", &["--kind", "override", "--session", "nobody"]),
    ("none.json", &["--format", "json", "--session", "nobody"]),
    ("export.jsonl", &["export", "--format", "jsonl"]),
    (
        "export-after.jsonl",
        &["export", "--format", "jsonl", "--after", "9"],
    ),
    ("missing.txt", &["missing"]),
    ("missing.json", &["missing", "--format", "json"]),
    ("missing.csv", &["missing", "--format", "csv"]),
    ("verify.txt", &["verify"]),
];

#[test]
fn each_view_prints_what_it_printed_holding_the_whole_record() {
    let dir = Scratch::new("audit-views");
    let db = record(&dir);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/audit");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut differ = Vec::new();
    for (file, args) in VIEWS {
        let out = audit(&db, args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let path = golden.join(file);
        if update {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &out.stdout).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        if out.stdout != want {
            differ.push(format!("{file} ({args:?}):\n{}", out.stdout));
        }
    }
    assert!(
        differ.is_empty(),
        "views differ from tests/golden/audit:\n{}",
        differ.join("\n")
    );
}

/// Every page of `args` with `--limit n`, each from the `--after` the one before named.
fn pages(db: &Path, args: &[&str], n: usize) -> Vec<Output> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let limit = n.to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--limit", &limit]);
        if let Some(a) = &after {
            all.extend(["--after", a]);
        }
        let page = audit(db, &all);
        assert_eq!(page.code, 0, "{all:?}: {}", page.stderr);
        after = page
            .stderr
            .split("--after ")
            .nth(1)
            .map(|s| s.split('`').next().unwrap().to_string());
        let last = after.is_none();
        out.push(page);
        assert!(out.len() < 20, "paging does not end");
        if last {
            return out;
        }
    }
}

fn ids(json: &str) -> Vec<i64> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn pages_of_a_listing_are_the_listing_cut_in_order() {
    let dir = Scratch::new("audit-pages");
    let db = record(&dir);
    for filter in [
        &[][..],
        &["--kind", "refusal"],
        &[
            "--kind",
            "refusal,override",
            "--since",
            "2026-11-30T10:04:00Z",
        ],
        &["--target", "orion", "--until", "2026-11-30T10:09:00Z"],
    ] {
        let mut args = vec!["--format", "json"];
        args.extend(filter);
        let whole = ids(&audit(&db, &args).stdout);
        assert!(!whole.is_empty(), "{filter:?}");
        for n in [1, 2, 5] {
            let pages = pages(&db, &args, n);
            assert_eq!(pages.len(), whole.len().div_ceil(n), "{filter:?} by {n}");
            let paged: Vec<i64> = pages.iter().flat_map(|p| ids(&p.stdout)).collect();
            assert_eq!(paged, whole, "{filter:?} by {n}");
            for p in &pages[..pages.len() - 1] {
                assert_eq!(ids(&p.stdout).len(), n);
            }
        }
    }
}

#[test]
fn after_and_limit_in_the_table_and_csv() {
    let dir = Scratch::new("audit-pages-formats");
    let db = record(&dir);
    let first = audit(&db, &["--wide", "--limit", "3"]);
    assert_eq!(first.stdout.lines().count(), 4, "{}", first.stdout);
    assert_eq!(
        first.stderr,
        "mesh-guard: more events follow; add `--after 10` for the next page\n"
    );
    let next = audit(&db, &["--format", "csv", "--after", "10", "--limit", "3"]);
    let lines: Vec<&str> = next.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", next.stdout);
    assert!(lines[0].starts_with("id,time,"));
    let first_ids: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(first_ids, ["9", "8", "7"]);
    // The last page, exactly full: nothing more is said.
    let last = audit(&db, &["--format", "csv", "--after", "3", "--limit", "2"]);
    assert_eq!(last.stdout.lines().count(), 3, "{}", last.stdout);
    assert_eq!(last.stderr, "");
    let none = audit(&db, &["--format", "json", "--limit", "0"]);
    assert_eq!((none.stdout.as_str(), none.stderr.as_str()), ("[]\n", ""));
    let past = audit(&db, &["--after", "1"]);
    assert_eq!(past.stdout, "no recorded events match\n");
    // A table page is laid out for its own rows: the long rule of row 9 is not in it.
    let narrow = audit(&db, &["--wide", "--after", "8", "--limit", "2"]);
    assert!(
        narrow
            .stdout
            .lines()
            .next()
            .unwrap()
            .contains("RULE           TARGET"),
        "{}",
        narrow.stdout
    );
}

#[test]
fn a_nul_or_a_wide_character_lays_the_table_out_as_measuring_each_row_does() {
    let dir = Scratch::new("audit-nul");
    let db = record(&dir);
    let mut store = Store::open(&db).unwrap();
    let mut e = event(Kind::Refusal, 12, "ssh atlas");
    // SQLite's `length` stops at the NUL; the table counts every character.
    e.target = "atlas\0 and a longer tail".into();
    store.append(&e).unwrap();
    // Characters, not bytes: a reason of 14 characters in 20 bytes.
    let mut e = event(Kind::Refusal, 13, "ssh vega");
    e.reason = "réäsön ünïcödé".into();
    store.append(&e).unwrap();
    let rows = store.query(&mesh_guard::record::Filter::default()).unwrap();
    let want = mesh_guard::audit::render_table(&rows, usize::MAX);
    assert_eq!(audit(&db, &["--wide"]).stdout, want);
    assert!(want.contains("atlas\u{fffd} and a longer tail"), "{want}");
}
