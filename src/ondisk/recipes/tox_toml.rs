//! tox 4's TOML configuration: `tox.toml` at its root, or `[tool.tox]` in `pyproject.toml`
//! (a `legacy_tox_ini` string there is read as `tox.ini`). Each environment's
//! `commands_pre`, `commands` and `commands_post` from `[env.NAME]`, else `[env_run_base]`;
//! a command is a list of words; `env_list` runs by default. `{ replace = "posargs" }` is
//! the words after `--`; another replacement is unknown.

use super::{Recipe, Recipes, Step};
use crate::shell::UNKNOWN;
use crate::shell::quote::requoted;
use toml::{Table, Value};

/// `pyproject.toml`'s `[tool.tox]`: `None` when the file has none (tox looks on), else the
/// recipes, `None` within when the file cannot be read as TOML.
pub(super) fn pyproject(text: &str) -> Option<Option<Recipes>> {
    let Ok(file) = text.parse::<Table>() else {
        return Some(None);
    };
    let tox = file.get("tool")?.get("tox")?;
    if let Some(ini) = tox.get("legacy_tox_ini").and_then(Value::as_str) {
        return Some(super::tox::parse(ini));
    }
    Some(tox.as_table().map(parse_table))
}

/// `tox.toml`.
pub(super) fn parse(text: &str) -> Option<Recipes> {
    text.parse::<Table>().ok().as_ref().map(parse_table)
}

fn parse_table(tox: &Table) -> Recipes {
    let base = tox.get("env_run_base").and_then(Value::as_table);
    let env_steps = |own: Option<&Table>| -> Vec<Step> {
        ["commands_pre", "commands", "commands_post"]
            .iter()
            .flat_map(|key| {
                own.and_then(|t| t.get(*key))
                    .or_else(|| base.and_then(|t| t.get(*key)))
                    .map(commands)
                    .unwrap_or_default()
            })
            .collect()
    };
    let mut recipes = Recipes::default();
    if let Some(envs) = tox.get("env").and_then(Value::as_table) {
        for (name, env) in envs {
            recipes.recipes.push(Recipe {
                name: name.clone(),
                steps: env_steps(env.as_table()),
                ..Recipe::default()
            });
        }
    }
    let list = tox.get("env_list").or_else(|| tox.get("envlist"));
    recipes.default = match list {
        Some(Value::Array(envs)) => envs
            .iter()
            .map(|e| e.as_str().map_or(UNKNOWN.to_string(), str::to_string))
            .collect(),
        Some(Value::String(envs)) => envs.split(',').map(|e| e.trim().to_string()).collect(),
        _ => Vec::new(),
    };
    recipes.fallback = Some(env_steps(None));
    recipes
}

/// A list of commands, each a list of words; anything else is unknown code.
fn commands(value: &Value) -> Vec<Step> {
    let Some(list) = value.as_array() else {
        return vec![Step::Unknown];
    };
    list.iter()
        .map(|command| match command.as_array() {
            Some(words) => Step::Shell(
                words
                    .iter()
                    .map(|word| match word {
                        Value::String(s) => requoted(s),
                        Value::Table(t)
                            if t.get("replace").and_then(Value::as_str) == Some("posargs") =>
                        {
                            "\"$@\"".to_string()
                        }
                        _ => UNKNOWN.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            None => Step::Unknown,
        })
        .collect()
}
