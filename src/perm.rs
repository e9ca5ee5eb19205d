//! Who may write a file: the process's own user, and any named user's write access
//! worked out from owners, groups and modes (no `libc`: `/proc/self`, `/etc/passwd` and
//! `/etc/group` say it), so that `doctor` run as root can answer for the agent's user.

use std::path::{Path, PathBuf};

/// A user as the permission checks need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gids: Vec<u32>,
    pub home: PathBuf,
}

/// The effective uid of this process: one system call, where a `stat` of `/proc/self`
/// said the same with a path lookup.
pub fn current_uid() -> Option<u32> {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        Some(unsafe { libc::geteuid() })
    }
    #[cfg(not(unix))]
    None
}

/// True when the file `meta` describes belongs to another user than this process's: a file
/// the process must treat as someone else's (it never writes beside it).
pub fn belongs_to_other(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        current_uid().is_some_and(|uid| meta.uid() != uid)
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

fn passwd_fields(line: &str) -> Option<(String, u32, u32, PathBuf)> {
    let f: Vec<&str> = line.split(':').collect();
    if f.len() < 7 {
        return None;
    }
    Some((
        f[0].to_string(),
        f[2].parse().ok()?,
        f[3].parse().ok()?,
        PathBuf::from(f[5]),
    ))
}

/// The home directory of the process's real user in `/etc/passwd`, where ssh takes `~`
/// from (not `$HOME`); none when the user is not in the file (an NSS-only account).
pub fn passwd_home() -> Option<PathBuf> {
    #[cfg(unix)]
    {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        home_in(&std::fs::read_to_string("/etc/passwd").ok()?, uid)
    }
    #[cfg(not(unix))]
    None
}

/// The home of the process's real user as the system's user database gives it, never
/// `HOME`: on Linux from `/etc/passwd` (a static glibc binary must not load NSS's modules,
/// decision 0014), elsewhere from `getpwuid_r`.
pub fn account_home() -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        passwd_home().filter(|h| !h.as_os_str().is_empty())
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: `passwd` is plain old data; all zeroes is a valid value to be filled in.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buffer = vec![0 as libc::c_char; 16 * 1024];
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: the buffer and entry outlive the call; `found` points into them on success.
        let status = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut entry,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut found,
            )
        };
        if status != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: pw_dir is a NUL-terminated string in `buffer`.
        let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes())))
            .filter(|h| !h.as_os_str().is_empty())
    }
    #[cfg(not(unix))]
    None
}

/// `uid`'s home in the text of a password file.
fn home_in(passwd: &str, uid: u32) -> Option<PathBuf> {
    passwd
        .lines()
        .filter_map(passwd_fields)
        .find(|(_, u, ..)| *u == uid)
        .map(|(.., home)| home)
}

/// Looks a user up by name or uid in `/etc/passwd`, with the groups `/etc/group` gives.
pub fn lookup(name_or_uid: &str) -> Option<User> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let (name, uid, gid, home) = passwd
        .lines()
        .filter_map(passwd_fields)
        .find(|(n, uid, ..)| n == name_or_uid || uid.to_string() == name_or_uid)?;
    let mut gids = vec![gid];
    if let Ok(groups) = std::fs::read_to_string("/etc/group") {
        for line in groups.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() >= 4
                && f[3].split(',').any(|m| m == name)
                && let Ok(g) = f[2].parse()
            {
                gids.push(g);
            }
        }
    }
    Some(User {
        name,
        uid,
        gids,
        home,
    })
}

/// Whether `user` may change `path`: write the file itself (or create it, if absent), or
/// replace it through a directory on its way (write access to a parent, unless that
/// parent is sticky and neither it nor the entry is the user's). Root may change anything.
pub fn can_change(user: &User, path: &Path) -> bool {
    if user.uid == 0 {
        return true;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if std::fs::metadata(&absolute).is_ok_and(|_| may(user, &absolute, 0o2)) {
        return true;
    }
    let mut child = absolute.clone();
    let mut parent = absolute.parent();
    while let Some(dir) = parent {
        if std::fs::metadata(dir).is_ok()
            && may(user, dir, 0o2)
            && !sticky_protects(user, dir, &child)
        {
            return true;
        }
        child = dir.to_path_buf();
        parent = dir.parent();
    }
    false
}

/// `bit` is 0o4 (read), 0o2 (write) or 0o1 (execute), checked as the kernel would for `user`.
/// Whether `user` may read `path`: its read bit for them, and every directory on the way
/// searchable by them. Root may read anything.
pub fn can_read(user: &User, path: &Path) -> bool {
    if user.uid == 0 {
        return true;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    may(user, &absolute, 0o4) && absolute.ancestors().skip(1).all(|dir| may(user, dir, 0o1))
}

fn may(user: &User, path: &Path, bit: u32) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        let mode = meta.mode();
        if meta.uid() == user.uid {
            mode & (bit << 6) != 0
        } else if user.gids.contains(&meta.gid()) {
            mode & (bit << 3) != 0
        } else {
            mode & bit != 0
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (user, path, bit);
        false
    }
}

/// A sticky directory (like /tmp) lets only the owner of an entry (or of the directory)
/// rename or remove it.
fn sticky_protects(user: &User, dir: &Path, entry: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(dir) else {
            return false;
        };
        let entry_owner = std::fs::symlink_metadata(entry).map(|m| m.uid()).ok();
        meta.mode() & 0o1000 != 0
            && meta.uid() != user.uid
            && entry_owner.is_some_and(|o| o != user.uid)
    }
    #[cfg(not(unix))]
    {
        let _ = (user, dir, entry);
        false
    }
}

/// Whether anyone but root may change `path` (itself or a directory on its way): the
/// test for a binary that a managed hook may name.
pub fn writable_by_non_root(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut entry: Option<PathBuf> = None;
        let mut at = Some(absolute.as_path());
        while let Some(p) = at {
            let Ok(meta) = std::fs::metadata(p) else {
                return Some(format!("{} cannot be read", p.display()));
            };
            let sticky_keeps = meta.mode() & 0o1000 != 0
                && meta.uid() == 0
                && entry
                    .as_ref()
                    .and_then(|e| std::fs::symlink_metadata(e).ok())
                    .is_some_and(|m| m.uid() == 0);
            if meta.uid() != 0 {
                return Some(format!(
                    "{} is owned by uid {}, not root",
                    p.display(),
                    meta.uid()
                ));
            }
            if meta.mode() & 0o022 != 0 && !sticky_keeps {
                return Some(format!(
                    "{} is writable by its group or by others (mode {:o})",
                    p.display(),
                    meta.mode() & 0o7777
                ));
            }
            entry = Some(p.to_path_buf());
            at = p.parent();
        }
        None
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Some("ownership cannot be checked on this platform".into())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn stranger() -> User {
        User {
            name: "stranger".into(),
            uid: 54_321,
            gids: vec![54_321],
            home: PathBuf::from("/nonexistent"),
        }
    }

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_user_can_change_a_file_it_may_write_or_replace_through_its_directory() {
        if current_uid() != Some(0) {
            return; // the files must belong to someone else than the stranger: root's
        }
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let file = sub.join("catalog.toml");
        std::fs::write(&file, "").unwrap();
        chmod(dir.path(), 0o755);
        chmod(&sub, 0o755);
        chmod(&file, 0o644);
        assert!(!can_change(&stranger(), &file));
        chmod(&file, 0o666);
        assert!(can_change(&stranger(), &file));
        chmod(&file, 0o644);
        chmod(&sub, 0o777);
        assert!(
            can_change(&stranger(), &file),
            "replaced through its directory"
        );
        // Sticky, like /tmp: others' entries cannot be replaced.
        chmod(&sub, 0o1777);
        assert!(!can_change(&stranger(), &file));
        assert!(writable_by_non_root(&file).is_none());
        chmod(&file, 0o664);
        assert!(writable_by_non_root(&file).unwrap().contains("mode 664"));
    }

    #[test]
    fn a_uids_home_is_its_own_line_and_none_without_one() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      broken line\n\
                      agent:x:1000:1000::/home/agent:/bin/sh\n";
        assert_eq!(home_in(passwd, 1000), Some(PathBuf::from("/home/agent")));
        assert_eq!(home_in(passwd, 0), Some(PathBuf::from("/root")));
        assert_eq!(home_in(passwd, 1001), None);
    }
}
