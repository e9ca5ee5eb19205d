//! The decision's window on the disk: what it may ask (a script's text, a makefile, the
//! container engine's endpoint), implemented here over one bounded [`Reader`], so the
//! decision core names no I/O. Nothing is read until the decision asks, and it asks only for
//! a guarded program or a script it is about to run.

use super::read::{Reader, read_script};
use super::{Value, endpoint, make, podman};
use std::cell::RefCell;
use std::path::Path;

/// A command's own assignments (`DOCKER_HOST=… docker ps`), looked up before the session's.
pub type Own<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What the decision may ask of the disk.
pub trait Disk: std::fmt::Debug {
    /// The text of a script run by path (relative to `cwd`), if it can be read.
    fn script(&self, path: &str, cwd: &Path) -> Option<String>;
    /// The makefile `make` would read in `cwd` (`-f FILE` when given).
    fn makefile(&self, cwd: &Path, file: Option<&str>) -> Option<make::Makefile>;
    /// The daemon `docker` talks to without `-H`: a URL, or unknown.
    fn docker(&self, own: Own, context: Option<&str>) -> Value;
    /// Where `podman` works: its own engine, a URL, or unknown.
    fn podman(&self, own: Own, flags: &podman::Flags) -> podman::Endpoint;
}

/// The disk as the hook sees it: the session's environment and home, one reader per call.
#[derive(Debug)]
pub struct OnDisk {
    home: Option<String>,
    reader: RefCell<Reader>,
}

impl OnDisk {
    pub fn new(home: Option<&Path>) -> OnDisk {
        OnDisk {
            home: home.map(|h| h.to_string_lossy().into_owned()),
            reader: RefCell::new(Reader::default()),
        }
    }

    fn env(own: Own, name: &str) -> Option<String> {
        own(name).or_else(|| std::env::var(name).ok())
    }
}

impl Disk for OnDisk {
    fn script(&self, path: &str, cwd: &Path) -> Option<String> {
        read_script(path, cwd)
    }

    fn makefile(&self, cwd: &Path, file: Option<&str>) -> Option<make::Makefile> {
        make::read(&cwd.to_string_lossy(), file, &mut *self.reader.borrow_mut())
    }

    fn docker(&self, own: Own, context: Option<&str>) -> Value {
        let env = |name: &str| OnDisk::env(own, name);
        match &self.home {
            Some(home) => endpoint::docker(&env, home, context, &mut *self.reader.borrow_mut()),
            None => Value::Unknown,
        }
    }

    fn podman(&self, own: Own, flags: &podman::Flags) -> podman::Endpoint {
        let env = |name: &str| OnDisk::env(own, name);
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        match &self.home {
            Some(home) => podman::podman(&env, home, uid, flags, &mut *self.reader.borrow_mut()),
            None => podman::Endpoint::Unknown,
        }
    }
}
