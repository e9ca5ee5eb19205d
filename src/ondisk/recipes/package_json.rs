//! `package.json`: the `scripts` object, each a line of shell code (npm, pnpm, yarn and bun
//! all run it with `sh -c`). Other recipes are run by the code itself (`npm run build`).

use super::{Recipe, Recipes, Step};

pub(super) fn parse(text: &str) -> Option<Recipes> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    let recipes = match object.get("scripts") {
        None => Vec::new(),
        Some(scripts) => scripts
            .as_object()?
            .iter()
            .map(|(name, code)| Recipe {
                name: name.clone(),
                steps: vec![
                    code.as_str()
                        .map_or(Step::Unknown, |c| Step::Shell(c.to_string())),
                ],
                ..Recipe::default()
            })
            .collect(),
    };
    Some(Recipes {
        recipes,
        ..Recipes::default()
    })
}
