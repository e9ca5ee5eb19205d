//! Which services a compose project defines, and the `container_name` each gives itself
//! (issue 13, item 6: a compose service is not a container name).
//!
//! The files are the ones compose reads: `-f`/`--file`, else `COMPOSE_FILE`, else the first
//! directory from the project directory (or the working directory) upward holding a
//! `compose.yaml`, `compose.yml`, `docker-compose.yml` or `docker-compose.yaml`, with its
//! `*.override.*` files. The YAML reader is not a parser: it reads the `services:` keys and
//! their `container_name:` values in block style and calls anything else it meets at those
//! levels (flow style, anchors, aliases, merge keys, tags, tabs, several documents, an
//! `include:`) [`Malformed`], so the caller keeps to what it would decide without the file.

use super::endpoint::{Env, var};
use super::read::{Files, Read};
use super::{Malformed, Value};
use std::collections::BTreeMap;

/// What the command line says about the project.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// The directory compose runs in (absolute).
    pub cwd: String,
    /// `-f`/`--file` values, in order.
    pub files: Vec<String>,
    pub project_directory: Option<String>,
    /// `--env-file` given: a file that may set `COMPOSE_FILE`.
    pub env_file: bool,
}

/// Each service the project defines, with every `container_name` its files give it.
pub type Services = BTreeMap<String, Vec<Value>>;

/// A project read whole, or unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Project {
    Known(Services),
    Unknown,
}

/// Lines one file may hold before it is not read as a compose file.
const MAX_LINES: usize = 20_000;
/// Directories looked at upward for a compose file.
const MAX_PARENTS: usize = 32;

const MAIN_NAMES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yml",
    "docker-compose.yaml",
];
const OVERRIDE_NAMES: [&str; 4] = [
    "compose.override.yml",
    "compose.override.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
];

/// The project compose would load for `query`.
pub fn project(query: &Query, env: Env, files: &mut dyn Files) -> Project {
    let Some(paths) = paths(query, env, files) else {
        return Project::Unknown;
    };
    let mut services = Services::new();
    for path in paths {
        let Read::Text(text) = files.read(&path) else {
            return Project::Unknown;
        };
        let Ok(found) = read_services(&text) else {
            return Project::Unknown;
        };
        for (name, container) in found {
            services.entry(name).or_default().extend(container);
        }
    }
    Project::Known(services)
}

fn absolute(path: &str, base: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", base.trim_end_matches('/'))
    }
}

fn paths(query: &Query, env: Env, files: &mut dyn Files) -> Option<Vec<String>> {
    let base = match &query.project_directory {
        Some(dir) => absolute(dir, &query.cwd),
        None => query.cwd.clone(),
    };
    if !query.files.is_empty() {
        return query
            .files
            .iter()
            .map(|f| (f != "-").then(|| absolute(f, &query.cwd)))
            .collect();
    }
    if query.env_file || var(env, "COMPOSE_PATH_SEPARATOR").is_some() {
        return None;
    }
    // `.env` in the project directory may set COMPOSE_FILE itself.
    match files.read(&absolute(".env", &base)) {
        Read::Absent => {}
        Read::Text(text) if !text.contains("COMPOSE_") => {}
        _ => return None,
    }
    if let Some(list) = var(env, "COMPOSE_FILE") {
        return list
            .split(':')
            .map(|f| (!f.is_empty() && f != "-").then(|| absolute(f, &query.cwd)))
            .collect();
    }
    let mut dir = base;
    for _ in 0..MAX_PARENTS {
        if dir.contains(['*', '?', '[']) || !dir.starts_with('/') {
            return None;
        }
        let listed = files.glob(&absolute("*compose*.y*ml", &dir))?;
        let names: Vec<&str> = listed.iter().filter_map(|p| p.rsplit('/').next()).collect();
        let main: Vec<&str> = MAIN_NAMES
            .into_iter()
            .filter(|n| names.contains(n))
            .collect();
        if main.len() > 1 {
            // Which one a given compose reads differs between versions.
            return None;
        }
        if let Some(main) = main.first() {
            let mut found = vec![absolute(main, &dir)];
            found.extend(
                OVERRIDE_NAMES
                    .into_iter()
                    .filter(|n| names.contains(n))
                    .map(|n| absolute(n, &dir)),
            );
            return Some(found);
        }
        // Names another compose client reads (`podman-compose.yml`): not knowably passed by.
        if !names.is_empty() {
            return None;
        }
        match dir.rsplit_once('/') {
            Some(("", "")) | None => return Some(vec![]),
            Some(("", _)) => dir = "/".into(),
            Some((parent, _)) => dir = parent.to_string(),
        }
    }
    None
}

/// One structural line: its indentation and `key: value` (value without a comment).
struct Entry<'t> {
    indent: usize,
    key: Option<String>,
    value: &'t str,
}

fn entry(line: &str) -> Result<Option<Entry<'_>>, Malformed> {
    let body = line.trim_start_matches(' ');
    let indent = line.len() - body.len();
    if body.starts_with('\t') {
        return Err(Malformed);
    }
    if body.is_empty() || body.starts_with('#') {
        return Ok(None);
    }
    if body.starts_with(['&', '*', '!', '?', '%', '{', '[', '|', '>', '@', '`'])
        || body.starts_with("<<")
    {
        return Err(Malformed);
    }
    if body == "-" || body.starts_with("- ") {
        return Ok(Some(Entry {
            indent,
            key: None,
            value: body,
        }));
    }
    let (key, rest) = match body.as_bytes()[0] {
        quote @ (b'"' | b'\'') => {
            let close = body[1..].find(quote as char).ok_or(Malformed)? + 1;
            let key = &body[1..close];
            let rest = body[close + 1..].strip_prefix(':').ok_or(Malformed)?;
            (key, rest)
        }
        _ => {
            let colon = body
                .char_indices()
                .find(|&(i, c)| c == ':' && body[i + 1..].chars().next().is_none_or(|n| n == ' '))
                .map(|(i, _)| i)
                .ok_or(Malformed)?;
            (&body[..colon], &body[colon + 1..])
        }
    };
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(Malformed);
    }
    if rest.contains('\t') {
        return Err(Malformed);
    }
    let value = rest.trim_start();
    let value = if value.starts_with('#') {
        ""
    } else {
        match value.find(" #") {
            Some(at) => value[..at].trim_end(),
            None => value.trim_end(),
        }
    };
    if value.starts_with(['&', '*', '!', '%', '@', '`']) {
        return Err(Malformed);
    }
    Ok(Some(Entry {
        indent,
        key: Some(key.to_string()),
        value,
    }))
}

/// A scalar value as compose reads it; `$` interpolation makes it unknown.
fn scalar(value: &str) -> Result<Value, Malformed> {
    let text = match value.as_bytes().first() {
        None => return Err(Malformed),
        // A block scalar (`>-`, `|`) holds its value on the lines below, and `?` opens a
        // complex key: the text here is not the name.
        Some(b'|' | b'>' | b'?') => return Err(Malformed),
        Some(&quote @ (b'"' | b'\'')) => {
            let inner = value[1..].strip_suffix(quote as char).ok_or(Malformed)?;
            if inner.contains(['"', '\'', '\\']) {
                return Err(Malformed);
            }
            inner
        }
        // Interpolated: what compose makes of it depends on its environment.
        Some(_) if value.contains('$') => return Ok(Value::Unknown),
        Some(_) if value.contains(['{', '[', ']', '}', ',', '"', '\'', ':']) => {
            return Err(Malformed);
        }
        Some(_) => value,
    };
    Ok(if text.contains('$') {
        Value::Unknown
    } else {
        Value::Known(text.to_string())
    })
}

const TOP_KEYS: [&str; 7] = [
    "version", "name", "services", "networks", "volumes", "configs", "secrets",
];

/// The services one compose file defines: each with its `container_name`, when it gives
/// one. `Err` for anything outside the block style it reads.
pub fn read_services(text: &str) -> Result<BTreeMap<String, Option<Value>>, Malformed> {
    let mut services = BTreeMap::new();
    let (mut in_services, mut seen_services, mut started) = (false, false, false);
    let (mut service_indent, mut body_indent) = (None, None);
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if n >= MAX_LINES || line.starts_with('\u{feff}') {
            return Err(Malformed);
        }
        if line == "---" || line.starts_with("--- ") {
            if started {
                return Err(Malformed);
            }
            continue;
        }
        if line == "..." {
            return Err(Malformed);
        }
        // A line deeper than the levels read is a value's (a script, a list, a mapping).
        let deeper = |indent: usize| body_indent.is_some_and(|b| indent > b);
        let indent = line.len() - line.trim_start_matches(' ').len();
        if in_services && deeper(indent) {
            if line[indent..].starts_with('\t') {
                return Err(Malformed);
            }
            continue;
        }
        if !in_services && indent > 0 {
            continue;
        }
        let Some(entry) = entry(line)? else { continue };
        started = true;
        if entry.indent == 0 {
            let key = entry.key.ok_or(Malformed)?;
            if !TOP_KEYS.contains(&key.as_str()) && !key.starts_with("x-") {
                return Err(Malformed);
            }
            in_services = key == "services";
            if in_services {
                if seen_services || !entry.value.is_empty() {
                    return Err(Malformed);
                }
                seen_services = true;
            }
            current = None;
            continue;
        }
        let level = *service_indent.get_or_insert(entry.indent);
        if entry.indent == level {
            let key = entry.key.ok_or(Malformed)?;
            if !entry.value.is_empty() || services.insert(key.clone(), None).is_some() {
                return Err(Malformed);
            }
            current = Some(key);
            body_indent = None;
            continue;
        }
        let Some(service) = &current else {
            return Err(Malformed);
        };
        let body = *body_indent.get_or_insert(entry.indent);
        if entry.indent != body || body <= level {
            return Err(Malformed);
        }
        match entry.key.as_deref() {
            // A list at its key's own indentation (`ports:` then `- "80:80"`).
            None => {}
            Some("container_name") => {
                let name = scalar(entry.value)?;
                if services
                    .insert(service.clone(), Some(name))
                    .flatten()
                    .is_some()
                {
                    return Err(Malformed);
                }
            }
            // What another service or file gives it is not read here.
            Some("extends") => {
                services.insert(service.clone(), Some(Value::Unknown));
            }
            Some(_) => {}
        }
        if entry.value.starts_with(['"', '\'']) && scalar_closed(entry.value).is_err() {
            return Err(Malformed);
        }
    }
    Ok(services)
}

/// A quoted value closes on its own line.
fn scalar_closed(value: &str) -> Result<(), Malformed> {
    let quote = value.chars().next().ok_or(Malformed)?;
    value[1..].contains(quote).then_some(()).ok_or(Malformed)
}

#[cfg(test)]
#[path = "compose_tests.rs"]
mod tests;
