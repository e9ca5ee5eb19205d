//! Whether the record can be written now, and why not by name (read-only, no space, locked,
//! missing: decision 0072); where each row's copy goes, and whether the system log answers.

use super::{Level, Report};
use std::path::Path;

pub(super) fn check(db: &Path, catalog: &Path, report: &mut Report) {
    // The cause by name, as the hook's stderr line gives it (decision 0072).
    if let Err((cause, detail)) = crate::record::health::probe(db) {
        report.add(
            if cause == crate::record::Cause::Locked {
                Level::Warn
            } else {
                Level::Fail
            },
            format!(
                "the record cannot be written now ({}): {}; {detail}",
                cause.as_str(),
                cause.says()
            ),
            "until it can, each event goes to the system log whole, marked not recorded, and overrides are not honoured; free the record (space, mount, lock, directory), then the next row notes the gap",
        );
    }
    // Where each row's copy goes, and whether it answers now (nothing is sent).
    let setting = crate::catalog::load(catalog)
        .ok()
        .and_then(|c| c.syslog().map(str::to_string));
    let status = crate::record::forwarding_status(setting.as_deref());
    match &status.reachable {
        Ok(()) if status.target == "none" => report.add(
            Level::Warn,
            "no system log: rows are not forwarded, and an event the record cannot take is lost",
            "set [record] syslog in the catalog (journald, unix:PATH, udp://HOST:PORT, tcp://HOST:PORT)",
        ),
        Ok(()) => report.add(
            Level::Ok,
            format!("the system log answers ({})", status.target),
            "",
        ),
        Err(e) => report.add(
            Level::Warn,
            format!("the system log ({}) does not answer: {e}", status.target),
            "start the log daemon, or fix [record] syslog in the catalog",
        ),
    }
}
