//! `mesh-guard search`: the mesh tools that replace a shell command.

use crate::app::{load_catalog, load_rules};

use crate::config::Paths;
use crate::error::{Error, exit};

/// Exit 0 when a tool was found, 1 when none was: "one must be created" and "nothing
/// needs replacing" both list no tool (decision 0013); the text and `--json` tell them apart.
pub fn run(paths: &Paths, source: &str, json: bool) -> i32 {
    let answer = match answer(paths, source) {
        Ok(answer) => answer,
        Err(e) => {
            errln!("{e}");
            return e.exit_code();
        }
    };
    if json {
        outln!("{}", answer.to_json(source));
    } else {
        out!("{}", answer.to_text(source));
    }
    match answer {
        crate::search::Answer::Found(_) => exit::OK,
        _ => exit::NO,
    }
}

fn answer(paths: &Paths, source: &str) -> Result<crate::search::Answer, Error> {
    let catalog = load_catalog(paths)?;
    let rules = load_rules(paths)?;
    let world = paths.world(std::env::current_dir().ok());
    crate::search::search(&catalog, &rules, &world, source).map_err(Error::Input)
}
