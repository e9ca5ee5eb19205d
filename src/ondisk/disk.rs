//! The decision's window on the disk: what it may ask (a script's text, a makefile, the
//! container engine's endpoint), implemented here over one bounded [`Reader`], so the
//! decision core names no I/O. Nothing is read until the decision asks, and it asks only for
//! a guarded program or a script it is about to run.

use super::read::{Reader, read_script};
use super::{Value, compose, endpoint, make, podman, recipes, ssh, startup};
use std::cell::{OnceCell, RefCell};
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
    /// Where ssh goes for a destination as typed (`[user@]host`), through the user's
    /// configuration (`-o` lines, `-F FILE`): every host it connects to, and the commands
    /// it runs to get there (`ProxyCommand`).
    fn ssh(&self, destination: &str, options: Vec<String>, config: Option<String>) -> SshRoute;
    /// Whether a program name is found on `PATH` (a file system lookup, no file read).
    fn on_path(&self, name: &str) -> bool;
    /// Whether the program bash would run for `program` (a path, relative to `cwd`, or a
    /// name looked up in `search`, the command's own `PATH` if it sets one, where a part
    /// that cannot be known stands for the session's) is the running guard's own
    /// executable or a copy of it.
    fn is_guard_binary(&self, program: &str, cwd: &Path, search: Option<&str>) -> bool;
    /// What the user's startup files define a name as.
    fn definition(&self, name: &str) -> Definition;
    /// The services of the compose project a `docker compose` command would load.
    fn compose(&self, query: &compose::Query, own: Own) -> compose::Project;
    /// The recipes a task runner reads from its file (`package.json`, a justfile, …).
    fn recipes(&self, lookup: &recipes::Lookup) -> recipes::Found;
    /// The text of a file a command reads as its input (`< hosts.txt`), if readable.
    fn input(&self, path: &Path) -> Option<String>;
    /// Whether `path` is a directory now (links followed).
    fn is_directory(&self, path: &Path) -> bool;
}

/// A name as the user's startup files define it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Definition {
    /// `alias name='text'`: the text replaces the name.
    Alias(String),
    /// `name() { body; }`: the body runs with the words after the name as `$1…`.
    Function(String),
    /// Defined, but not knowably (twice, or in a file that could not be read whole).
    Unknown,
    /// Not defined.
    None,
}

/// What ssh's configuration makes of a destination.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshRoute {
    /// The host names connected to, in order (jumps, then the destination); unknown ones
    /// as [`Value::Unknown`].
    pub hosts: Vec<Value>,
    /// `ProxyCommand`s, to be judged as shell code.
    pub commands: Vec<String>,
    /// Words the configuration may make a host of, where it cannot say which applies.
    pub possible: Vec<String>,
    /// The user the configuration names for the destination (`User git`), if it does.
    pub user: Option<String>,
}

fn route(resolved: &ssh::Resolved, out: &mut SshRoute) {
    out.possible.extend(resolved.possible.iter().cloned());
    match &resolved.proxy {
        ssh::Proxy::None => {}
        ssh::Proxy::Jumps(hops) => hops.iter().for_each(|hop| route(hop, out)),
        ssh::Proxy::Command(text) => out.commands.push(text.clone()),
        ssh::Proxy::Unknown => out.hosts.push(Value::Unknown),
    }
    out.hosts.push(resolved.hostname.clone());
    out.user.clone_from(&resolved.configured_user);
}

/// The hook's own environment, as the world gives it (`world::Environment`).
pub type EnvLookup = std::rc::Rc<dyn Fn(&str) -> Option<String>>;

/// The disk as the hook sees it: the session's environment and one home (the user
/// database's, decision 0068), one reader per call.
pub struct OnDisk {
    /// The one home every reader takes; computed when first wanted (a hook's is the user
    /// database's, read only when the decision needs the disk).
    home: OnceCell<Option<String>>,
    account: bool,
    reader: RefCell<Reader>,
    startup: OnceCell<startup::Definitions>,
    /// Names already looked for on `PATH`, for this one decision.
    on_path: RefCell<std::collections::HashMap<String, bool>>,
    /// The session's variables (`DOCKER_HOST`, `PATH`, `USER`), from the world, never
    /// from `std::env`: one environment for the whole decision.
    env: EnvLookup,
}

impl std::fmt::Debug for OnDisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnDisk").field("home", &self.home).finish()
    }
}

impl OnDisk {
    pub fn new(home: Option<&Path>, env: EnvLookup) -> OnDisk {
        OnDisk {
            env,
            home: OnceCell::from(home.map(|h| h.to_string_lossy().into_owned())),
            account: false,
            reader: RefCell::new(Reader::default()),
            startup: OnceCell::new(),
            on_path: RefCell::default(),
        }
    }

    /// The disk under the account's home as the user database gives it (a hook's,
    /// decision 0059), read when first wanted.
    pub fn for_account(env: EnvLookup) -> OnDisk {
        OnDisk {
            home: OnceCell::new(),
            account: true,
            ..OnDisk::new(None, env)
        }
    }

    fn home(&self) -> Option<&String> {
        self.home
            .get_or_init(|| {
                debug_assert!(self.account);
                crate::perm::account_home().map(|h| h.to_string_lossy().into_owned())
            })
            .as_ref()
    }

    fn env(&self, own: Own, name: &str) -> Option<String> {
        own(name).or_else(|| (self.env)(name))
    }

    /// The session's `PATH`, as the hook inherited it.
    fn session_path(&self) -> Vec<std::path::PathBuf> {
        (self.env)("PATH")
            .map(|path| std::env::split_paths(&path).collect())
            .unwrap_or_default()
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
        let env = |name: &str| self.env(own, name);
        match self.home() {
            Some(home) => endpoint::docker(&env, home, context, &mut *self.reader.borrow_mut()),
            None => Value::Unknown,
        }
    }

    fn ssh(&self, destination: &str, options: Vec<String>, config: Option<String>) -> SshRoute {
        let Some(dest) = ssh::parse_destination(destination, false) else {
            return SshRoute::default();
        };
        let user = (self.env)("USER");
        // ssh reads `~/.ssh/config` under the passwd entry's home, the one this disk has:
        // one home, one route (two made the first home's destination a jump of the second's).
        let mut out = SshRoute::default();
        let Some(home) = self.home().map(String::as_str) else {
            return out;
        };
        let context = ssh::Context {
            home,
            local_user: user.as_deref(),
        };
        let sources = ssh::sources(home, options, config);
        let resolved = ssh::resolve(&sources, &dest, &context, &mut *self.reader.borrow_mut());
        route(&resolved, &mut out);
        out
    }

    fn on_path(&self, name: &str) -> bool {
        if let Some(&found) = self.on_path.borrow().get(name) {
            return found;
        }
        let found = (self.env)("PATH")
            .is_some_and(|path| find_executable(name, std::env::split_paths(&path)).is_some());
        self.on_path.borrow_mut().insert(name.to_string(), found);
        found
    }

    fn is_guard_binary(&self, program: &str, cwd: &Path, search: Option<&str>) -> bool {
        let found = if program.contains('/') {
            Some(cwd.join(program))
        } else {
            let dirs = match search {
                None => self.session_path(),
                Some(search) => search
                    .split(':')
                    .flat_map(|dir| match dir {
                        dir if dir.contains(crate::shell::UNKNOWN) => self.session_path(),
                        // An empty entry is the working directory.
                        "" => vec![cwd.to_path_buf()],
                        dir => vec![cwd.join(dir)],
                    })
                    .collect(),
            };
            find_executable(program, dirs)
        };
        found.is_some_and(|path| same_executable(&path, Path::new("/proc/self/exe")))
    }

    fn definition(&self, name: &str) -> Definition {
        let Some(home) = self.home() else {
            return Definition::None;
        };
        let definitions = self
            .startup
            .get_or_init(|| startup::read(home, &mut *self.reader.borrow_mut()));
        let found = |map: &std::collections::BTreeMap<String, Value>| map.get(name).cloned();
        match (found(&definitions.aliases), found(&definitions.functions)) {
            // bash expands an alias before it looks for a function.
            (Some(Value::Known(text)), _) => Definition::Alias(text),
            (Some(Value::Unknown), _) | (None, Some(Value::Unknown)) => Definition::Unknown,
            (None, Some(Value::Known(body))) => Definition::Function(body),
            (None, None) => Definition::None,
        }
    }

    fn compose(&self, query: &compose::Query, own: Own) -> compose::Project {
        let env = |name: &str| self.env(own, name);
        compose::project(query, &env, &mut *self.reader.borrow_mut())
    }

    fn input(&self, path: &Path) -> Option<String> {
        use super::read::{Files, Read};
        match self.reader.borrow_mut().read(&path.to_string_lossy()) {
            Read::Text(text) => Some(text),
            Read::Absent | Read::Unreadable => None,
        }
    }

    fn is_directory(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn recipes(&self, lookup: &recipes::Lookup) -> recipes::Found {
        recipes::find(lookup, &mut *self.reader.borrow_mut())
    }

    fn podman(&self, own: Own, flags: &podman::Flags) -> podman::Endpoint {
        let env = |name: &str| self.env(own, name);
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        match self.home() {
            Some(home) => podman::podman(&env, home, uid, flags, &mut *self.reader.borrow_mut()),
            None => podman::Endpoint::Unknown,
        }
    }
}

/// The first executable file named `name` in `dirs`, as bash's lookup finds it. A folder
/// named twice (a profile that prepends it again) holds nothing new the second time: it is
/// looked in once.
fn find_executable(
    name: &str,
    dirs: impl IntoIterator<Item = std::path::PathBuf>,
) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut looked = std::collections::HashSet::new();
    for dir in dirs {
        if looked.contains(&dir) {
            continue;
        }
        let path = dir.join(name);
        if std::fs::metadata(&path)
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        {
            return Some(path);
        }
        looked.insert(dir);
    }
    None
}

/// Whether `path` is the executable `own` names: the same file (a link to it), or a copy of
/// its bytes. Files of another size are told apart by one `stat`; only a file of the same size
/// is read, and only until its first difference. A file of the same size that cannot be read
/// whole (mode 111: runnable, not readable) may be a copy: it counts as one (fail closed).
fn same_executable(path: &Path, own: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let (Ok(meta), Ok(own_meta)) = (std::fs::metadata(path), std::fs::metadata(own)) else {
        return false;
    };
    if !meta.is_file() || meta.len() != own_meta.len() {
        return false;
    }
    if (meta.dev(), meta.ino()) == (own_meta.dev(), own_meta.ino()) {
        return true;
    }
    // Non-blocking: a FIFO put there since the `stat` reads as empty instead of hanging,
    // and compares as the guard (refused): the side that fails closed.
    let open = |p: &Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(p)
    };
    let (Ok(mut file), Ok(mut mine)) = (open(path), open(own)) else {
        return true;
    };
    let (mut a, mut b) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = match file.read(&mut a) {
            Ok(n) => n,
            Err(_) => return true,
        };
        if n == 0 {
            return true;
        }
        if mine.read_exact(&mut b[..n]).is_err() {
            return true;
        }
        if a[..n] != b[..n] {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home with `Host ALIAS` going to `target` in its ssh configuration.
    fn home_with(alias: &str, target: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".ssh")).unwrap();
        std::fs::write(
            home.path().join(".ssh/config"),
            format!("Host {alias}\n  HostName {target}\n"),
        )
        .unwrap();
        home
    }

    #[test]
    fn one_home_is_read_and_its_destination_is_the_only_host() {
        let home = home_with("cache", "atlas");
        let other = home_with("cache", "vega");
        let known = |h: &str| Value::Known(h.to_string());
        let disk = OnDisk::new(Some(home.path()), std::rc::Rc::new(|_: &str| None));
        // The home's alias alone: never the other home's too, which had made the first
        // destination read as a jump of the second (`ssh <machine> -J <machine>`).
        assert_eq!(
            disk.ssh("cache", Vec::new(), None).hosts,
            vec![known("atlas")]
        );
        let disk = OnDisk::new(Some(other.path()), std::rc::Rc::new(|_: &str| None));
        assert_eq!(
            disk.ssh("cache", Vec::new(), None).hosts,
            vec![known("vega")]
        );
    }
}
