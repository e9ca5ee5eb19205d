//! Tests that need the record's insides: a database written by schema 1, rows hashed in format 1.

use super::*;
use rusqlite::params;

/// Schema 1 as it was released, written out here rather than taken from `schema::SCHEMA_1`, so a
/// change to the shipped step cannot silently change what this test migrates from.
const RELEASED_SCHEMA_1: &str = "
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    time_ms     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    agent       TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    tool_use_id TEXT NOT NULL,
    cwd         TEXT NOT NULL,
    user        TEXT NOT NULL,
    host        TEXT NOT NULL,
    command     TEXT NOT NULL,
    rule        TEXT NOT NULL,
    target      TEXT NOT NULL,
    tools       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    prev_hash   BLOB NOT NULL,
    hash        BLOB NOT NULL
);
PRAGMA user_version = 1;
";

pub(super) fn sample(kind: Kind, command: &str) -> Event {
    Event {
        time_ms: 1_764_496_800_000,
        kind,
        agent: "claude".into(),
        session_id: "sess-1".into(),
        tool_use_id: "toolu_1".into(),
        cwd: "/work".into(),
        user: "ops".into(),
        host: "seat".into(),
        command: command.into(),
        rule: crate::rule::Rule::RemoteAccess.into(),
        target: "atlas".into(),
        tools: vec!["mesh exec".into()],
        shape: String::new(),
        reason: String::new(),
        scope: String::new(),
        signer: String::new(),
        grant_expires: String::new(),
    }
}

/// Writes `events` the way the schema-1 release did: format-1 hashes, no shape column.
/// Whether the database file's header says WAL (bytes 18 and 19 are 2).
pub(super) fn header_says_wal(path: &Path) -> bool {
    use std::os::unix::fs::FileExt;
    let mut header = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|f| f.read_exact_at(&mut header, 0))
        .is_ok_and(|()| header[..16] == *b"SQLite format 3\0" && header[18] == 2 && header[19] == 2)
}

pub(super) fn write_schema_1(path: &Path, events: &[Event]) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(RELEASED_SCHEMA_1).unwrap();
    let mut prev = chain::GENESIS.to_vec();
    for (i, e) in events.iter().enumerate() {
        let id = i as i64 + 1;
        let hash = chain::row_hash(1, &prev, &fields(id, e)).unwrap().to_vec();
        conn.execute(
            "INSERT INTO events (id, time_ms, kind, agent, session_id, tool_use_id, cwd, user,
                host, command, rule, target, tools, reason, prev_hash, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                id,
                e.time_ms,
                e.kind.as_str(),
                e.agent,
                e.session_id,
                e.tool_use_id,
                e.cwd,
                e.user,
                e.host,
                e.command,
                e.rule.as_str(),
                e.target,
                serde_json::to_string(&e.tools).unwrap(),
                e.reason,
                prev,
                hash,
            ],
        )
        .unwrap();
        prev = hash;
    }
}

fn user_version(path: &Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn the_shipped_schema_1_is_the_released_one() {
    let shipped: String = schema::SCHEMA_1.split_whitespace().collect();
    let released: String = RELEASED_SCHEMA_1
        .trim_end()
        .trim_end_matches("PRAGMA user_version = 1;")
        .split_whitespace()
        .collect();
    assert_eq!(shipped, released);
}

/// A row another version wrote keeps its rule's text, even one this version does not spell:
/// shown and hashed as stored (the chain verifies), never dropped or renamed.
#[test]
fn a_rule_this_version_does_not_spell_reads_back_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let mut foreign = sample(Kind::Refusal, "ssh atlas uptime");
    foreign.rule = RowRule::Other("retired-rule".into());
    let mut none = sample(Kind::SessionStart, "");
    none.rule = RowRule::None;
    let known = sample(Kind::Refusal, "ssh orion uptime");
    write_schema_1(&path, &[foreign.clone(), none.clone(), known.clone()]);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 3 });
    let rows: Vec<Event> = store
        .query(&Filter::default())
        .unwrap()
        .into_iter()
        .map(|r| r.event)
        .collect();
    assert_eq!(rows, [known, none, foreign]);
    let mut rule = RowRule::stored("retired-rule");
    rule.read("remote-access");
    assert_eq!(rule, RowRule::Rule(crate::rule::Rule::RemoteAccess));
    rule.read(" remote-access");
    assert_eq!(rule.as_str(), " remote-access");
}

#[test]
fn a_schema_1_database_migrates_verifies_and_takes_new_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let old = [
        sample(Kind::Refusal, "ssh atlas uptime"),
        sample(Kind::Override, "docker logs mesh-controller"),
    ];
    write_schema_1(&path, &old);
    assert_eq!(user_version(&path), 1);

    let mut store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::LATEST);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 2 });

    let mut new = sample(Kind::Refusal, "docker inspect mesh-controller");
    new.tools.clear();
    new.shape = "docker inspect <container>".into();
    assert_eq!(store.append(&new).unwrap(), 3);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 3 });

    let rows = store.query(&Filter::default()).unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].event, new);
    assert_eq!(rows[2].event, old[0]);
    assert_eq!(
        store.missing().unwrap(),
        vec![("docker inspect <container>".to_string(), 1, 0)]
    );
    // A second open finds the file current and leaves it so.
    drop(store);
    Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::LATEST);
}

#[test]
fn giving_a_schema_1_row_a_shape_counts_as_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    write_schema_1(&path, &[sample(Kind::Refusal, "ssh atlas")]);
    let store = Store::open(&path).unwrap();
    store
        .conn
        .execute("UPDATE events SET shape = 'ssh <machine>' WHERE id = 1", [])
        .unwrap();
    assert_eq!(
        store.verify().unwrap(),
        Verification::Broken {
            id: 1,
            breach: Breach::Edited
        }
    );
}

#[test]
fn a_newer_schema_is_refused_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("PRAGMA user_version = 99;")
        .unwrap();
    let err = Store::open(&path).err().unwrap();
    assert!(matches!(err, RecordError::NewerSchema { found: 99, .. }));
    assert_eq!(user_version(&path), 99);
    // Also where the file is in WAL mode already.
    let wal = dir.path().join("wal.db");
    let conn = Connection::open(&wal).unwrap();
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA user_version = 99;")
        .unwrap();
    drop(conn);
    assert!(header_says_wal(&wal));
    let err = Store::open(&wal).err().unwrap();
    assert!(matches!(err, RecordError::NewerSchema { found: 99, .. }));
}

#[test]
fn a_read_only_open_of_an_old_schema_asks_for_a_migration() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    write_schema_1(&path, &[sample(Kind::Refusal, "ssh atlas")]);
    let err = Store::open_read_only(&path).err().unwrap();
    assert!(matches!(err, RecordError::NeedsMigration { found: 1, .. }));
}

/// The chain's ends are read once per append: a pending gap row and the event both link in
/// order, and the anchor counts from the oldest row, in an empty record too.
#[test]
fn one_append_links_a_gap_row_and_its_event_and_anchors_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let anchor_of = || {
        anchor::Anchor::read(&anchor::path_for(&path))
            .unwrap()
            .unwrap()
    };
    let mut store = Store::open(&path).unwrap();
    store.append(&sample(Kind::Refusal, "ssh atlas")).unwrap();
    assert_eq!((anchor_of().id, anchor_of().count), (1, 1));
    let failed = RecordError::Failed {
        path: path.clone(),
        cause: "disk full".into(),
    };
    gap::note(
        &path,
        &sample(Kind::Refusal, "ssh orion"),
        &failed,
        "failed",
        &Ok(()),
    );
    let id = store.append(&sample(Kind::Refusal, "ssh vega")).unwrap();
    assert_eq!(id, 3, "the gap row first, then the event");
    assert_eq!((anchor_of().id, anchor_of().count), (3, 3));
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 3 });
    assert!(gap::pending(&path).is_none(), "the note was taken");
    let kinds: Vec<String> = store
        .conn
        .prepare("SELECT kind FROM events ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kinds, ["refusal", "gap", "refusal"]);
}

/// A row as schema 4's writer wrote it: row format 3, without the grant's columns.
fn insert_format_3(tx: &rusqlite::Transaction<'_>, id: i64, e: &Event, prev: &[u8]) -> [u8; 32] {
    let hash = chain::row_hash(3, prev, &fields(id, e)).unwrap();
    tx.execute(
        "INSERT INTO events (id, time_ms, kind, agent, session_id, tool_use_id, cwd, user, host,
            command, rule, target, tools, shape, reason, format, prev_hash, hash, scope)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 3, ?16, ?17, ?18)",
        params![
            id,
            e.time_ms,
            e.kind.as_str(),
            e.agent,
            e.session_id,
            e.tool_use_id,
            e.cwd,
            e.user,
            e.host,
            e.command,
            e.rule.as_str(),
            e.target,
            serde_json::to_string(&e.tools).unwrap(),
            e.shape,
            e.reason,
            prev,
            hash.as_slice(),
            e.scope,
        ],
    )
    .unwrap();
    hash
}

fn index_names(path: &Path) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut st = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Schema 5 drops schema 2's indexes (decision 0037). A record as schema 4 left it (its
/// indexes, rows in the current format after older ones, an anchor) migrates with every row,
/// the chain and the anchor intact, answers the audit filters without the indexes, and takes
/// new rows.
#[test]
fn a_schema_4_database_migrates_to_the_latest_with_its_rows_and_chain_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    write_schema_1(&path, &[sample(Kind::Refusal, "ssh atlas uptime")]);
    let mut conn = Connection::open(&path).unwrap();
    for step in &schema::STEPS[1..4] {
        conn.execute_batch(step).unwrap();
    }
    conn.pragma_update(None, "user_version", 4).unwrap();
    let mut other = sample(Kind::Override, "docker logs mesh-controller");
    other.session_id = "sess-2".into();
    other.time_ms += 60_000;
    let tx = conn.transaction().unwrap();
    let ends = chain_ends(&tx).unwrap();
    let id = ends.next;
    let hash = insert_format_3(&tx, id, &other, &ends.head.unwrap());
    tx.commit().unwrap();
    drop(conn);
    let anchored = anchor::Anchor {
        id,
        count: 2,
        hash: chain::hex(&hash),
    };
    anchored.write(&anchor::path_for(&path)).unwrap();
    assert_eq!(user_version(&path), 4);
    assert_eq!(
        index_names(&path),
        ["events_kind_time", "events_session", "events_time"]
    );

    let mut store = Store::open(&path).unwrap();
    assert_eq!(user_version(&path), schema::LATEST);
    assert!(index_names(&path).is_empty(), "{:?}", index_names(&path));
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 2 });
    assert_eq!(store.check_anchor().unwrap(), AnchorCheck::Holds(anchored));
    let rows = store.rows_after(0).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].event, other);

    let by = |filter: Filter| -> Vec<i64> {
        store.query(&filter).unwrap().iter().map(|r| r.id).collect()
    };
    assert_eq!(by(Filter::default()), [2, 1]);
    let kinds = Filter {
        kinds: vec![Kind::Override],
        ..Filter::default()
    };
    assert_eq!(by(kinds), [2]);
    let session = Filter {
        session: Some("sess-2".into()),
        ..Filter::default()
    };
    assert_eq!(by(session), [2]);
    let since = Filter {
        since_ms: Some(other.time_ms),
        ..Filter::default()
    };
    assert_eq!(by(since), [2]);

    assert_eq!(store.append(&sample(Kind::Refusal, "ssh vega")).unwrap(), 3);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 3 });
    assert!(matches!(
        store.check_anchor().unwrap(),
        AnchorCheck::Holds(anchor::Anchor {
            id: 3,
            count: 3,
            ..
        })
    ));
}

/// A gap row and its event are two rows of one append: consecutive ids chosen before the insert
/// (decision 0041), each hashed with its own id and linked to the one before, and
/// `sqlite_sequence` moved past both.
#[test]
fn a_gap_row_and_its_event_get_consecutive_ids_and_move_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let mut store = Store::open(&path).unwrap();
    store.append(&sample(Kind::Refusal, "ssh atlas 1")).unwrap();
    let failed = RecordError::Failed {
        path: path.clone(),
        cause: "disk full".into(),
    };
    gap::note(
        &path,
        &sample(Kind::Refusal, "ssh atlas 2"),
        &failed,
        "failed",
        &Ok(()),
    );
    let id = store.append(&sample(Kind::Refusal, "ssh atlas 3")).unwrap();
    assert_eq!(id, 3);
    let rows = store.rows_after(0).unwrap();
    let kinds: Vec<Kind> = rows.iter().map(|r| r.event.kind).collect();
    assert_eq!(kinds, [Kind::Refusal, Kind::Gap, Kind::Refusal]);
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2, 3]);
    let seq: i64 = store
        .conn
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(seq, 3);
    assert_eq!(store.verify().unwrap(), Verification::Intact { rows: 3 });
    assert!(gap::pending(&path).is_none(), "the note is consumed");
}

/// `verify --log`: an event the log marks not recorded passes only when a gap row names it,
/// or counts its kind past the row's bound; any other is reported (decision 0072).
#[test]
fn a_lost_event_no_gap_row_accounts_for_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    let mut store = Store::open(&path).unwrap();
    let failed = RecordError::Failed {
        path: path.clone(),
        cause: "disk full".into(),
    };
    // One past the bound: the last is only counted, by its kind.
    let lost: Vec<Event> = (0..=gap::MAX_LOST_ROWS)
        .map(|i| sample(Kind::Refusal, &format!("ssh host{i}")))
        .collect();
    for event in &lost {
        gap::note(&path, event, &failed, "failed", &Ok(()));
    }
    store.append(&sample(Kind::Refusal, "ssh vega")).unwrap();
    let ours = path.display().to_string();
    let unrecorded = |key: &str, kind: &str| {
        format!(
            "{{\"MESH_GUARD_RECORDED\":\"no\",\"MESH_GUARD_LOST\":\"{key}\",\"MESH_GUARD_KIND\":\"{kind}\",\"MESH_GUARD_RECORD\":\"{ours}\"}}\n"
        )
    };
    let found = |log: &str| {
        let log = logcheck::Spilled::read(log.as_bytes(), &ours).unwrap();
        let mut found = Vec::new();
        store
            .compare_log(&log, false, |f| found.push(f.to_string()))
            .unwrap();
        found
    };
    let all: String = lost
        .iter()
        .map(|e| unrecorded(&gap::lost_key(e), "refusal"))
        .collect();
    assert_eq!(found(&all), Vec::<String>::new(), "each is accounted for");
    let one_more = format!("{all}{}", unrecorded("00112233deadbeef", "refusal"));
    let found = found(&one_more);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("event 00112233deadbeef (refusal"),
        "{found:?}"
    );
    assert!(found[0].contains("no gap row"), "{found:?}");
}
