//! Self-protection's lists: what an agent may not change about the guard itself. Its
//! catalog, rules, record, cache, binary, plugin and the agent's hook settings are the
//! operator's; so are the guard's variables in the files a future session starts from. Which
//! of the command's paths are those files is asked of the world (`world::World`).

mod paths;
pub mod reach;
mod variables;

pub(crate) use paths::*;
pub use variables::*;

use std::path::PathBuf;

/// The variables that configure the guard, and two that once did. Set in a command they
/// change nothing (the hook reads its own environment), but written into a startup file they
/// would configure the next session: the override above all, and also which catalog, record
/// or rules it uses. `MESH_GUARD_OVERRIDE_SCOPE` (read until decision 0058) and
/// `MESH_GUARD_BIN` (read by the launcher until decision 0059) configure nothing now; they
/// stay refused, as an older install may still read them and refusing them costs nothing.
pub const GUARD_VARIABLES: [&str; 6] = [
    "MESH_GUARD_OVERRIDE",
    "MESH_GUARD_OVERRIDE_SCOPE",
    "MESH_GUARD_BIN",
    "MESH_GUARD_CATALOG",
    "MESH_GUARD_DB",
    "MESH_GUARD_RULES",
];

/// Where the plugin's launcher looks for the binary, in order (plugin/bin/mesh-guard's
/// `PLACES`); `~/` is the account's home. Each is one of the guard's files whether or not a
/// binary lies there now: a binary planted in an empty place would run from then on.
pub const LAUNCHER_PLACES: [&str; 4] = [
    "/usr/local/bin/mesh-guard",
    "/usr/bin/mesh-guard",
    "~/.cargo/bin/mesh-guard",
    "~/.local/bin/mesh-guard",
];

/// [`LAUNCHER_PLACES`] under each of `homes` (the system's places once).
pub fn launcher_places(homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut places = Vec::new();
    for place in LAUNCHER_PLACES {
        match place.strip_prefix("~/") {
            Some(rest) => places.extend(homes.iter().map(|h| h.join(rest))),
            None => places.push(PathBuf::from(place)),
        }
    }
    places
}

#[cfg(test)]
mod tests;
