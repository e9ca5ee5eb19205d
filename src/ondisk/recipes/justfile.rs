//! A justfile: recipes (`name param='default' *rest: dep (dep arg) && after`) and their
//! indented bodies, run line by line by `sh -cu` (or as one script under a `#!` line naming
//! a POSIX shell), `@` and `-` prefixes off; `alias`es; variables (`x := "value"`) and
//! parameters filled where `{{name}}` interpolates them. What the reader cannot compute
//! (a function call, a backtick's output, `set shell` to another program, `import`, `mod`)
//! is unknown, never guessed.

use super::{Recipe, Recipes, Step};

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let mut recipes = Recipes {
        templated: true,
        ..Recipes::default()
    };
    let mut other_shell = false;
    let mut default_attribute = false;
    let mut current: Option<(Recipe, Vec<String>)> = None;
    let lines: Vec<&str> = text.lines().collect();
    let finish = |current: &mut Option<(Recipe, Vec<String>)>, recipes: &mut Recipes| {
        if let Some((mut recipe, body)) = current.take() {
            recipe.steps.extend(body_steps(&body));
            recipes.recipes.push(recipe);
        }
    };
    for raw in lines {
        let indented = raw.starts_with([' ', '\t']);
        if let Some((_, body)) = current.as_mut()
            && (indented || raw.trim().is_empty())
        {
            body.push(raw.trim_start().to_string());
            continue;
        }
        finish(&mut current, &mut recipes);
        let line = raw.trim();
        if line.is_empty() || (line.starts_with('#') && !line.starts_with("#!")) {
            continue;
        }
        if line.starts_with('[') {
            default_attribute |= line.contains("default");
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        match first {
            "import" | "mod" | "import?" | "mod?" => {
                recipes.partial = true;
                continue;
            }
            "set" => {
                if line.contains("shell") && !line.contains("positional") {
                    other_shell = !is_posix_shell_setting(line);
                }
                continue;
            }
            "alias" => {
                if let Some((name, target)) = line["alias".len()..].split_once(":=") {
                    recipes.recipes.push(Recipe {
                        name: name.trim().to_string(),
                        steps: vec![Step::Recipe(target.trim().to_string(), vec![])],
                        ..Recipe::default()
                    });
                }
                continue;
            }
            _ => {}
        }
        if line.contains(":=") {
            if let Some(variable) = literal_assignment(line) {
                recipes.variables.push(variable);
            }
            // `x := expr`: a backtick runs when the justfile is loaded.
            if line.contains('`') {
                recipes.parse_time.push(crate::shell::UNKNOWN.to_string());
                if let Some(code) = line.split('`').nth(1) {
                    recipes.parse_time.push(code.to_string());
                }
            }
            continue;
        }
        match header(line) {
            Some(recipe) => {
                if default_attribute || recipes.default.is_empty() {
                    if default_attribute {
                        recipes.default.clear();
                    }
                    if recipes.default.is_empty() {
                        recipes.default.push(recipe.name.clone());
                    }
                }
                default_attribute = false;
                current = Some((recipe, Vec::new()));
            }
            // A line this reader does not know: something may be hidden.
            None => recipes.partial = true,
        }
    }
    finish(&mut current, &mut recipes);
    if other_shell {
        for recipe in &mut recipes.recipes {
            for step in &mut recipe.steps {
                if matches!(step, Step::Shell(_)) {
                    *step = Step::Unknown;
                }
            }
        }
    }
    Some(recipes)
}

fn is_posix_shell_setting(line: &str) -> bool {
    let Some((_, value)) = line.split_once(":=") else {
        return false;
    };
    let first = value
        .trim()
        .trim_start_matches('[')
        .split(',')
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(['"', '\'']);
    matches!(
        first.rsplit('/').next().unwrap_or(""),
        "sh" | "bash" | "dash" | "zsh" | "ksh"
    )
}

/// `@name a b='x' *rest: dep (dep2 "arg") && after`: the recipe, its dependencies first.
fn header(line: &str) -> Option<Recipe> {
    let line = line.strip_prefix('@').unwrap_or(line);
    let colon = header_colon(line)?;
    let (head, deps) = (&line[..colon], &line[colon + 1..]);
    let mut words = head.split_whitespace();
    let name = words.next()?;
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let mut recipe = Recipe {
        name: name.to_string(),
        ..Recipe::default()
    };
    for param in words {
        let param = param.trim_start_matches('$');
        if let Some(rest) = param.strip_prefix(['*', '+']) {
            recipe.variadic = true;
            recipe.params.push(rest.split('=').next()?.to_string());
        } else if !param.starts_with(['=', '"', '\'']) {
            recipe.params.push(param.split('=').next()?.to_string());
        }
    }
    // Dependencies after `&&` run after the body; the order does not change what is judged.
    recipe.steps.extend(dependencies(&deps.replace("&&", " ")));
    Some(recipe)
}

/// The `:` that ends a recipe header: not one inside quotes or a `:=`.
fn header_colon(line: &str) -> Option<usize> {
    let mut quote = None;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, ':') if !line[at + 1..].starts_with('=') => return Some(at),
            _ => {}
        }
    }
    None
}

/// `dep (dep2 "a" b)`: each dependency with its arguments (quotes off; an argument that is
/// an expression is unknown).
fn dependencies(text: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('(') {
            let Some(close) = inner.find(')') else {
                steps.push(Step::Unknown);
                break;
            };
            let mut words = inner[..close].split_whitespace();
            if let Some(name) = words.next() {
                let args = words.map(argument).collect();
                steps.push(Step::Recipe(name.to_string(), args));
            }
            rest = inner[close + 1..].trim_start();
        } else {
            let end = rest.find([' ', '\t', '(']).unwrap_or(rest.len());
            steps.push(Step::Recipe(rest[..end].to_string(), vec![]));
            rest = rest[end..].trim_start();
        }
    }
    steps
}

fn argument(word: &str) -> String {
    let quoted = word.len() >= 2
        && ((word.starts_with('"') && word.ends_with('"'))
            || (word.starts_with('\'') && word.ends_with('\'')));
    if quoted && !word.contains('\\') {
        word[1..word.len() - 1].to_string()
    } else {
        format!("{{{{{word}}}}}")
    }
}

/// A recipe's body: a `#!` script as one step (shell code only for a POSIX shell), else
/// each line, `\`-continued lines joined, prefixes off.
fn body_steps(body: &[String]) -> Vec<Step> {
    let lines: Vec<&String> = {
        let mut lines: Vec<&String> = body.iter().collect();
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        lines
    };
    if let Some(first) = lines.first()
        && let Some(shebang) = first.strip_prefix("#!")
    {
        let program = shebang
            .split_whitespace()
            .map(|w| w.rsplit('/').next().unwrap_or(w));
        let program: Vec<&str> = program.collect();
        let shell = match program.as_slice() {
            ["env", rest @ ..] => rest.iter().find(|w| !w.starts_with('-')).copied(),
            [first, ..] => Some(*first),
            [] => None,
        };
        let text: Vec<&str> = lines[1..].iter().map(|l| l.as_str()).collect();
        return vec![match shell {
            Some("sh" | "bash" | "dash" | "zsh" | "ksh") => Step::Shell(text.join("\n")),
            _ => Step::Unknown,
        }];
    }
    let mut steps = Vec::new();
    let mut open: Option<String> = None;
    for line in lines {
        let mut text = match open.take() {
            Some(mut joined) => {
                joined.push('\n');
                joined.push_str(line);
                joined
            }
            None => line.trim_start_matches(['@', '-']).to_string(),
        };
        if text.ends_with('\\') {
            open = Some(text);
            continue;
        }
        if !text.trim().is_empty() && !text.trim_start().starts_with('#') {
            steps.push(Step::Shell(std::mem::take(&mut text)));
        }
    }
    if let Some(text) = open {
        steps.push(Step::Shell(text));
    }
    steps
}

/// `name := "text"` (or `'text'`, `export name := …`): a variable whose value is that text.
fn literal_assignment(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once(":=")?;
    let name = name.trim().trim_start_matches("export ").trim();
    let value = value.trim();
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = value.strip_prefix(quote)?.strip_suffix(quote)?;
    let plain = !inner.contains([quote, '\\']) && !name.contains(' ');
    plain.then(|| (name.to_string(), inner.to_string()))
}
