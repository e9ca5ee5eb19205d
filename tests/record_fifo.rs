//! A database path that is a FIFO fails the open at once (as SQLite's own open does: `pread` on
//! a pipe is ESPIPE), rather than blocking the hook until its deadline ends it before
//! `gap::note` can say a row was lost.

use std::sync::mpsc;
use std::time::Duration;

use mesh_guard::record::Store;

#[test]
fn a_fifo_at_the_database_path_fails_fast_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("audit.db");
    let c = std::ffi::CString::new(db.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (tx, rx) = mpsc::channel();
    let path = db.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Store::open(&path).is_ok());
    });
    let answer = rx.recv_timeout(Duration::from_secs(3));
    if answer.is_err() {
        // Unblock the stuck open so the test process can end.
        let _ = std::fs::OpenOptions::new().write(true).open(&db);
    }
    assert_eq!(
        answer,
        Ok(false),
        "Store::open on a FIFO did not answer within 3 s"
    );
}
