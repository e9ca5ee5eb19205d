//! The mesh catalog: its TOML format (version 1), loading a file or a directory of files,
//! and validation whose errors name the file and line.

mod cache;
mod index;
mod lazy;
mod lint;
mod mode;
mod net;
mod shape;

pub use lazy::*;

pub use cache::file_for as cache_file_for;
pub use index::{Catalog, HostBy, HostMatch, MeshObject, ModuleEntry, ToolEntry, is_glob};
pub use mode::{By, Decided, Mode, Modes};
pub use net::Cidr;

use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// One catalog file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    pub version: Option<Spanned<u32>>,
    pub mesh: Option<Spanned<MeshRanges>>,
    pub forge: Option<Spanned<Forge>>,
    #[serde(default)]
    pub machine: Vec<Machine>,
    #[serde(default)]
    pub module: Vec<Module>,
    #[serde(default)]
    pub verb: Vec<Tool>,
    /// Where the record is forwarded; `MESH_GUARD_SYSLOG` wins over it.
    pub record: Option<Spanned<RecordSettings>>,
    /// Report-only mode: `default` and rule families (decision 0060).
    pub mode: Option<Spanned<std::collections::BTreeMap<String, Spanned<String>>>>,
}

/// The `[record]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSettings {
    /// `none`, `journald`, `unix:PATH`, `udp://HOST:PORT` or `tcp://HOST:PORT`.
    pub syslog: Option<Spanned<String>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshRanges {
    #[serde(default)]
    pub domains: Vec<Spanned<String>>,
    #[serde(default)]
    pub networks: Vec<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forge {
    pub machine: Spanned<String>,
    pub git_user: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub name: Spanned<String>,
    #[serde(default)]
    pub aliases: Vec<Spanned<String>>,
    /// Machines named by scheme: any host name this regex matches whole is this machine.
    pub pattern: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    pub name: Spanned<String>,
    #[serde(default)]
    pub machines: Vec<Spanned<String>>,
    #[serde(default)]
    pub containers: Vec<Spanned<String>>,
    #[serde(default)]
    pub units: Vec<Spanned<String>>,
    #[serde(default)]
    pub tool: Vec<Tool>,
    /// `enforce` or `report` for what reaches this module (decision 0060).
    pub mode: Option<Spanned<String>>,
}

/// A seat verb or a module's own tool: what replaces which command shapes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: Spanned<String>,
    pub usage: String,
    #[serde(default)]
    pub replaces: Vec<Spanned<String>>,
}

/// A catalog error, located in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// A source file kept for turning byte offsets into line numbers.
pub(crate) struct Source {
    pub path: PathBuf,
    pub text: String,
    /// Where each line break is, found once: the index builds an error (with its line)
    /// for every machine a module names, and counting from the start each time made
    /// loading quadratic in the catalog's size (10k machines took half a second).
    breaks: std::cell::OnceCell<Vec<usize>>,
}

impl Source {
    fn new(path: PathBuf, text: String) -> Source {
        Source {
            path,
            text,
            breaks: std::cell::OnceCell::new(),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        let breaks = self.breaks.get_or_init(|| {
            self.text
                .bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i)
                .collect()
        });
        // Line breaks before the offset, plus one.
        breaks.partition_point(|&b| b < offset.min(self.text.len())) + 1
    }

    pub(crate) fn error(&self, offset: Option<usize>, message: impl Into<String>) -> CatalogError {
        CatalogError {
            file: self.path.clone(),
            line: offset.map(|o| self.line_of(o)),
            message: message.into(),
        }
    }
}

/// Reads the catalog at `path`: one TOML file, or every `*.toml` under a directory
/// (recursively, in sorted path order so catalog order is stable).
pub fn load(path: &Path) -> Result<Catalog, Vec<CatalogError>> {
    let sources = read_sources(path).map_err(|e| vec![e])?;
    parse(&sources)
}

/// Reads the catalog at `path` as `load` does, and also says what in it can never match:
/// the warnings (see `lint`). `guarded` tells whether a program's base name is one the
/// rules in force guard (a program or a wrapper).
pub fn check(
    path: &Path,
    guarded: &dyn Fn(&str) -> bool,
) -> Result<(Catalog, Vec<CatalogError>), Vec<CatalogError>> {
    let sources = read_sources(path).map_err(|e| vec![e])?;
    let files = parse_files(&sources)?;
    let warnings = lint::warnings(&sources, &files, guarded);
    Ok((index::build(&sources, files)?, warnings))
}

fn parse(sources: &[Source]) -> Result<Catalog, Vec<CatalogError>> {
    index::build(sources, parse_files(sources)?)
}

fn parse_files(sources: &[Source]) -> Result<Vec<CatalogFile>, Vec<CatalogError>> {
    let mut parsed = Vec::with_capacity(sources.len());
    let mut errors = Vec::new();
    for source in sources {
        match toml::from_str::<CatalogFile>(&source.text) {
            Ok(file) => parsed.push(file),
            // The shape is checked only when serde fails: a sound catalog is parsed once.
            Err(e) => {
                let wrong_shape = shape::check(source);
                if wrong_shape.is_empty() {
                    errors.push(
                        source.error(e.span().map(|s| s.start), shape::reword(e.message().trim())),
                    );
                } else {
                    errors.extend(wrong_shape);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(parsed)
}

fn read_sources(path: &Path) -> Result<Vec<Source>, CatalogError> {
    let unreadable = |p: &Path, e: std::io::Error| CatalogError {
        file: p.to_path_buf(),
        line: None,
        message: format!("cannot read the catalog: {e}"),
    };
    files(path)?
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).map_err(|e| unreadable(&file, e))?;
            Ok(Source::new(file, text))
        })
        .collect()
}

/// The catalog's files: `path` itself, or every `*.toml` under it, sorted.
fn files(path: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let unreadable = |p: &Path, e: std::io::Error| CatalogError {
        file: p.to_path_buf(),
        line: None,
        message: format!("cannot read the catalog: {e}"),
    };
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, e))?;
    let mut files = Vec::new();
    if meta.is_dir() {
        collect_toml(path, &mut files).map_err(|e| unreadable(path, e))?;
        files.sort();
        if files.is_empty() {
            return Err(CatalogError {
                file: path.to_path_buf(),
                line: None,
                message: "the catalog directory holds no *.toml file".into(),
            });
        }
    } else {
        files.push(path.to_path_buf());
    }
    Ok(files)
}

fn collect_toml(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect_toml(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod cache_tests;
