//! cargo-make's `Makefile.toml`: `[tasks.NAME]` with `command` and `args`, or a `script`
//! run by the shell; `dependencies` run first, `run_task` after. A script for another
//! runner (`@duckscript`, `@rust`), a script file, `extend` and `env` interpolation
//! (`${VAR}`) are not read: unknown.

use super::{Recipe, Recipes, Step};
use crate::shell::quote::requoted;
use toml::Value;

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let document: toml::Table = toml::from_str(text).ok()?;
    let mut recipes = Recipes::default();
    if document.contains_key("extend") {
        recipes.partial = true;
    }
    if let Some(config) = document.get("config").and_then(Value::as_table)
        && config.contains_key("load_script")
    {
        recipes.parse_time.push(crate::shell::UNKNOWN.to_string());
    }
    let tasks = match document.get("tasks") {
        Some(tasks) => tasks.as_table()?,
        None => return Some(recipes),
    };
    for (name, task) in tasks {
        let Some(task) = task.as_table() else {
            continue;
        };
        let mut steps = Vec::new();
        // `[tasks.x.linux]`, `.mac`, `.windows`: what the task runs on that platform.
        for platform in ["linux", "mac", "windows"] {
            if let Some(Value::Table(over)) = task.get(platform) {
                if let Some(script) = over.get("script") {
                    steps.push(script_step(script, over.get("script_runner")));
                }
                if over.contains_key("command") {
                    steps.push(Step::Unknown);
                }
            }
        }
        if task.contains_key("extend") || task.contains_key("alias") {
            steps.push(alias_or_unknown(task));
        }
        for dependency in task
            .get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            steps.push(task_ref(dependency));
        }
        for key in ["install_script", "condition_script"] {
            if let Some(script) = task.get(key) {
                steps.push(script_step(script, None));
            }
        }
        if let Some(command) = task.get("command") {
            let mut words = vec![command.as_str().map(String::from)];
            for arg in task
                .get("args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                words.push(arg.as_str().map(String::from));
            }
            steps.push(match words.into_iter().collect::<Option<Vec<String>>>() {
                Some(words) if !words.iter().any(|w| w.contains("${")) => Step::Shell(
                    words
                        .iter()
                        .map(|w| requoted(w))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => Step::Unknown,
            });
        }
        if let Some(script) = task.get("script") {
            steps.push(script_step(script, task.get("script_runner")));
        }
        match task.get("run_task") {
            None => {}
            Some(Value::String(other)) => steps.push(Step::Recipe(other.clone(), vec![])),
            Some(Value::Table(spec)) => match spec.get("name") {
                Some(Value::String(other)) => steps.push(Step::Recipe(other.clone(), vec![])),
                Some(Value::Array(names)) => steps.extend(names.iter().map(task_ref)),
                _ => steps.push(Step::Unknown),
            },
            Some(_) => steps.push(Step::Unknown),
        }
        recipes.recipes.push(Recipe {
            name: name.clone(),
            steps,
            ..Recipe::default()
        });
    }
    recipes.default.push("default".into());
    Some(recipes)
}

fn alias_or_unknown(task: &toml::Table) -> Step {
    match task.get("alias") {
        Some(Value::String(other)) if !task.contains_key("extend") => {
            Step::Recipe(other.clone(), vec![])
        }
        _ => Step::Unknown,
    }
}

fn task_ref(value: &Value) -> Step {
    match value {
        Value::String(name) => Step::Recipe(name.clone(), vec![]),
        Value::Table(spec) => match spec.get("name").and_then(Value::as_str) {
            Some(name) if !spec.contains_key("path") => Step::Recipe(name.to_string(), vec![]),
            _ => Step::Unknown,
        },
        _ => Step::Unknown,
    }
}

fn script_step(script: &Value, runner: Option<&Value>) -> Step {
    let shell = runner.is_none_or(|r| matches!(r.as_str(), Some("bash" | "sh" | "@shell")));
    let text = match script {
        Value::String(text) => Some(text.clone()),
        Value::Array(lines) => lines
            .iter()
            .map(|l| l.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .map(|lines| lines.join("\n")),
        _ => None,
    };
    match text {
        Some(text) if shell => Step::Shell(text),
        _ => Step::Unknown,
    }
}
