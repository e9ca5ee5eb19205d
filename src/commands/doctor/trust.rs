//! Per file the guard trusts, whether the agent's user could change it and what that would
//! mean (issue 42, decision 0069): the signers list, the catalog and its compiled index, the
//! rules, the binary, and the settings that name the hooks.

use super::InForce;
use crate::perm;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub(crate) struct Entry {
    what: &'static str,
    path: PathBuf,
    /// `None` when it cannot be said: the agent's user is root or unknown.
    changeable: Option<bool>,
    meaning: String,
}

/// What the agent could do with each kind of file, were it theirs to change.
fn consequence(what: &str) -> &'static str {
    match what {
        "allowed_signers" => {
            "list its own key and sign its own override grant (the hook refuses every grant while so)"
        }
        "catalog" | "compiled index" => {
            "take a machine, container or unit out of the catalog, and commands to it would pass"
        }
        "rules" => "change which programs are read and how, and so what is refused",
        "binary" => "replace the guard with a program that lets every command through",
        _ => "remove the guard's hooks, and the agent would run unguarded",
    }
}

pub(crate) fn entries(found: &InForce, hook_bins: &[PathBuf]) -> Vec<Entry> {
    let mut files: Vec<(&'static str, PathBuf)> = Vec::new();
    for place in crate::grant::signer_places(&found.catalog) {
        if std::fs::symlink_metadata(&place).is_ok() {
            files.push(("allowed_signers", place));
        }
    }
    files.push(("catalog", found.catalog.clone()));
    if found.index.exists() {
        files.push(("compiled index", found.index.clone()));
    }
    files.extend(found.rules.clone().map(|r| ("rules", r)));
    files.extend(found.launcher.clone().map(|b| ("binary", b)));
    files.extend(hook_bins.iter().map(|b| ("binary", b.clone())));
    files.extend(
        found
            .installed
            .iter()
            .map(|i| ("hook settings", i.settings.clone())),
    );
    files.dedup_by(|a, b| a.1 == b.1);
    let user = found.user.as_ref().filter(|u| u.uid != 0);
    files
        .into_iter()
        .map(|(what, path)| judge(what, path, user))
        .collect()
}

fn judge(what: &'static str, path: PathBuf, user: Option<&perm::User>) -> Entry {
    let Some(user) = user else {
        return Entry {
            what,
            path,
            changeable: None,
            meaning: "not checked: name the agent's user (sudo mesh-guard doctor --user NAME)"
                .into(),
        };
    };
    let changeable = perm::can_change(user, &path);
    // The hook's own rule for a signers list is stricter than whether this user can change
    // it: no group or others may write it, and it is not the hook's account's.
    let untrusted = (what == "allowed_signers")
        .then(|| crate::protect::reach::out_of_reach(&path, user.uid).err())
        .flatten();
    let meaning = if changeable {
        format!("{} could {}", user.name, consequence(what))
    } else if let Some(fault) = untrusted {
        format!(
            "{} cannot change it, but the hook does not trust it: {}",
            user.name,
            fault.described()
        )
    } else {
        format!("out of {}'s reach", user.name)
    };
    Entry {
        what,
        path,
        changeable: Some(changeable),
        meaning,
    }
}

pub(crate) fn json(entries: &[Entry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| {
                json!({
                    "file": e.what, "path": e.path,
                    "agent_can_change": e.changeable, "meaning": e.meaning,
                })
            })
            .collect(),
    )
}

pub(crate) fn print(entries: &[Entry]) {
    outln!("trusted files (could the agent's user change them?):");
    for e in entries {
        let answer = match e.changeable {
            Some(true) => "yes",
            Some(false) => "no ",
            None => "?  ",
        };
        outln!(
            "  {answer}  {:<15} {}: {}",
            e.what,
            shown(&e.path),
            e.meaning
        );
    }
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}
