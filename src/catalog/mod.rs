//! The mesh catalog: its TOML format (version 1), loading a file or a directory of files,
//! and validation whose errors name the file and line.

mod cache;
mod index;
mod lint;
mod net;
mod shape;

pub use cache::file_for as cache_file_for;
pub use index::{Catalog, HostBy, HostMatch, MeshObject, ModuleEntry, ToolEntry};
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

/// The catalog, read only when a decision needs it: a command with no guarded program
/// never touches the file. With a cache file, a current compiled index is used instead of
/// parsing the catalog, and is rewritten whenever the catalog had to be parsed.
pub struct LazyCatalog {
    path: PathBuf,
    cache: Option<PathBuf>,
    /// The cache is the operator's compiled index: read, never written (decision 0010).
    read_only: bool,
    cell: std::cell::OnceCell<Result<Catalog, Vec<CatalogError>>>,
    /// The catalog parsed afresh after the cache failed under a decision.
    fallback: std::cell::OnceCell<Result<Catalog, Vec<CatalogError>>>,
}

impl LazyCatalog {
    pub fn new(path: PathBuf) -> Self {
        LazyCatalog {
            path,
            cache: None,
            read_only: false,
            cell: std::cell::OnceCell::new(),
            fallback: std::cell::OnceCell::new(),
        }
    }

    /// Like `new`, with the compiled index kept in the file `cache`.
    pub fn with_cache(path: PathBuf, cache: PathBuf) -> Self {
        LazyCatalog {
            cache: Some(cache),
            ..LazyCatalog::new(path)
        }
    }

    /// Like `with_cache`, but the index is only read: when it is missing or stale the
    /// catalog is parsed in memory and nothing is written (a hardened install's hook).
    pub fn with_compiled_index(path: PathBuf, index: PathBuf) -> Self {
        LazyCatalog {
            read_only: true,
            ..LazyCatalog::with_cache(path, index)
        }
    }

    /// An already loaded catalog (tests, benchmarks).
    pub fn ready(catalog: Catalog) -> Self {
        let lazy = LazyCatalog::new(PathBuf::new());
        let _ = lazy.cell.set(Ok(catalog));
        lazy
    }

    pub fn get(&self) -> Result<&Catalog, &[CatalogError]> {
        let loaded = match self.fallback.get() {
            Some(fresh) => fresh,
            None => self.cell.get_or_init(|| self.open()),
        };
        loaded.as_ref().map_err(Vec::as_slice)
    }

    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn open(&self) -> Result<Catalog, Vec<CatalogError>> {
        if let Some(cache) = &self.cache
            && let Ok(view) = cache::open(cache, &self.path)
        {
            return Ok(Catalog::cached(view));
        }
        self.load()
    }

    /// Parses the catalog and, with a cache file, rewrites it (best effort: a cache that
    /// cannot be written only costs the next call a parse).
    fn load(&self) -> Result<Catalog, Vec<CatalogError>> {
        // Stamped before reading, so that a change made meanwhile is seen as one.
        let stamps = self
            .cache
            .as_ref()
            .and_then(|_| cache::stamps(&self.path).ok());
        let sources = read_sources(&self.path).map_err(|e| vec![e])?;
        let catalog = parse(&sources)?;
        if self.read_only {
            return Ok(catalog);
        }
        if let (Some(cache), Some(stamps), Some(index)) = (&self.cache, stamps, catalog.memory()) {
            let _ = cache::write(
                cache,
                &self.path,
                &stamps,
                cache::content_hash(&sources),
                index,
            );
        }
        Ok(catalog)
    }

    /// After a decision: if the cache failed under it (a short read, a checksum that did
    /// not match), parses the catalog itself and says so; the decision must be made again.
    pub fn recover(&self) -> bool {
        if self.fallback.get().is_some() || !matches!(self.cell.get(), Some(Ok(c)) if c.is_broken())
        {
            return false;
        }
        let _ = self.fallback.set(self.load());
        true
    }
}

/// The compiled index an operator keeps beside the catalog: `<catalog>.idx` in the
/// catalog's own directory (`catalog.toml.idx`, or `catalog.idx` for a directory catalog).
pub fn compiled_index_for(catalog: &Path) -> PathBuf {
    let absolute = std::path::absolute(catalog).unwrap_or_else(|_| catalog.to_path_buf());
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "catalog".into());
    absolute.with_file_name(format!("{name}.idx"))
}

/// Parses the catalog and writes its compiled index to `index`. Waits out the catalog's
/// racy window first (decision 0006), so that the index is proven current by stamps alone
/// and a hook that cannot write it never has to hash the catalog's content.
pub fn compile(catalog: &Path, index: &Path) -> Result<Catalog, Vec<CatalogError>> {
    let unreadable = |e: std::io::Error| {
        vec![CatalogError {
            file: catalog.to_path_buf(),
            line: None,
            message: format!("cannot read the catalog: {e}"),
        }]
    };
    let mut stamps = cache::stamps(catalog).map_err(unreadable)?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    while stamps
        .iter()
        .any(|s| s.changed_since(std::time::SystemTime::now()))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(250));
        stamps = cache::stamps(catalog).map_err(unreadable)?;
    }
    let sources = read_sources(catalog).map_err(|e| vec![e])?;
    let parsed = parse(&sources)?;
    if let Some(memory) = parsed.memory() {
        cache::write(
            index,
            catalog,
            &stamps,
            cache::content_hash(&sources),
            memory,
        )
        .map_err(|e| {
            vec![CatalogError {
                file: index.to_path_buf(),
                line: None,
                message: format!("cannot write the compiled index: {e}"),
            }]
        })?;
    }
    Ok(parsed)
}

#[cfg(test)]
mod cache_tests;

/// What `catalog check` finds of the compiled cache beside a valid catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheState {
    /// None yet, or one the hook will rebuild (stale, damaged): nothing trusts it.
    NotInUse(&'static str),
    /// Current, and it answers every name as the catalog does.
    Agrees,
    /// Current by its stamps, yet it answers otherwise: forged or corrupted in place.
    Disagrees(String),
}

/// Compares the cache a hook would trust with the catalog itself, parsed afresh.
pub fn check_cache(catalog: &Path, cache: &Path) -> CacheState {
    let view = match cache::open(cache, catalog) {
        Ok(view) => view,
        Err(cache::Miss::Absent) => return CacheState::NotInUse("absent"),
        Err(cache::Miss::Stale) => return CacheState::NotInUse("stale, rebuilt at next use"),
        Err(cache::Miss::Corrupt) => {
            return CacheState::NotInUse("damaged, rebuilt at next use");
        }
    };
    let fresh = match load(catalog) {
        Ok(c) => c,
        Err(_) => return CacheState::Disagrees("the catalog itself does not load".into()),
    };
    match fresh
        .memory()
        .and_then(|index| cache::disagreement(&view, index))
    {
        Some(why) => CacheState::Disagrees(why),
        None => CacheState::Agrees,
    }
}
