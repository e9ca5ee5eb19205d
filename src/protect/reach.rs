//! Whether a file the guard trusts is out of an account's reach (decision 0069): the file
//! and every directory above it, links followed, owned by root or by another account, and
//! writable by no group and no others. A file the agent's account can change is the
//! agent's, whatever its name; a signature checked against it proves nothing.

use std::path::{Path, PathBuf};

/// What puts a file within reach, and where on its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InReach {
    /// The file itself or the directory at fault.
    pub at: PathBuf,
    /// Whether `at` is the file (else a directory above it).
    pub is_file: bool,
    pub why: Why,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// It (or a directory on its way) does not exist or cannot be looked at.
    Missing,
    /// Owned by the account itself.
    Owned(u32),
    /// Writable by its group or by others (the mode, permission bits only).
    Writable(u32),
    /// Ownership cannot be read on this platform.
    Unknown,
}

impl InReach {
    /// One clause without host paths, about the file called `name`: for a refusal the
    /// agent reads too.
    pub fn clause(&self, name: &str) -> String {
        let subject = if self.is_file {
            name.to_string()
        } else {
            format!("a directory above {name}")
        };
        match &self.why {
            Why::Missing => format!("{subject} cannot be read"),
            Why::Owned(uid) => format!(
                "{subject} is owned by the account the guard runs as (uid {uid}), so the agent can change it"
            ),
            Why::Writable(mode) => {
                format!("{subject} is writable by its group or others (mode {mode:o})")
            }
            Why::Unknown => format!("{subject}: ownership cannot be checked on this platform"),
        }
    }

    /// The same, naming the path: for the operator (`doctor`).
    pub fn described(&self) -> String {
        let what = if self.is_file { "" } else { "its directory " };
        match &self.why {
            Why::Missing => format!("{what}{} cannot be read", self.at.display()),
            Why::Owned(uid) => format!("{what}{} is owned by uid {uid}", self.at.display()),
            Why::Writable(mode) => format!(
                "{what}{} is writable by its group or others (mode {mode:o})",
                self.at.display()
            ),
            Why::Unknown => "ownership cannot be checked on this platform".into(),
        }
    }
}

/// `path` with its links followed, when it and every directory above it are out of the
/// reach of the account `uid`; else what puts it within reach. Root is out of every
/// account's reach but its own: for root, only the group and others' write bits count.
///
/// A sticky directory (`/tmp`) may be writable by all: its entries are only removed or
/// renamed by their owners, and the entry below it is checked in turn.
pub fn out_of_reach(path: &Path, uid: u32) -> Result<PathBuf, InReach> {
    let real = std::fs::canonicalize(path).map_err(|_| InReach {
        at: path.to_path_buf(),
        is_file: true,
        why: Why::Missing,
    })?;
    for (i, at) in real.ancestors().enumerate() {
        let fault = |why| InReach {
            at: at.to_path_buf(),
            is_file: i == 0,
            why,
        };
        let (owner, mode) = owner_and_mode(at).map_err(fault)?;
        if owner == uid && uid != 0 {
            return Err(fault(Why::Owned(owner)));
        }
        let sticky_dir = i > 0 && mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky_dir {
            return Err(fault(Why::Writable(mode & 0o7777)));
        }
    }
    Ok(real)
}

/// As [`out_of_reach`], only root trusted: the test for a binary found in a system place.
pub fn root_owned(path: &Path) -> Result<PathBuf, InReach> {
    // No account but root owns a file this accepts: `u32::MAX` is no one's uid.
    let real = out_of_reach(path, u32::MAX)?;
    for (i, at) in real.ancestors().enumerate() {
        let (owner, _) = owner_and_mode(at).map_err(|why| InReach {
            at: at.to_path_buf(),
            is_file: i == 0,
            why,
        })?;
        if owner != 0 {
            return Err(InReach {
                at: at.to_path_buf(),
                is_file: i == 0,
                why: Why::Owned(owner),
            });
        }
    }
    Ok(real)
}

fn owner_and_mode(path: &Path) -> Result<(u32, u32), Why> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).map_err(|_| Why::Missing)?;
        Ok((meta.uid(), meta.mode()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Err(Why::Unknown)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn the_file_and_every_directory_above_it_count() {
        if crate::perm::current_uid() != Some(0) {
            return; // files owned by another account need root to make
        }
        let dir = tempfile::tempdir().unwrap();
        chmod(dir.path(), 0o755);
        let sub = dir.path().join("etc");
        std::fs::create_dir(&sub).unwrap();
        chmod(&sub, 0o755);
        let file = sub.join("allowed_signers");
        std::fs::write(&file, "").unwrap();
        chmod(&file, 0o644);
        let agent = 54_321;
        assert!(out_of_reach(&file, agent).is_ok());
        assert!(root_owned(&file).is_ok());
        std::os::unix::fs::chown(&sub, Some(agent), None).unwrap();
        let fault = out_of_reach(&file, agent).unwrap_err();
        assert_eq!((fault.at.as_path(), fault.is_file), (sub.as_path(), false));
        assert_eq!(fault.why, Why::Owned(agent));
        // Another account's directory is out of this one's reach, not out of root's.
        assert!(out_of_reach(&file, agent + 1).is_ok());
        assert!(root_owned(&file).is_err());
        std::os::unix::fs::chown(&sub, Some(0), None).unwrap();
        chmod(&sub, 0o775);
        assert_eq!(
            out_of_reach(&file, agent).unwrap_err().why,
            Why::Writable(0o775)
        );
        chmod(&sub, 0o1777);
        assert!(out_of_reach(&file, agent).is_ok(), "sticky, like /tmp");
        chmod(&file, 0o664);
        let fault = out_of_reach(&file, agent).unwrap_err();
        assert!(fault.is_file && fault.why == Why::Writable(0o664));
        // A link is followed: the file it names is the one judged.
        chmod(&file, 0o644);
        chmod(&sub, 0o755);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(
            out_of_reach(&link, agent).unwrap(),
            file.canonicalize().unwrap()
        );
    }
}
