//! The operators' views: each format checked, JSON and CSV read back, times parsed.

use mesh_guard::audit::{
    format_time, parse_time, render_csv, render_json, render_missing, render_table, width_from,
};
use mesh_guard::record::{Event, Kind, Row};

const T0: i64 = 1_796_032_800_000; // 2026-11-30T10:00:00Z

fn row(id: i64, kind: Kind, command: &str) -> Row {
    Row {
        id,
        hash: format!("{id:064x}"),
        event: Event {
            time_ms: T0 + id * 1_500,
            kind,
            agent: "claude".into(),
            session_id: "0f3a9c21-5e7b-4c1d-9a2e-123456789abc".into(),
            tool_use_id: format!("toolu_{id}"),
            cwd: "/home/ops/work".into(),
            user: "ops".into(),
            host: "seat".into(),
            command: command.into(),
            rule: mesh_guard::rule::Rule::RemoteAccess.into(),
            target: "atlas".into(),
            tools: vec!["mesh exec atlas".into(), "mesh logs, controller".into()],
            shape: "ssh <machine>".into(),
            reason: String::new(),
            scope: String::new(),
            signer: String::new(),
            grant_expires: String::new(),
        },
    }
}

fn rows() -> Vec<Row> {
    vec![
        row(3, Kind::OverrideAttempt, "MESH_GUARD_OVERRIDE=x ssh atlas"),
        row(
            2,
            Kind::Refusal,
            "ssh atlas 'journalctl -u mesh-controller --since today | grep -i \"error, fatal\"' && echo done\nsecond line",
        ),
        row(1, Kind::SessionStart, ""),
    ]
}

#[test]
fn the_table_aligns_columns_and_cuts_commands_to_the_width() {
    let out = render_table(&rows(), 96);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("TIME"));
    for l in &lines {
        assert!(l.chars().count() <= 96, "{l:?} is wider than 96");
    }
    // Columns by character, as the terminal shows them (an ellipsis is one character).
    let col = |name: &str| lines[0].find(name).unwrap();
    let cell = |line: usize, from: usize, to: usize| -> String {
        let chars: Vec<char> = lines[line].chars().collect();
        chars[from..to.min(chars.len())]
            .iter()
            .collect::<String>()
            .trim_end()
            .to_string()
    };
    let (kind, session, rule, command) = (col("KIND"), col("SESSION"), col("RULE"), col("COMMAND"));
    assert_eq!(cell(1, 0, kind), "2026-11-30T10:00:04Z");
    assert_eq!(cell(1, kind, session), "override-attempt");
    assert_eq!(
        cell(1, session, rule),
        "0f3a9c21",
        "a prefix --session accepts"
    );
    assert_eq!(
        cell(2, rule, col("TARGET")),
        "remote-a…",
        "labels shrink first"
    );
    assert!(cell(2, command, 96).starts_with("ssh atlas '"));
    assert!(lines[2].ends_with('…'), "{:?}", lines[2]);
    assert!(
        lines[3].ends_with("atlas"),
        "an empty command leaves no trailing space"
    );
    assert!(
        !out.contains("second line\n"),
        "a command stays on one line"
    );

    let wide = render_table(&rows(), 400);
    assert!(wide.contains("echo done second line"), "{wide}");
}

#[test]
fn the_table_shows_an_overrides_scope_and_reason() {
    let mut r = row(4, Kind::Override, "ssh atlas uptime");
    r.event.reason = "incident 4411".into();
    r.event.scope = "atlas".into();
    let out = render_table(&[r], 200);
    let lines: Vec<&str> = out.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header,
        [
            "TIME", "KIND", "SESSION", "RULE", "TARGET", "SCOPE", "REASON", "COMMAND"
        ]
    );
    assert!(
        lines[1].ends_with("atlas   atlas  incident 4411  ssh atlas uptime"),
        "{}",
        lines[1]
    );
}

#[test]
fn missing_shapes_as_csv() {
    let shapes = vec![
        ("ssh <machine> <cmd>".to_string(), 3, 2),
        ("a,b".to_string(), 1, 0),
    ];
    assert_eq!(
        mesh_guard::audit::render_missing_csv(&shapes),
        "shape,refusals,would_refuse\r\nssh <machine> <cmd>,3,2\r\n\"a,b\",1,0\r\n"
    );
}

#[test]
fn the_table_keeps_terminal_controls_out() {
    let r = row(
        1,
        Kind::Refusal,
        "ssh atlas \u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}txt",
    );
    let out = render_table(&[r], 200);
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'));
}

#[test]
fn an_empty_table_says_so() {
    assert_eq!(render_table(&[], 100), "no recorded events match\n");
}

#[test]
fn width_comes_from_columns_or_defaults_to_100() {
    assert_eq!(width_from(Some("132")), 132);
    assert_eq!(width_from(Some("0")), 100);
    assert_eq!(width_from(Some("wide")), 100);
    assert_eq!(width_from(None), 100);
}

#[test]
fn json_parses_and_keeps_the_whole_command() {
    let rows = rows();
    let v: serde_json::Value = serde_json::from_str(&render_json(&rows)).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(a[1]["command"], rows[1].event.command.as_str());
    assert_eq!(a[1]["kind"], "refusal");
    assert_eq!(a[0]["kind"], "override-attempt");
    assert_eq!(a[1]["time"], "2026-11-30T10:00:03.000Z");
    assert_eq!(a[1]["time_ms"], T0 + 3_000);
    assert_eq!(a[1]["tools"][1], "mesh logs, controller");
    assert_eq!(a[1]["id"], 2);
    assert_eq!(a[1]["hash"].as_str().unwrap().len(), 64);
    assert_eq!(render_json(&[]).trim(), "[]");
}

/// Just enough of RFC 4180 to read the output back: quoted fields, doubled quotes, CRLF.
fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "records end in CRLF");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        !quoted && field.is_empty() && record.is_empty(),
        "ends on a record"
    );
    records
}

#[test]
fn csv_parses_with_a_header_and_the_whole_command() {
    let rows = rows();
    let records = read_csv(&render_csv(&rows));
    assert_eq!(records.len(), 4);
    let header = &records[0];
    assert_eq!(header[0], "id");
    assert!(records.iter().all(|r| r.len() == header.len()));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(records[2][at("command")], rows[1].event.command);
    assert_eq!(records[2][at("kind")], "refusal");
    assert_eq!(records[2][at("session_id")], rows[1].event.session_id);
    assert_eq!(
        records[2][at("tools")],
        "mesh exec atlas; mesh logs, controller"
    );
    assert_eq!(records[3][at("command")], "");
}

#[test]
fn missing_lists_shapes_by_count() {
    let out = render_missing(&[
        ("docker inspect <container>".into(), 12, 0),
        ("docker stats <container>".into(), 3, 0),
        (String::new(), 1, 0),
    ]);
    assert_eq!(
        out,
        "COUNT  SHAPE NEEDING A TOOL\n   12  docker inspect <container>\n    3  docker stats <container>\n    1  (shape not recorded)\n"
    );
    assert_eq!(
        render_missing(&[]),
        "every recorded refusal named a mesh tool\n"
    );
}

#[test]
fn missing_counts_would_refuse_rows_in_a_column_of_their_own() {
    let out = render_missing(&[
        ("docker logs <container>".into(), 0, 140),
        ("ssh <machine> <cmd>".into(), 7, 2),
    ]);
    assert_eq!(
        out,
        "REFUSED  WOULD-REFUSE  SHAPE NEEDING A TOOL\n      0           140  docker logs <container>\n      7             2  ssh <machine> <cmd>\n"
    );
}

#[test]
fn relative_times_count_back_from_now() {
    for (s, back) in [
        ("30s", 30_000),
        ("15m", 900_000),
        ("2h", 7_200_000),
        ("7d", 604_800_000),
        ("0s", 0),
        (" 2h ", 7_200_000),
    ] {
        assert_eq!(parse_time(s, T0), Ok(T0 - back), "{s}");
    }
}

#[test]
fn rfc3339_times_with_offsets_and_fractions() {
    for (s, want) in [
        ("2026-11-30T10:00:00Z", T0),
        ("2026-11-30t10:00:00z", T0),
        ("2026-11-30 10:00:00Z", T0),
        ("2026-11-30T11:30:00+01:30", T0),
        ("2026-11-30T05:00:00-05:00", T0),
        ("2026-11-30T10:00:00.5Z", T0 + 500),
        ("2026-11-30T10:00:00.123456Z", T0 + 123),
        ("2026-11-30", T0 - 10 * 3_600_000),
        ("1970-01-01T00:00:00Z", 0),
        ("1969-12-31T23:59:59Z", -1_000),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ("2000-03-01T00:00:00Z", 951_868_800_000),
        ("2016-12-31T23:59:60Z", 1_483_228_800_000),
    ] {
        assert_eq!(parse_time(s, 0), Ok(want), "{s}");
    }
}

#[test]
fn malformed_times_are_errors() {
    for s in [
        "",
        "2h30m",
        "h",
        "-2h",
        "2w",
        "2026-11-30T10:00:00",
        "2026-13-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z",
        "2026-11-31T00:00:00Z",
        "2026-11-30T24:00:00Z",
        "2026-11-30T10:60:00Z",
        "2026-11-30T10:00:00.Z",
        "2026-11-30T10:00:00+0100",
        "2026-11-30T10:00:00+24:00",
        "2026-11-30T10:00:00Zjunk",
        "26-11-30T10:00:00Z",
        "２０２６-11-30",
        "99999999999999999999d",
    ] {
        let err = parse_time(s, T0).unwrap_err();
        assert!(!err.to_string().is_empty(), "{s}");
    }
    assert!(
        parse_time("106751991168d", 0).is_err(),
        "overflow is an error"
    );
}

#[test]
fn times_format_as_rfc3339_utc() {
    assert_eq!(format_time(T0 + 999, false), "2026-11-30T10:00:00Z");
    assert_eq!(format_time(T0 + 999, true), "2026-11-30T10:00:00.999Z");
    assert_eq!(format_time(-1, true), "1969-12-31T23:59:59.999Z");
    assert_eq!(format_time(951_782_400_000, false), "2000-02-29T00:00:00Z");
    for s in [
        "2026-11-30T10:00:00Z",
        "2024-02-29T23:59:59Z",
        "1999-12-31T00:00:00Z",
    ] {
        assert_eq!(format_time(parse_time(s, 0).unwrap(), false), s);
    }
}
