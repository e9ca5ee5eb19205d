//! The recipes a task runner reads from a file in the project (`package.json` scripts, a
//! justfile, `Taskfile.yml`, `Makefile.toml`, `pyproject.toml`, `tox.ini`, `noxfile.py`):
//! found as the runner finds the file (`rules/runners.toml`), each format read into one
//! shape, [`Recipes`]. Pure readers over text plus the lookup through the bounded [`Files`].
//!
//! Every value is exact or unknown: an interpolation the reader cannot compute is the
//! walk's unknown mark, a part of the file it does not read is [`Step::Unknown`], and a
//! file it cannot read is [`Found::Unreadable`].

mod cargo_make;
mod justfile;
mod nox;
mod package_json;
mod pyproject;
mod taskfile;
mod tox;
mod tox_toml;

use super::read::{Files, Read};
use crate::rules::runner::Format;

/// One thing a recipe does, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Shell code it runs.
    Shell(String),
    /// Another recipe of the file it runs, with arguments.
    Recipe(String, Vec<String>),
    /// Python code in a file of the project (an entry point `pkg.module:function`): the
    /// candidate paths of the module, relative to the recipes' directory, first found wins.
    Python(Vec<String>),
    /// Something it runs that this reader cannot tell (a Python function, a template).
    Unknown,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipe {
    pub name: String,
    /// Positional parameters (a justfile's), bound to the words after the recipe's name.
    pub params: Vec<String>,
    /// A parameter that takes every remaining word (`*args`, `+args`).
    pub variadic: bool,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipes {
    /// The file as shown in a refusal (`package.json`, `site/package.json`).
    pub shown: String,
    /// The directory the recipes run in.
    pub dir: String,
    pub recipes: Vec<Recipe>,
    /// What runs when no recipe is named.
    pub default: Vec<String>,
    /// Shell code run while the file is read (a justfile's backticks).
    pub parse_time: Vec<String>,
    /// Part of the file was not read (an include, an import): a name not found may exist.
    pub partial: bool,
    /// What a name the file does not define runs, where the runner runs something for any
    /// name (tox: `[testenv]`'s commands).
    pub fallback: Option<Vec<Step>>,
    /// Recipes hold `{{…}}` interpolations (just, task): the caller fills known ones.
    pub templated: bool,
    /// Variables the file gives a literal value, as an interpolation names them (`host`,
    /// `.HOST`): a parameter of the same name comes first.
    pub variables: Vec<(String, String)>,
}

impl Recipes {
    pub fn get(&self, name: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|r| r.name == name)
    }
}

/// What looking for a runner's file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Recipes(Recipes),
    /// No such file: the runner fails and runs nothing.
    Absent,
    /// There, but not readable within the bounds, or not in a form read here.
    Unreadable(String),
}

/// Where to look: the runner's files, from `cwd`, or the file/directory its options name.
#[derive(Debug, Clone)]
pub struct Lookup<'a> {
    pub format: Format,
    pub files: &'a [String],
    pub upward: bool,
    pub cwd: &'a str,
    pub file: Option<&'a str>,
    pub dir: Option<&'a str>,
}

/// Directories looked through upward, at most (a deep tree is not walked to `/` forever).
const MAX_UPWARD: usize = 32;

/// The runner's file, as the runner finds it, read and parsed.
pub fn find(lookup: &Lookup, files: &mut dyn Files) -> Found {
    let absolute = |base: &str, path: &str| {
        if path.starts_with('/') {
            path.to_string()
        } else {
            format!("{}/{path}", base.trim_end_matches('/'))
        }
    };
    let start = match lookup.dir {
        Some(dir) => absolute(lookup.cwd, dir),
        None => lookup.cwd.to_string(),
    };
    if let Some(file) = lookup.file {
        let path = absolute(&start, file);
        let dir = path.rsplit_once('/').map_or("/", |(d, _)| d).to_string();
        // A file named by option runs its recipes in its own directory unless one is given.
        let dir = if lookup.dir.is_some() {
            start.clone()
        } else {
            dir
        };
        // `just -d DIR -f FILE`: the file is named from where the runner was started, the
        // directory only where its recipes run; a runner that reads it from DIR is read too.
        let found = read_one(lookup.format, &path, file, dir.clone(), files);
        if lookup.dir.is_some() && found == Found::Absent && !file.starts_with('/') {
            let from_cwd = absolute(lookup.cwd, file);
            return read_one(lookup.format, &from_cwd, file, dir, files);
        }
        return found;
    }
    let mut dir = start.clone();
    for _ in 0..MAX_UPWARD {
        for name in lookup.files {
            let path = absolute(&dir, name);
            match read_one(
                lookup.format,
                &path,
                &shown(lookup.cwd, &path),
                dir.clone(),
                files,
            ) {
                Found::Absent => continue,
                found => return found,
            }
        }
        if !lookup.upward || dir == "/" || dir.is_empty() {
            return Found::Absent;
        }
        dir = dir
            .rsplit_once('/')
            .map_or("/", |(d, _)| if d.is_empty() { "/" } else { d })
            .to_string();
    }
    Found::Unreadable(format!(
        "no {} within {MAX_UPWARD} directories",
        lookup.files[0]
    ))
}

/// A path as a refusal shows it: relative to where the command runs when under it.
fn shown(cwd: &str, path: &str) -> String {
    path.strip_prefix(cwd)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(path)
        .to_string()
}

fn read_one(format: Format, path: &str, shown: &str, dir: String, files: &mut dyn Files) -> Found {
    let text = match files.read(path) {
        Read::Text(text) => text,
        Read::Absent => return Found::Absent,
        Read::Unreadable => return Found::Unreadable(shown.to_string()),
    };
    match parse(format, path, &text) {
        Parsed::Recipes(recipes) => Found::Recipes(Recipes {
            shown: shown.to_string(),
            dir,
            ..recipes
        }),
        Parsed::NoTable => Found::Absent,
        Parsed::Unreadable => Found::Unreadable(shown.to_string()),
    }
}

enum Parsed {
    Recipes(Recipes),
    /// A `pyproject.toml` without tox's table: as if there were no file.
    NoTable,
    Unreadable,
}

/// Every format's reader, apart from `read_one`: they make a large function, which a runner
/// whose file is absent (the commonest case) need not have paged in.
#[inline(never)]
fn parse(format: Format, path: &str, text: &str) -> Parsed {
    let parsed = match format {
        Format::PackageJson => package_json::parse(text),
        Format::Justfile => justfile::parse(text),
        Format::Taskfile => taskfile::parse(text),
        Format::CargoMake => cargo_make::parse(text),
        Format::Pdm => pyproject::pdm(text),
        Format::Poetry => pyproject::poetry(text),
        Format::Tox if path.ends_with("pyproject.toml") => match tox_toml::pyproject(text) {
            Some(parsed) => parsed,
            None => return Parsed::NoTable,
        },
        Format::Tox if path.ends_with(".toml") => tox_toml::parse(text),
        Format::Tox => tox::parse(text),
        Format::Nox => nox::parse(text),
    };
    parsed.map_or(Parsed::Unreadable, Parsed::Recipes)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
