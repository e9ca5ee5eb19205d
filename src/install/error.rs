//! Why `install` or `uninstall` stopped: each cause its own variant, printed as one line
//! (the catalog's errors one per line) after `error: `.

use crate::catalog::CatalogError;
use crate::rules::RulesError;
use std::path::PathBuf;

#[derive(Debug)]
pub enum InstallError {
    /// `--agent` names none of [`super::AGENTS`].
    UnknownAgent(String),
    /// A file or directory could not be read, written, made or given its mode.
    File {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// `--bin` cannot be resolved to a file.
    Binary {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The running executable's own path cannot be found.
    NoExecutable(std::io::Error),
    /// The managed scope, run by someone other than root.
    NotRoot { agent: String },
    /// The managed scope's binary is writable by a user other than root; `why` is
    /// `perm::writable_by_non_root`'s sentence.
    BinaryNotHardened { path: PathBuf, why: String },
    /// The catalog to copy does not load.
    InvalidCatalog(Vec<CatalogError>),
    /// The rules to copy do not load.
    InvalidRules(RulesError),
    /// The copied catalog does not compile.
    Uncompiled(Vec<CatalogError>),
    /// A TOML settings file (Codex's requirements) does not parse.
    NotToml {
        path: PathBuf,
        cause: toml::de::Error,
    },
    /// A TOML settings file parses to something other than a table.
    NotTomlTable(PathBuf),
    /// A JSON settings file does not parse.
    NotJson {
        path: PathBuf,
        cause: serde_json::Error,
    },
    /// A JSON settings file parses to something other than an object.
    NotJsonObject(PathBuf),
    /// The merged settings cannot be written as TOML.
    TomlWrite {
        path: PathBuf,
        cause: toml::ser::Error,
    },
}

impl InstallError {
    /// The io error `cause` met at `path`.
    pub(crate) fn file(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> InstallError {
        let path = path.to_path_buf();
        move |cause| InstallError::File { path, cause }
    }
}

fn lines(errors: &[CatalogError]) -> String {
    errors
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::UnknownAgent(agent) => write!(
                f,
                "unknown agent `{agent}`: one of {}",
                super::AGENTS.join(", ")
            ),
            InstallError::File { path, cause } => write!(f, "{}: {cause}", path.display()),
            InstallError::Binary { path, cause } => {
                write!(f, "{}: cannot use as the binary: {cause}", path.display())
            }
            InstallError::NoExecutable(cause) => write!(f, "cannot find this executable: {cause}"),
            InstallError::NotRoot { agent } => write!(
                f,
                "the managed scope writes root-owned system files: run it as root (sudo mesh-guard install {agent} --scope managed)"
            ),
            InstallError::BinaryNotHardened { path, why } => write!(
                f,
                "{} cannot be the hardened hook's binary: {why}; install it root-owned (e.g. sudo install -o root -m 0755 mesh-guard /usr/local/bin/) and pass --bin",
                path.display()
            ),
            InstallError::InvalidCatalog(errors) => write!(
                f,
                "the catalog is invalid, nothing installed:\n{}",
                lines(errors)
            ),
            InstallError::InvalidRules(e) => {
                write!(f, "the rules are invalid, nothing installed: {e}")
            }
            InstallError::Uncompiled(errors) => f.write_str(&lines(errors)),
            InstallError::NotToml { path, cause } => write!(
                f,
                "{}: not valid TOML ({cause}); left unchanged",
                path.display()
            ),
            InstallError::NotTomlTable(path) => {
                write!(f, "{}: not a TOML table; left unchanged", path.display())
            }
            InstallError::NotJson { path, cause } => write!(
                f,
                "{}: not valid JSON ({cause}); left unchanged",
                path.display()
            ),
            InstallError::NotJsonObject(path) => {
                write!(f, "{}: not a JSON object; left unchanged", path.display())
            }
            InstallError::TomlWrite { path, cause } => write!(f, "{}: {cause}", path.display()),
        }
    }
}

impl std::error::Error for InstallError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InstallError::File { cause, .. }
            | InstallError::Binary { cause, .. }
            | InstallError::NoExecutable(cause) => Some(cause),
            InstallError::NotToml { cause, .. } => Some(cause),
            InstallError::NotJson { cause, .. } => Some(cause),
            InstallError::TomlWrite { cause, .. } => Some(cause),
            _ => None,
        }
    }
}
