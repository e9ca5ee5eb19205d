//! The hook's deadline without a thread (decisions 0002, 0014): a one-shot `SIGALRM` whose
//! handler writes a refusal rendered before the timer was armed, then ends the process.
//! A watchdog thread did the same, but its spawn was paid by every call, and most calls
//! finish in a millisecond. The refusal itself is fixed at build time (`answer`).

pub mod answer;

use std::sync::OnceLock;
use std::time::Duration;

/// The refusal's bytes, stdout then stderr, fixed before the timer is armed: the handler
/// may only make async-signal-safe calls, so it cannot render, allocate or lock.
static ANSWER: OnceLock<(&[u8], &[u8])> = OnceLock::new();

/// Arms the deadline: once `after` has passed, `stdout` and `stderr` are written and the
/// process exits with 2 at once, wherever the work is (blocked on input included).
/// False if the timer could not be set up; the caller then needs another way.
pub fn arm(after: Duration, stdout: &'static [u8], stderr: &'static [u8]) -> bool {
    if ANSWER.set((stdout, stderr)).is_err() {
        return false;
    }
    let interval = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            // The field types are left to inference: the libc crate marks musl's `time_t`
            // and `suseconds_t` deprecated (their width is to change), not the fields. A
            // deadline of 68 years fits any `time_t`; below 1,000,000 fits every platform's
            // `suseconds_t` (i32 on macOS, i64 on Linux).
            tv_sec: after.as_secs().min(i32::MAX as u64) as _,
            tv_usec: after.subsec_micros() as _,
        },
    };
    // SAFETY: the handler only reads ANSWER (set above, never changed again) and calls
    // write(2) and _exit(2), which are async-signal-safe; the structs are fully initialised.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_deadline as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) != 0 {
            return false;
        }
        libc::setitimer(libc::ITIMER_REAL, &interval, std::ptr::null_mut()) == 0
    }
}

/// Disarms the deadline, before the work writes its own answer: a timer firing during that
/// write would add the deadline's refusal to it, and the agent would read two answers mixed.
/// After this returns the handler cannot run; if it ran first, the process has already ended.
/// Harmless when the deadline was never armed.
pub fn disarm() {
    let zero = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
    };
    // SAFETY: ignoring a signal and stopping a timer have no preconditions; ignoring also
    // discards a SIGALRM already pending.
    unsafe {
        libc::signal(libc::SIGALRM, libc::SIG_IGN);
        libc::setitimer(libc::ITIMER_REAL, &zero, std::ptr::null_mut());
    }
}

extern "C" fn on_deadline(_signal: libc::c_int) {
    if let Some((stdout, stderr)) = ANSWER.get() {
        write_all(1, stdout);
        write_all(2, stderr);
    }
    // SAFETY: _exit ends the process without running anything else, as a handler must.
    unsafe { libc::_exit(2) }
}

/// Ends the process in the deadline's refusal now, if a deadline was armed (the hook);
/// otherwise returns. For what cannot go on and must not fail open: memory that ran out
/// (`allocator`), where Rust would abort, an exit status agents do not take for a refusal.
/// Allocates nothing.
pub fn refuse_now() {
    if ANSWER.get().is_some() {
        on_deadline(libc::SIGALRM);
    }
}

fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe the live slice.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(written) {
            Ok(n) if n > 0 => bytes = &bytes[n..],
            // A closed or failing descriptor: nothing more can be said on it.
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    /// A disarmed deadline never fires: were it to, its handler would end the test process
    /// (exit 2), failing the whole run.
    #[test]
    fn a_disarmed_deadline_does_not_fire() {
        let armed = super::arm(
            std::time::Duration::from_millis(50),
            b"deadline fired after disarm\n",
            b"",
        );
        assert!(armed);
        super::disarm();
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
