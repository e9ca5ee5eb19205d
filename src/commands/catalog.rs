//! `mesh-guard catalog check|compile`.

use crate::app::load_rules;

use crate::catalog::{self};
use crate::config::Paths;
use crate::error::exit;

pub fn check(paths: &Paths) -> i32 {
    let rules = match load_rules(paths) {
        Ok(r) => r,
        Err(e) => {
            errln!("{e}");
            // Rules that cannot be read make the setup invalid: the command's "no".
            return exit::NO;
        }
    };
    let guarded = |name: &str| rules.program(name).is_some() || rules.wrapper(name).is_some();
    match catalog::check(&paths.catalog, &guarded) {
        Ok((c, warnings)) => {
            for w in &warnings {
                errln!("warning: {w}");
            }
            let count = |n: usize, one: &str, many: &str| {
                format!("{n} {}", if n == 1 { one } else { many })
            };
            outln!(
                "{}: valid ({}, {})",
                paths.catalog.display(),
                count(c.machine_count(), "machine", "machines"),
                count(c.tools().len(), "tool", "tools")
            );
            // The hook answers from the compiled cache while its stamps match: a forged
            // one would pass what the catalog refuses, so it is compared here.
            let cache = catalog::cache_file_for(&paths.cache_dir(), &paths.catalog);
            match catalog::check_cache(&paths.catalog, &cache) {
                catalog::CacheState::Disagrees(why) => {
                    errln!(
                        "error: {}: the compiled cache does not match the catalog ({why}); remove it, and find out who wrote it",
                        cache.display()
                    );
                    exit::NO
                }
                catalog::CacheState::Agrees => {
                    outln!("compiled cache: matches the catalog");
                    exit::OK
                }
                catalog::CacheState::NotInUse(state) => {
                    outln!("compiled cache: {state}");
                    exit::OK
                }
            }
        }
        Err(errors) => {
            for e in &errors {
                errln!("error: {e}");
            }
            exit::NO
        }
    }
}

pub fn compile(paths: &Paths) -> i32 {
    let index = catalog::compiled_index_for(&paths.catalog);
    match catalog::compile(&paths.catalog, &index) {
        Ok(_) => {
            outln!(
                "{}: compiled to {}",
                paths.catalog.display(),
                index.display()
            );
            exit::OK
        }
        Err(errors) => {
            for e in &errors {
                errln!("error: {e}");
            }
            exit::NO
        }
    }
}
