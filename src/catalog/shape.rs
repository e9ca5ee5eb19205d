//! The catalog's shape, checked before serde reads a file, so that a value of the wrong
//! type is reported in the format's words ("`forge` must be a table with `machine` and
//! `git_user`, not a string") rather than serde's ("expected struct Forge"). Unknown keys
//! are left to serde (`deny_unknown_fields`), whose structs stay the one list of keys.

use super::{CatalogError, Source};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

#[derive(Clone, Copy)]
enum Shape {
    Str,
    Version,
    Strings,
    /// A table whose keys are open and whose values are strings (`[mode]`).
    StrTable,
    Table(&'static Table),
    Tables(&'static Table),
}

struct Table {
    keys: &'static [(&'static str, Shape, Required)],
}

#[derive(Clone, Copy, PartialEq)]
enum Required {
    Yes,
    No,
}
use Required::{No, Yes};

const TOOL: Table = Table {
    keys: &[
        ("name", Shape::Str, Yes),
        ("usage", Shape::Str, Yes),
        ("replaces", Shape::Strings, No),
    ],
};

const ROOT: Table = Table {
    keys: &[
        ("version", Shape::Version, No),
        (
            "mesh",
            Shape::Table(&Table {
                keys: &[
                    ("domains", Shape::Strings, No),
                    ("networks", Shape::Strings, No),
                ],
            }),
            No,
        ),
        (
            "forge",
            Shape::Table(&Table {
                keys: &[("machine", Shape::Str, Yes), ("git_user", Shape::Str, Yes)],
            }),
            No,
        ),
        (
            "record",
            Shape::Table(&Table {
                keys: &[("syslog", Shape::Str, No)],
            }),
            No,
        ),
        (
            "machine",
            Shape::Tables(&Table {
                keys: &[
                    ("name", Shape::Str, Yes),
                    ("aliases", Shape::Strings, No),
                    ("pattern", Shape::Str, No),
                ],
            }),
            No,
        ),
        (
            "module",
            Shape::Tables(&Table {
                keys: &[
                    ("name", Shape::Str, Yes),
                    ("machines", Shape::Strings, No),
                    ("containers", Shape::Strings, No),
                    ("units", Shape::Strings, No),
                    ("tool", Shape::Tables(&TOOL), No),
                    ("mode", Shape::Str, No),
                ],
            }),
            No,
        ),
        ("verb", Shape::Tables(&TOOL), No),
        ("mode", Shape::StrTable, No),
    ],
};

/// The shape errors of one file, or none (also when the TOML itself does not parse:
/// serde's parse error says that better).
pub(super) fn check(source: &Source) -> Vec<CatalogError> {
    let Ok(root) = DeTable::parse(&source.text) else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    table(source, &ROOT, "", root.get_ref(), &mut errors);
    errors
}

fn table(
    source: &Source,
    shape: &Table,
    path: &str,
    value: &DeTable<'_>,
    errors: &mut Vec<CatalogError>,
) {
    for (key, value) in value.iter() {
        if let Some((_, shape, _)) = shape.keys.iter().find(|(k, ..)| *k == key.get_ref()) {
            let path = join(path, key.get_ref());
            self::value(source, *shape, &path, value, errors);
        }
    }
}

fn value(
    source: &Source,
    shape: Shape,
    path: &str,
    value: &Spanned<DeValue<'_>>,
    errors: &mut Vec<CatalogError>,
) {
    let at = value.span().start;
    let wrong =
        |found: String| source.error(Some(at), format!("{}, not {found}", must(shape, path)));
    match (shape, value.get_ref()) {
        (Shape::Str, DeValue::String(_)) => {}
        (Shape::Version, DeValue::Integer(_)) => {}
        (Shape::Strings, DeValue::Array(items)) => {
            if let Some(item) = items
                .iter()
                .find(|i| !matches!(i.get_ref(), DeValue::String(_)))
            {
                errors.push(source.error(
                    Some(item.span().start),
                    format!(
                        "{}, not an array holding {}",
                        must(shape, path),
                        kind(item.get_ref())
                    ),
                ));
            }
        }
        (Shape::StrTable, DeValue::Table(fields)) => {
            if let Some((key, item)) = fields
                .iter()
                .find(|(_, v)| !matches!(v.get_ref(), DeValue::String(_)))
            {
                errors.push(source.error(
                    Some(item.span().start),
                    format!(
                        "`{}` must be a string, not {}",
                        join(path, key.get_ref()),
                        kind(item.get_ref())
                    ),
                ));
            }
        }
        (Shape::Table(t), DeValue::Table(fields)) => {
            missing(source, t, shape, path, at, fields, errors);
            table(source, t, path, fields, errors);
        }
        (Shape::Tables(t), DeValue::Array(items)) => {
            for item in items.iter() {
                match item.get_ref() {
                    DeValue::Table(fields) => {
                        missing(source, t, shape, path, item.span().start, fields, errors);
                        table(source, t, path, fields, errors);
                    }
                    other => errors.push(source.error(
                        Some(item.span().start),
                        format!(
                            "{}, not an array holding {}",
                            must(shape, path),
                            kind(other)
                        ),
                    )),
                }
            }
        }
        (_, other) => errors.push(wrong(kind(other))),
    }
}

/// A table's required keys that it lacks.
fn missing(
    source: &Source,
    t: &Table,
    shape: Shape,
    path: &str,
    at: usize,
    fields: &DeTable<'_>,
    errors: &mut Vec<CatalogError>,
) {
    for (key, _, required) in t.keys {
        if *required == Yes && !fields.keys().any(|k| k.get_ref() == key) {
            let header = match shape {
                Shape::Tables(_) => format!("[[{path}]]"),
                _ => format!("[{path}]"),
            };
            errors.push(source.error(
                Some(at),
                format!("`{header}` has no `{key}` ({})", must(shape, path)),
            ));
        }
    }
}

/// What a value at `path` must be, in the format's words.
fn must(shape: Shape, path: &str) -> String {
    match shape {
        Shape::Str => format!("`{path}` must be a string"),
        Shape::Version => format!("`{path}` must be the integer 1"),
        Shape::Strings => format!("`{path}` must be an array of strings"),
        Shape::StrTable => format!("`{path}` must be a table of strings"),
        Shape::Table(t) => format!("`{path}` must be a table with {}", keys(t)),
        Shape::Tables(t) => format!(
            "`{path}` must be an array of tables, written `[[{path}]]`, each with {}",
            keys(t)
        ),
    }
}

/// "`machine` and `git_user`": the required keys, or every key when none is required.
fn keys(t: &Table) -> String {
    let required: Vec<&str> = t
        .keys
        .iter()
        .filter(|(_, _, r)| *r == Yes)
        .map(|(k, ..)| *k)
        .collect();
    let names: Vec<String> = if required.is_empty() {
        t.keys.iter().map(|(k, ..)| format!("`{k}`")).collect()
    } else {
        required.iter().map(|k| format!("`{k}`")).collect()
    };
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no keys".into(),
    }
}

fn kind(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a number",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
    .into()
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// serde's words for an unknown key, in the format's: "unknown field `alias`, expected
/// one of `name`, `aliases`" reads "unknown key `alias` (the keys here are `name`, `aliases`)".
pub(super) fn reword(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (key, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
        let expected = expected.trim_start_matches("one of ");
        return if expected.is_empty() || expected == "nothing" {
            format!("unknown key {key}")
        } else {
            format!("unknown key {key} (the keys here are {expected})")
        };
    }
    // The format's only number: a negative or too large `version`.
    if let Some(found) = message
        .strip_prefix("invalid value: ")
        .and_then(|m| m.strip_suffix(", expected u32"))
    {
        return format!("`version` must be the integer 1, not {found}");
    }
    message.to_string()
}
