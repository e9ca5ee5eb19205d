//! What recording costs on the refusal path: `cargo bench --bench record [N]`.
//!
//! Plain timing (no harness): each hook is a fresh process, so the figure that matters is
//! open + append, measured next to append alone on an open store. Appends sync to disk, so the
//! numbers are mostly the disk's; run on the machine you care about.

use std::time::{Duration, Instant};

use std::os::unix::net::UnixDatagram;

use mesh_guard::record::anchor::Anchor;
use mesh_guard::record::{Event, Kind, Store, Target, forward};

fn refusal(i: usize) -> Event {
    let mut e = Event::now(Kind::Refusal);
    e.agent = "claude".into();
    e.session_id = "0f3a9c21-5e7b-4c1d-9a2e-123456789abc".into();
    e.tool_use_id = format!("toolu_{i}");
    e.cwd = "/home/ops/work".into();
    e.command = "ssh atlas 'journalctl -u mesh-controller --since today'".into();
    e.rule = mesh_guard::rule::Rule::RemoteAccess.into();
    e.target = "atlas".into();
    e.tools = vec!["mesh logs controller --machine atlas".into()];
    e
}

/// Median and 90th percentile in microseconds.
fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    (at(0.5), at(0.9))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `cargo bench` passes `--bench`; the first other argument is the number of appends.
    let n: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("audit.db");

    let mut store = Store::open(&path)?;
    let mut append = Vec::with_capacity(n);
    for i in 0..n {
        let e = refusal(i);
        let t = Instant::now();
        store.append(&e)?;
        append.push(t.elapsed());
    }
    drop(store);

    let mut open_append = Vec::with_capacity(n);
    for i in 0..n {
        let e = refusal(n + i);
        let t = Instant::now();
        Store::open(&path)?.append(&e)?;
        open_append.push(t.elapsed());
    }

    // What the anchor adds to each append (one small in-place write), and what waiting for the
    // disk after it would add (decision 0011 chose not to).
    let anchor_path = dir.path().join("bench.anchor");
    let mut anchor = Vec::with_capacity(n);
    for i in 0..n {
        let a = Anchor {
            id: i as i64,
            count: i as u64,
            hash: "ab".repeat(32),
        };
        let t = Instant::now();
        a.write(&anchor_path)?;
        anchor.push(t.elapsed());
    }
    let mut anchor_synced = Vec::with_capacity(n);
    for i in 0..n {
        let a = Anchor {
            id: i as i64,
            count: i as u64,
            hash: "cd".repeat(32),
        };
        let t = Instant::now();
        a.write_durably(&anchor_path)?;
        anchor_synced.push(t.elapsed());
    }

    // Open + append + forward to a local datagram socket, drained between appends.
    let socket = dir.path().join("log.sock");
    let sink = UnixDatagram::bind(&socket)?;
    sink.set_nonblocking(true)?;
    let target = Target::Unix(socket.clone());
    let mut forwarded = Vec::with_capacity(n);
    let mut buf = vec![0u8; 65536];
    for i in 0..n {
        let e = refusal(2 * n + i);
        let t = Instant::now();
        let mut link = forward::connect(&target)?;
        Store::open(&path)?.append_forwarded(&e, &mut link, "")?;
        forwarded.push(t.elapsed());
        while sink.recv(&mut buf).is_ok() {}
    }

    let verified = Store::open(&path)?.verify()?;
    let (a50, a90) = summary(append);
    let (o50, o90) = summary(open_append);
    println!("record: {n} appends each way, to a fresh database in a temporary directory");
    println!("  append on an open store   median {a50:>9.1} µs   p90 {a90:>9.1} µs");
    println!("  open + append (one hook)  median {o50:>9.1} µs   p90 {o90:>9.1} µs");
    let (w50, w90) = summary(anchor);
    let (s50, s90) = summary(anchor_synced);
    let (f50, f90) = summary(forwarded);
    println!("  of which the anchor write median {w50:>9.1} µs   p90 {w90:>9.1} µs");
    println!("  (anchor write + fdatasync median {s50:>9.1} µs   p90 {s90:>9.1} µs)");
    println!("  open + append + forward   median {f50:>9.1} µs   p90 {f90:>9.1} µs");
    println!("  chain after {} rows: {verified}", 3 * n);
    Ok(())
}
