//! What is already on disk when the hook runs, read so a command is judged as it will run
//! (issue 13, item 5): ssh's own configuration, the current docker/podman endpoint, the
//! user's startup-file aliases and functions, and scripts and makefiles run by path.
//!
//! Each part is a pure parser over text plus a thin, bounded reading layer ([`read`]). The
//! readers never run a program (ssh's `Match exec` is the reason `ssh -G` is not asked), never
//! block (FIFOs and devices are refused before and after opening), and stop at
//! [`read::MAX_FILE_BYTES`] per file and [`read::MAX_FILES`] files per [`read::Reader`].
//!
//! Callers read only when a guarded or unknown program needs the answer: the path where no
//! guarded program appears must stay free of file reads, so nothing here runs at start-up.
//!
//! An answer is exact or [`Value::Unknown`]; a value ssh, docker or bash might not use is
//! never returned as known.
//!
//! How the decision code calls it, once per hook call with one [`read::Reader`]:
//! - `ssh`/`scp`/`sftp`/`rsync -e ssh` to DEST: [`ssh::resolve`] with [`ssh::sources`]
//!   (`-o` lines, `-F`), the passwd entry's home, and the command line's user and port; judge
//!   the resolved host name, every [`ssh::Proxy::Jumps`] hop, and a `ProxyCommand`'s text as
//!   a command.
//! - `docker` without `-H`: [`endpoint::docker`]; `podman`/`podman-remote`:
//!   [`podman::podman`]. An `ssh://` endpoint's host is itself an ssh destination.
//! - A program word that is not a known program: [`startup::read`] for aliases and function
//!   bodies (parse the body as shell code; `complete == false` makes an unmatched name
//!   unknown rather than absent).
//! - `bash x.sh`, `./x.sh`, `source x.sh`: [`read::read_script`]; `make [-f F]`:
//!   [`make::read`], judging every recipe line and `parse_time` command as shell code.
//! - A compose command's service word: [`compose::project`], the services the project
//!   defines and the `container_name` each gives itself.

pub mod compose;
pub mod disk;
pub mod endpoint;
pub mod make;
mod pattern;
pub mod podman;
pub mod read;
pub mod recipes;
pub mod ssh;
pub mod startup;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod robust_tests;

/// A value as the program would use it, or unknown when it cannot be known without running
/// something, reading past a bound, or guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Known(String),
    Unknown,
}

impl Value {
    pub fn known(&self) -> Option<&str> {
        match self {
            Value::Known(text) => Some(text),
            Value::Unknown => None,
        }
    }

    /// Lower-cased, as ssh lowers a host name (an address is kept as written).
    pub fn lowered(self) -> Value {
        match self {
            Value::Known(name) if name.parse::<std::net::IpAddr>().is_err() => {
                Value::Known(name.to_lowercase())
            }
            other => other,
        }
    }
}

/// A file the program would reject or misread: what it holds cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;
