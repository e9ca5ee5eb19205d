//! What a command reads and writes outside its arguments: stdin, stdout, stderr and the
//! environment. The process's own, unless `run` was given others (the tests' in-process
//! harness): they are set for that call on its thread and restored after, so the commands
//! and the helpers under them print through `outln!`/`errln!` without threading a writer.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{Read, Write};

/// The I/O and environment of one in-process call of the program.
pub struct Io {
    pub stdin: Box<dyn Read>,
    pub stdout: Box<dyn Write>,
    pub stderr: Box<dyn Write>,
    /// The whole environment the command sees (nothing of the process's).
    pub env: HashMap<OsString, OsString>,
}

thread_local! {
    static INJECTED: RefCell<Option<Io>> = const { RefCell::new(None) };
}

/// Runs `f` with `io` in place of the process's, and flushes it. (`f` catches its own
/// panics: the answer to one goes through `io` too.)
pub(crate) fn with<T>(io: Io, f: impl FnOnce() -> T) -> T {
    let before = INJECTED.with(|cell| cell.replace(Some(io)));
    let result = f();
    let mut io = INJECTED
        .with(|cell| cell.replace(before))
        .expect("the injected I/O is in place until the call ends");
    let _ = io.stdout.flush();
    let _ = io.stderr.flush();
    result
}

/// Whether this call runs in the in-process harness (`run`), whose process goes on after it.
pub(crate) fn in_process_call() -> bool {
    INJECTED.with(|cell| cell.borrow().is_some())
}

fn injected<T>(f: impl FnOnce(&mut Io) -> T) -> Option<T> {
    INJECTED.with(|cell| cell.borrow_mut().as_mut().map(f))
}

/// Writes to stdout; a closed pipe is the caller's to ignore (`outln!`).
pub fn write_out(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    injected(|io| io.stdout.write_fmt(args)).unwrap_or_else(|| std::io::stdout().write_fmt(args))
}

/// Writes to stderr (`errln!`).
pub fn write_err(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    injected(|io| io.stderr.write_fmt(args)).unwrap_or_else(|| std::io::stderr().write_fmt(args))
}

/// Flushes stdout: an answer must be out before anything else is written.
pub fn flush_out() -> std::io::Result<()> {
    injected(|io| io.stdout.flush()).unwrap_or_else(|| std::io::stdout().flush())
}

/// Reads stdin to its end or to `limit` bytes.
pub fn read_in(limit: u64, into: &mut Vec<u8>) -> std::io::Result<usize> {
    injected(|io| io.stdin.by_ref().take(limit).read_to_end(into))
        .unwrap_or_else(|| std::io::stdin().take(limit).read_to_end(into))
}

/// Reads one line of stdin, of at most `limit` bytes (the MCP server's messages).
pub fn read_line(limit: u64, into: &mut Vec<u8>) -> std::io::Result<usize> {
    injected(|io| read_until_newline(&mut io.stdin.by_ref().take(limit), into)).unwrap_or_else(
        || {
            use std::io::BufRead;
            std::io::stdin().lock().take(limit).read_until(b'\n', into)
        },
    )
}

/// Byte by byte: an injected stdin has no buffer to give back what a line did not use.
fn read_until_newline(input: &mut impl Read, into: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut read = 0;
    let mut byte = [0u8];
    while input.read(&mut byte)? == 1 {
        into.push(byte[0]);
        read += 1;
        if byte[0] == b'\n' {
            break;
        }
    }
    Ok(read)
}

/// Whether stdin is a terminal (someone trying the hook by hand); an injected one is not.
pub fn stdin_is_terminal() -> bool {
    injected(|_| false).unwrap_or_else(|| std::io::IsTerminal::is_terminal(&std::io::stdin()))
}

/// An environment variable, as `std::env::var_os`.
pub fn var_os(name: &str) -> Option<OsString> {
    injected(|io| io.env.get(std::ffi::OsStr::new(name)).cloned())
        .unwrap_or_else(|| std::env::var_os(name))
}

/// An environment variable, as `std::env::var` (absent or not Unicode: an error).
pub fn var(name: &str) -> Result<String, std::env::VarError> {
    match var_os(name) {
        Some(value) => value.into_string().map_err(std::env::VarError::NotUnicode),
        None => Err(std::env::VarError::NotPresent),
    }
}
