//! The catalog read only when a decision needs it: from the compiled cache when it is fresh,
//! else from the TOML, with the cache's state for `catalog check`.

use super::index::Catalog;
use super::{CatalogError, cache, load, parse, read_sources};
use std::path::{Path, PathBuf};

/// The catalog, read only when a decision needs it: a command with no guarded program
/// never touches the file. With a cache file, a current compiled index is used instead of
/// parsing the catalog, and is rewritten whenever the catalog had to be parsed.
pub struct LazyCatalog {
    path: PathBuf,
    source: std::cell::OnceCell<CatalogSource>,
    /// Chooses the source at first use: the choice looks at files (is there an operator's
    /// index, whose is the catalog), which a command that needs no catalog should not pay for.
    choose: Option<Box<dyn Fn() -> CatalogSource + Send>>,
    cell: std::cell::OnceCell<Result<Catalog, Vec<CatalogError>>>,
    /// The catalog parsed afresh after the cache failed under a decision.
    fallback: std::cell::OnceCell<Result<Catalog, Vec<CatalogError>>>,
}

/// Where a catalog is read from besides its TOML.
#[derive(Debug, Clone, Default)]
pub struct CatalogSource {
    /// The compiled index kept in this file, if any.
    pub cache: Option<PathBuf>,
    /// The cache is the operator's compiled index: read, never written (decision 0010).
    pub read_only: bool,
    /// The catalog's metadata as the choice took it, before anything of it was read: the
    /// cache's stamp check uses it instead of asking again.
    pub seen: Option<std::fs::Metadata>,
}

impl LazyCatalog {
    pub fn new(path: PathBuf) -> Self {
        LazyCatalog::from_source(path, CatalogSource::default())
    }

    fn from_source(path: PathBuf, source: CatalogSource) -> Self {
        LazyCatalog {
            path,
            source: std::cell::OnceCell::from(source),
            choose: None,
            cell: std::cell::OnceCell::new(),
            fallback: std::cell::OnceCell::new(),
        }
    }

    /// The source chosen by `choose` when the catalog is first needed, not before.
    pub fn chosen_at_first_use(
        path: PathBuf,
        choose: impl Fn() -> CatalogSource + Send + 'static,
    ) -> Self {
        LazyCatalog {
            path,
            source: std::cell::OnceCell::new(),
            choose: Some(Box::new(choose)),
            cell: std::cell::OnceCell::new(),
            fallback: std::cell::OnceCell::new(),
        }
    }

    fn source(&self) -> &CatalogSource {
        self.source
            .get_or_init(|| self.choose.as_ref().map(|c| c()).unwrap_or_default())
    }

    /// Like `new`, with the compiled index kept in the file `cache`.
    pub fn with_cache(path: PathBuf, cache: PathBuf) -> Self {
        LazyCatalog::from_source(
            path,
            CatalogSource {
                cache: Some(cache),
                read_only: false,
                seen: None,
            },
        )
    }

    /// Like `with_cache`, but the index is only read: when it is missing or stale the
    /// catalog is parsed in memory and nothing is written (a hardened install's hook).
    pub fn with_compiled_index(path: PathBuf, index: PathBuf) -> Self {
        LazyCatalog::from_source(
            path,
            CatalogSource {
                cache: Some(index),
                read_only: true,
                seen: None,
            },
        )
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
        let source = self.source();
        if let Some(cache) = &source.cache
            && let Ok(view) = cache::open(cache, &self.path, source.seen.as_ref())
        {
            return Ok(Catalog::cached(view));
        }
        self.load()
    }

    /// Parses the catalog and, with a cache file, rewrites it (best effort: a cache that
    /// cannot be written only costs the next call a parse).
    fn load(&self) -> Result<Catalog, Vec<CatalogError>> {
        // Stamped before reading, so that a change made meanwhile is seen as one.
        let source = self.source();
        let stamps = source
            .cache
            .as_ref()
            .and_then(|_| cache::stamps(&self.path).ok());
        let sources = read_sources(&self.path).map_err(|e| vec![e])?;
        let catalog = parse(&sources)?;
        if source.read_only {
            return Ok(catalog);
        }
        if let (Some(cache), Some(stamps), Some(index)) = (&source.cache, stamps, catalog.memory())
        {
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
    let view = match cache::open(cache, catalog, None) {
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
