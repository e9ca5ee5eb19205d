//! `pyproject.toml`: pdm's `[tool.pdm.scripts]` (a command, `cmd`, `shell`, `composite`;
//! `call` is a Python function: unknown) and poetry's `[tool.poetry.scripts]` and PEP 621's
//! `[project.scripts]` (Python entry points: the module's file, read as Python code).

use super::{Recipe, Recipes, Step};
use crate::shell::quote::requoted;
use toml::Value;

fn table<'a>(document: &'a toml::Table, path: &[&str]) -> Option<&'a toml::Table> {
    let mut at = document;
    for key in path {
        at = at.get(*key)?.as_table()?;
    }
    Some(at)
}

pub(super) fn pdm(text: &str) -> Option<Recipes> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let mut recipes = Recipes::default();
    let Some(scripts) = table(&document, &["tool", "pdm", "scripts"]) else {
        return Some(recipes);
    };
    let names: Vec<&String> = scripts.keys().collect();
    for (name, script) in scripts {
        // `_` holds settings shared by every script, not a script.
        if name == "_" {
            continue;
        }
        let steps = match script {
            Value::String(command) => vec![Step::Shell(command.clone())],
            Value::Table(spec) => {
                if let Some(Value::Array(parts)) = spec.get("composite") {
                    parts
                        .iter()
                        .map(|part| match part.as_str() {
                            // A part is a script's name (with its arguments) or a command.
                            Some(part) => match part.split_whitespace().next() {
                                Some(first) if names.iter().any(|n| *n == first) => {
                                    let args = part.split_whitespace().skip(1).map(String::from);
                                    Step::Recipe(first.to_string(), args.collect())
                                }
                                _ => Step::Shell(part.to_string()),
                            },
                            None => Step::Unknown,
                        })
                        .collect()
                } else if let Some(Value::String(code)) = spec.get("shell") {
                    vec![Step::Shell(code.clone())]
                } else if let Some(command) = spec.get("cmd") {
                    vec![command_step(command)]
                } else {
                    vec![Step::Unknown]
                }
            }
            _ => vec![Step::Unknown],
        };
        recipes.recipes.push(Recipe {
            name: name.clone(),
            steps,
            ..Recipe::default()
        });
    }
    Some(recipes)
}

fn command_step(command: &Value) -> Step {
    match command {
        Value::String(line) => Step::Shell(line.clone()),
        Value::Array(words) => words
            .iter()
            .map(|w| w.as_str().map(requoted))
            .collect::<Option<Vec<_>>>()
            .map_or(Step::Unknown, |words| Step::Shell(words.join(" "))),
        _ => Step::Unknown,
    }
}

pub(super) fn poetry(text: &str) -> Option<Recipes> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let mut recipes = Recipes::default();
    for path in [&["tool", "poetry", "scripts"][..], &["project", "scripts"]] {
        for (name, target) in table(&document, path).into_iter().flatten() {
            let step = match target {
                Value::String(target) => entry_point(target),
                _ => Step::Unknown,
            };
            recipes.recipes.push(Recipe {
                name: name.clone(),
                steps: vec![step],
                ..Recipe::default()
            });
        }
    }
    Some(recipes)
}

/// `pkg.module:function`: the module's file, where a project keeps it (flat or `src/`).
fn entry_point(target: &str) -> Step {
    let module = target.split(':').next().unwrap_or("").trim();
    let valid = !module.is_empty()
        && module
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'));
    if !valid {
        return Step::Unknown;
    }
    let path = module.replace('.', "/");
    Step::Python(
        ["", "src/"]
            .iter()
            .flat_map(|root| {
                [
                    format!("{root}{path}.py"),
                    format!("{root}{path}/__init__.py"),
                ]
            })
            .collect(),
    )
}
