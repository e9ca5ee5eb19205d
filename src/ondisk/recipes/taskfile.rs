//! `Taskfile.yml` (Task, taskfile.dev): `tasks:`, each a command, a list of commands, or a
//! map with `cmds` (a command, `cmd:`, `task:`, `defer:`), `deps`, `preconditions` and
//! `status` (both run as shell code). Read with a YAML parser (decision 0056) into a small
//! tree in which an alias is unknown: nothing is copied, so no file grows past its size.
//! `includes:`, `for:` loops and `sh:` variables are unknown.

use super::{Recipe, Recipes, Step};
use saphyr_parser::{Event, Parser};

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    List(Vec<Node>),
    Map(Vec<(String, Node)>),
    Unknown,
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Nodes nested deeper than this are unknown (the parser keeps its own stack flat).
const MAX_DEPTH: usize = 64;

fn tree(text: &str) -> Option<Node> {
    // A stack of open collections: (list or map, the key awaiting its value).
    enum Open {
        List(Vec<Node>),
        Map(Vec<(String, Node)>, Option<String>),
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut root = None;
    let mut documents = 0;
    let place = |stack: &mut Vec<Open>, root: &mut Option<Node>, node: Node| -> Option<()> {
        match stack.last_mut() {
            None => *root = Some(node),
            Some(Open::List(items)) => items.push(node),
            Some(Open::Map(entries, key)) => match key.take() {
                Some(key) => entries.push((key, node)),
                None => match node {
                    Node::Text(text) => *key = Some(text),
                    // A key that is not text: the map cannot be read.
                    _ => return None,
                },
            },
        }
        Some(())
    };
    for event in Parser::new_from_str(text) {
        let (event, _) = event.ok()?;
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
            }
            Event::Scalar(value, _, _, _) => {
                place(&mut stack, &mut root, Node::Text(value.into_owned()))?
            }
            Event::Alias(_) => place(&mut stack, &mut root, Node::Unknown)?,
            Event::SequenceStart(..) => {
                stack.push(Open::List(Vec::new()));
                if stack.len() > MAX_DEPTH {
                    return None;
                }
            }
            Event::MappingStart(..) => {
                stack.push(Open::Map(Vec::new(), None));
                if stack.len() > MAX_DEPTH {
                    return None;
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match stack.pop()? {
                    Open::List(items) => Node::List(items),
                    Open::Map(entries, _) => Node::Map(entries),
                };
                place(&mut stack, &mut root, node)?;
            }
            _ => {}
        }
    }
    root
}

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let root = tree(text)?;
    let mut recipes = Recipes {
        templated: true,
        default: vec!["default".into()],
        ..Recipes::default()
    };
    if root.get("includes").is_some() {
        recipes.partial = true;
    }
    dynamic_variables(root.get("vars"), &mut recipes);
    if let Some(Node::Map(vars)) = root.get("vars") {
        for (name, value) in vars {
            if let Node::Text(value) = value {
                recipes.variables.push((format!(".{name}"), value.clone()));
            }
        }
    }
    let Some(Node::Map(tasks)) = root.get("tasks") else {
        return Some(recipes);
    };
    for (name, task) in tasks {
        let mut steps = Vec::new();
        match task {
            Node::Text(command) => steps.push(Step::Shell(command.clone())),
            Node::List(commands) => steps.extend(commands.iter().map(command)),
            Node::Map(_) => {
                dynamic_variables(task.get("vars"), &mut recipes);
                for dep in list(task.get("deps")) {
                    steps.push(match dep {
                        Node::Text(name) => Step::Recipe(name.clone(), vec![]),
                        other => call(&other),
                    });
                }
                for key in ["preconditions", "status"] {
                    for check in list(task.get(key)) {
                        steps.push(match check {
                            Node::Text(code) => Step::Shell(code.clone()),
                            other => shell_of(other.get("sh")),
                        });
                    }
                }
                if let Some(Node::Text(single)) = task.get("cmd") {
                    steps.push(Step::Shell(single.clone()));
                }
                steps.extend(list(task.get("cmds")).iter().map(command));
                for alias in list(task.get("aliases")) {
                    if let Node::Text(alias) = alias {
                        recipes.recipes.push(Recipe {
                            name: alias.clone(),
                            steps: vec![Step::Recipe(name.clone(), vec![])],
                            ..Recipe::default()
                        });
                    }
                }
            }
            Node::Unknown => steps.push(Step::Unknown),
        }
        recipes.recipes.push(Recipe {
            name: name.clone(),
            steps,
            ..Recipe::default()
        });
    }
    Some(recipes)
}

/// `vars: {X: {sh: CODE}}` runs CODE when the file is read.
fn dynamic_variables(vars: Option<&Node>, recipes: &mut Recipes) {
    if let Some(Node::Map(entries)) = vars {
        for (_, value) in entries {
            if let Some(code) = value.get("sh") {
                match code {
                    Node::Text(code) => recipes.parse_time.push(code.clone()),
                    _ => recipes.parse_time.push(crate::shell::UNKNOWN.to_string()),
                }
            }
        }
    }
}

fn list(node: Option<&Node>) -> Vec<Node> {
    match node {
        None => Vec::new(),
        Some(Node::List(items)) => items.clone(),
        Some(other) => vec![other.clone()],
    }
}

fn shell_of(node: Option<&Node>) -> Step {
    match node {
        Some(Node::Text(code)) => Step::Shell(code.clone()),
        _ => Step::Unknown,
    }
}

/// `{task: NAME}`: another task (its `vars` are templates: unknown to the walk as written).
fn call(node: &Node) -> Step {
    match node.get("task") {
        Some(Node::Text(name)) => Step::Recipe(name.clone(), vec![]),
        _ => Step::Unknown,
    }
}

/// One entry of `cmds`.
fn command(node: &Node) -> Step {
    match node {
        Node::Text(code) => Step::Shell(code.clone()),
        Node::Map(_) if node.get("for").is_some() => Step::Unknown,
        Node::Map(_) if node.get("cmd").is_some() => shell_of(node.get("cmd")),
        Node::Map(_) if node.get("task").is_some() => call(node),
        Node::Map(_) => match node.get("defer") {
            Some(Node::Text(code)) => Step::Shell(code.clone()),
            Some(deferred) => call(deferred),
            None => Step::Unknown,
        },
        _ => Step::Unknown,
    }
}
