//! An operator with an SSH key listed in `allowed_signers` beside a copy of the example
//! catalog, who signs override grants with the real `ssh-keygen -Y sign`.

use super::{Output, Scratch, example_catalog, run_env};
use std::path::PathBuf;
use std::process::Command;

pub struct Operator {
    pub dir: Scratch,
    pub catalog: PathBuf,
    pub db: PathBuf,
    pub key: PathBuf,
}

/// A new key pair, without a passphrase, at `path` (and `path.pub`).
pub fn keygen(path: &std::path::Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "operator", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs (OpenSSH's ssh-keygen is needed by these tests)");
    assert!(status.success());
}

impl Operator {
    /// The key is allowed with `options` (`namespaces="mesh-guard-override"`, …).
    pub fn with_options(name: &str, options: &str) -> Operator {
        // The hook trusts a list only out of the reach of the account it runs as (decision
        // 0069): root's, here, for a hook run as root or as another account.
        // SAFETY: geteuid has no preconditions.
        assert!(
            unsafe { libc::geteuid() } == 0,
            "the override tests need root: allowed_signers must belong to another account than the hook's"
        );
        let dir = Scratch::new(name);
        let catalog = dir.path("etc/catalog.toml");
        std::fs::create_dir_all(catalog.parent().unwrap()).unwrap();
        std::fs::copy(example_catalog(), &catalog).unwrap();
        let key = dir.path("operator_key");
        keygen(&key);
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        dir.write(
            "etc/allowed_signers",
            &format!("# who may sign\nalice@ops {options} {public}"),
        );
        // Root's, and writable by no group or others, every directory above it too.
        use std::os::unix::fs::PermissionsExt;
        for (path, mode) in [
            (dir.0.clone(), 0o755),
            (catalog.parent().unwrap().to_path_buf(), 0o755),
            (catalog.with_file_name("allowed_signers"), 0o644),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let db = dir.path("audit.db");
        Operator {
            dir,
            catalog,
            db,
            key,
        }
    }

    pub fn new(name: &str) -> Operator {
        Operator::with_options(name, "namespaces=\"mesh-guard-override\"")
    }

    /// The global options a hook is installed with.
    pub fn paths(&self) -> Vec<String> {
        vec![
            "--catalog".into(),
            self.catalog.to_string_lossy().into_owned(),
            "--db".into(),
            self.db.to_string_lossy().into_owned(),
        ]
    }

    /// `mesh-guard override grant ARGS -f KEY`, and the grant out of the line it printed.
    pub fn grant(&self, args: &[&str]) -> String {
        let out = self.grant_command(args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let line = out.stdout.trim();
        line.strip_prefix("export MESH_GUARD_OVERRIDE=")
            .unwrap_or_else(|| panic!("an export line: {line}"))
            .to_string()
    }

    pub fn grant_command(&self, args: &[&str]) -> Output {
        let mut all = vec![
            "--catalog",
            self.catalog.to_str().unwrap(),
            "override",
            "grant",
        ];
        all.extend(args);
        all.extend(["-f", self.key.to_str().unwrap()]);
        run_env(&all, &[], b"")
    }

    /// A grant of any message, signed by `key` with `ssh-keygen -Y sign` in `namespace`.
    pub fn sign(&self, key: &std::path::Path, namespace: &str, message: &str) -> String {
        let message_file = self.dir.write("message", message);
        let status = Command::new("ssh-keygen")
            .args(["-q", "-Y", "sign", "-n", namespace, "-f"])
            .arg(key)
            .arg(&message_file)
            .status()
            .unwrap();
        assert!(status.success());
        let armored = std::fs::read_to_string(message_file.with_extension("sig")).unwrap();
        std::fs::remove_file(message_file.with_extension("sig")).unwrap();
        mesh_guard::grant::encode(message, &armored).unwrap()
    }

    /// The hook answering a Bash event under `grant` (none: no variable).
    pub fn hook(&self, grant: Option<&str>, command: &str) -> Output {
        let paths = self.paths();
        let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
        args.push("hook");
        let env: Vec<(&str, String)> = grant
            .map(|g| ("MESH_GUARD_OVERRIDE", g.to_string()))
            .into_iter()
            .collect();
        run_env(&args, &env, &super::bash_event(command))
    }
}

/// A grant message as `override grant` writes one, with the times given (UTC ms).
pub fn message(scope: &str, host: &str, issued_ms: i64, expires_ms: i64) -> String {
    mesh_guard::grant::Grant {
        reason: "incident 4711".into(),
        scope: scope.into(),
        host: host.into(),
        issued_ms: issued_ms / 1000 * 1000,
        expires_ms: expires_ms / 1000 * 1000,
        nonce: "00112233445566778899aabb".into(),
    }
    .render()
}

/// This host's name, as the guard reads it.
pub fn host() -> String {
    let out = Command::new("uname").arg("-n").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
