//! A string as shell source → the walk → the decision. Never panics.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;

fuzz_target!(|source: &str| {
    let _ = mesh_guard::shell::parse(source, 0, &HashMap::new());
    common::decide(source);
});
