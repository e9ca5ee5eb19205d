//! The binary's entry, without std's start-up (decision 0014). On glibc, std's `main` locates
//! the main thread's stack guard by reading `/proc/self/maps` and sets up an alternate signal
//! stack for its stack-overflow message: about 30 µs of a hook call that is mostly start-up.
//! What of that start-up the guard relies on is done here instead.
#![no_main]

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStringExt;

/// Kept free lists instead of the C library's allocator (decision 0052).
#[global_allocator]
static ALLOCATOR: mesh_guard::allocator::Pool = mesh_guard::allocator::Pool::new();

#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    keep_standard_descriptors_open();
    // A closed pipe is an error each write handles (`outln!`), not a signal that kills.
    // SAFETY: setting a signal's disposition to "ignore" has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // A panic may not unwind out of an `extern "C"` function; `main_with` catches the
    // command's own, this the parser's.
    let code = std::panic::catch_unwind(|| {
        let args = mesh_guard::cli::Args::parse_args(arguments(argc, argv));
        mesh_guard::main_with(args)
    })
    .unwrap_or(mesh_guard::error::exit::PANIC);
    // Flushes stdout, as returning from std's `main` would.
    std::process::exit(code)
}

/// The arguments as C's `main` receives them (std's own copy is filled only on some
/// platforms when std's `main` is skipped).
fn arguments(argc: libc::c_int, argv: *const *const libc::c_char) -> Vec<OsString> {
    (0..usize::try_from(argc).unwrap_or(0))
        // SAFETY: C's `main` receives `argc` valid NUL-terminated strings in `argv`.
        .map(|i| unsafe { CStr::from_ptr(*argv.add(i)) })
        .map(|arg| OsString::from_vec(arg.to_bytes().to_vec()))
        .collect()
}

/// A descriptor among 0–2 that was closed is reopened on /dev/null, as std's start-up does:
/// otherwise the first file opened (the audit database) would take it, and an answer
/// written to stdout would land in that file.
fn keep_standard_descriptors_open() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: `fds` is a live array of three initialised pollfd.
    if unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } < 0 {
        return;
    }
    for pollfd in fds.iter().filter(|p| p.revents & libc::POLLNVAL != 0) {
        // SAFETY: a NUL-terminated path; the lowest free descriptor is the closed one.
        let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        if fd >= 0 && fd != pollfd.fd {
            // SAFETY: both descriptors are ours.
            unsafe {
                libc::dup2(fd, pollfd.fd);
                libc::close(fd);
            }
        }
    }
}
