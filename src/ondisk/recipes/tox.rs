//! `tox.ini`: each environment's `commands_pre`, `commands` and `commands_post`, one
//! command a line (a line ending in `\` goes on), from `[testenv:NAME]` or else `[testenv]`;
//! `envlist` in `[tox]` is what runs by default. `{posargs}` is the words after `--`;
//! another substitution is unknown. A factor-conditional line (`py38: cmd`) is kept.

use super::{Recipe, Recipes, Step};
use crate::shell::UNKNOWN;
use std::collections::BTreeMap;

type Section = BTreeMap<String, String>;

fn sections(text: &str) -> BTreeMap<String, Section> {
    let mut out: BTreeMap<String, Section> = BTreeMap::new();
    let (mut section, mut key) = (String::new(), None::<String>);
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = name.trim().to_string();
            key = None;
            continue;
        }
        let values = out.entry(section.clone()).or_default();
        // An indented line goes on the value above it.
        if line.starts_with([' ', '\t'])
            && let Some(key) = &key
        {
            let value = values.entry(key.clone()).or_default();
            value.push('\n');
            value.push_str(trimmed);
            continue;
        }
        if let Some((name, value)) = trimmed.split_once('=') {
            let name = name.trim().to_string();
            values.insert(name.clone(), value.trim().to_string());
            key = Some(name);
        }
    }
    out
}

/// `{posargs}` becomes the placeholder the caller fills; other `{…}` are unknown.
fn substitute(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push(UNKNOWN);
            return out;
        };
        let inner = &rest[open + 1..open + close];
        if inner == "posargs" || inner.starts_with("posargs:") {
            out.push_str("\"$@\"");
        } else {
            out.push(UNKNOWN);
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

fn commands(value: &str) -> Vec<Step> {
    let joined = value.replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| {
            // `py38: cmd` runs only for that factor: kept, as it may run.
            let line = match line.split_once(": ") {
                Some((factor, rest))
                    if !factor.contains(' ')
                        && factor
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_,!".contains(c)) =>
                {
                    rest
                }
                _ => line,
            };
            let line = line.trim_start_matches(['-', '!']).trim_start();
            Step::Shell(substitute(line))
        })
        .collect()
}

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let sections = sections(text);
    let base = sections.get("testenv");
    let mut recipes = Recipes::default();
    let env_steps = |own: Option<&Section>| -> Vec<Step> {
        ["commands_pre", "commands", "commands_post"]
            .iter()
            .flat_map(|key| {
                own.and_then(|s| s.get(*key))
                    .or_else(|| base.and_then(|s| s.get(*key)))
                    .map(|v| commands(v))
                    .unwrap_or_default()
            })
            .collect()
    };
    for (name, section) in &sections {
        if let Some(env) = name.strip_prefix("testenv:") {
            recipes.recipes.push(Recipe {
                name: env.trim().to_string(),
                steps: env_steps(Some(section)),
                ..Recipe::default()
            });
        }
    }
    let envlist = sections
        .get("tox")
        .and_then(|s| s.get("envlist").or_else(|| s.get("env_list")));
    for env in envlist.into_iter().flat_map(|l| l.split([',', '\n'])) {
        let env = env.trim();
        if env.is_empty() {
            continue;
        }
        recipes.default.push(env.to_string());
    }
    // An environment named but not defined runs `[testenv]`'s commands.
    recipes.fallback = Some(env_steps(None));
    Some(recipes)
}
