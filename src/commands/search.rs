//! `mesh-guard search`: the mesh tools that replace a shell command.

use crate::app::{load_catalog, load_rules};

use crate::config::Paths;

/// Exit 0 when a tool was found, 1 when none was: "one must be created" and "nothing
/// needs replacing" both list no tool (decision 0013); the text and `--json` tell them apart.
pub fn run(paths: &Paths, source: &str, json: bool) -> i32 {
    let catalog = match load_catalog(paths) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let answer = match crate::search::search(&catalog, &rules, source) {
        Ok(answer) => answer,
        Err(why) => {
            eprintln!("error: {why}");
            return 2;
        }
    };
    if json {
        outln!("{}", answer.to_json(source));
    } else {
        out!("{}", answer.to_text(source));
    }
    match answer {
        crate::search::Answer::Found(_) => 0,
        _ => 1,
    }
}
