//! Which `allowed_signers` a grant is verified against (decision 0069): the one beside the
//! catalog, else `/etc/mesh-guard/allowed_signers`, and only one out of the reach of the
//! account the guard runs as. A list that account can change lists whoever the agent likes.

use super::{AllowedSigners, NoSigners};
use crate::protect::reach::{InReach, out_of_reach};
use std::path::{Path, PathBuf};

/// Where a user install keeps a list its account cannot change: root's, as in the hardened
/// install.
pub const SYSTEM_SIGNERS: &str = "/etc/mesh-guard/allowed_signers";

/// The operator's fix, said wherever a list is not trusted.
pub const FIX: &str = "Operator: sudo install -D -o root -g root -m 0644 allowed_signers /etc/mesh-guard/allowed_signers (and see `mesh-guard doctor`)";

/// The places a grant's signers are looked for, in order: beside the catalog, then the
/// system's.
pub fn signer_places(catalog: &Path) -> Vec<PathBuf> {
    let mut places = vec![super::allowed_signers_for(catalog)];
    let system = PathBuf::from(SYSTEM_SIGNERS);
    if places[0] != system {
        places.push(system);
    }
    places
}

/// One place, as the guard judges it for the account `uid`.
#[derive(Debug)]
pub enum Place {
    Absent,
    /// Within the account's reach: never read.
    InReach(InReach),
    /// Out of reach: the file it is, links followed.
    Trusted(PathBuf),
}

pub fn judge(place: &Path, uid: Option<u32>) -> Place {
    if std::fs::symlink_metadata(place).is_err() {
        return Place::Absent;
    }
    let Some(uid) = uid else {
        return Place::InReach(InReach {
            at: place.to_path_buf(),
            is_file: true,
            why: crate::protect::reach::Why::Unknown,
        });
    };
    match out_of_reach(place, uid) {
        Ok(real) => Place::Trusted(real),
        Err(why) => Place::InReach(why),
    }
}

/// The signers of the first list out of the reach of the account this process runs as (the
/// hook's, and `check`'s and `override grant`'s when the operator runs them as that account);
/// `Err` is one line that says why no grant can be honoured and what the operator does.
pub fn trusted_signers(catalog: &Path) -> Result<AllowedSigners, NoSigners> {
    trusted_signers_for(catalog, crate::perm::current_uid()).map(|(_, s)| s)
}

/// As [`trusted_signers`], for the account `uid`, with the list's path.
pub fn trusted_signers_for(
    catalog: &Path,
    uid: Option<u32>,
) -> Result<(PathBuf, AllowedSigners), NoSigners> {
    let mut refused: Option<String> = None;
    for (i, place) in signer_places(catalog).iter().enumerate() {
        let name = if i == 0 {
            "allowed_signers beside the catalog"
        } else {
            SYSTEM_SIGNERS
        };
        match judge(place, uid) {
            Place::Absent => {}
            Place::Trusted(real) => {
                return super::read_signers(&real).map(|signers| (real, signers));
            }
            Place::InReach(why) => {
                refused.get_or_insert_with(|| why.clause(name));
            }
        }
    }
    Err(match refused {
        Some(clause) => NoSigners::InReach(clause),
        None => NoSigners::Absent { system_too: true },
    })
}
