//! Who may sign an override grant (`allowed_signers` beside the catalog, decision 0058), and
//! whether the agent's user could sign one itself: an allowed signer's private key, not
//! encrypted, where that user can read it.

use super::{Level, Report};
use crate::perm;
use std::path::{Path, PathBuf};

/// The list a grant is verified against, as the hook run by the agent's user would choose it
/// (decision 0069): each place passed over says why, and what that means.
fn in_force(catalog: &Path, user: Option<&perm::User>, report: &mut Report) -> Option<PathBuf> {
    let uid = user.map(|u| u.uid).or_else(perm::current_uid);
    let who = user.map_or("the agent's user", |u| u.name.as_str());
    let places = crate::grant::signer_places(catalog);
    for place in &places {
        match crate::grant::judge(place, uid) {
            crate::grant::Place::Absent => {}
            crate::grant::Place::Trusted(_) => return Some(place.clone()),
            crate::grant::Place::InReach(fault) => {
                let meaning = match fault.why {
                    crate::protect::reach::Why::Owned(_) => {
                        format!("{who} could change it and list the agent's own key")
                    }
                    crate::protect::reach::Why::Writable(_) => {
                        "accounts other than its owner could change it".to_string()
                    }
                    _ => "it cannot be checked".to_string(),
                };
                report.add(
                    Level::Warn,
                    format!(
                        "{} is not trusted ({}): {meaning}, so no grant it allows is honoured",
                        place.display(),
                        fault.described()
                    ),
                    crate::grant::FIX,
                );
            }
        }
    }
    let shown: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
    report.add(
        Level::Ok,
        format!(
            "no allowed_signers out of {who}'s reach ({}): no override grant is honoured",
            shown.join(", ")
        ),
        format!(
            "to allow overrides, list the operators' keys (ssh-keygen's ALLOWED SIGNERS format: NAME namespaces=\"mesh-guard-override\" ssh-ed25519 AAAA…) in a file root owns, in directories only root can write: {}",
            crate::grant::FIX.trim_start_matches("Operator: ")
        ),
    );
    None
}

/// Past these a `.ssh` directory or a key file is not read further.
const MAX_ENTRIES: usize = 256;
const MAX_KEY_BYTES: u64 = 64 * 1024;

pub(crate) fn check(
    catalog: &Path,
    user: Option<&perm::User>,
    report: &mut Report,
) -> Option<PathBuf> {
    let path = in_force(catalog, user, report)?;
    let signers = match crate::grant::read_signers(&path) {
        Ok(signers) => signers,
        Err(why) => {
            report.add(
                Level::Warn,
                format!("{}: {why}; no grant is honoured", path.display()),
                crate::grant::FIX,
            );
            return Some(path);
        }
    };
    for error in &signers.errors {
        report.add(
            Level::Warn,
            format!("{}: {error}: that line allows no one", path.display()),
            "fix the line (ssh-keygen(1), ALLOWED SIGNERS)",
        );
    }
    let now = crate::record::now_ms();
    for signer in &signers.signers {
        let fingerprint = signer.key.fingerprint(ssh_key::HashAlg::Sha256);
        match signers.allows(signer.key.key_data(), crate::grant::NAMESPACE, now) {
            Ok(s) if s.line == signer.line => report.add(
                Level::Ok,
                format!(
                    "may sign override grants: {} ({fingerprint}, {} line {})",
                    signer.principals,
                    path.display(),
                    signer.line
                ),
                "",
            ),
            Ok(_) => {}
            Err(why) => report.add(
                Level::Warn,
                format!(
                    "{} ({fingerprint}, line {}) may not sign override grants: {why}",
                    signer.principals, signer.line
                ),
                "",
            ),
        }
    }
    if signers.signers.is_empty() {
        report.add(
            Level::Ok,
            format!("{} lists no key: no grant is honoured", path.display()),
            "",
        );
    }
    if let Some(user) = user {
        for (key, file) in readable_private_keys(user) {
            if signers.signers.iter().any(|s| s.key.key_data() == &key) {
                report.add(
                    Level::Warn,
                    format!(
                        "the private key of an allowed signer lies unencrypted at {}, where {} can read it: the agent could sign its own override",
                        file.display(),
                        user.name
                    ),
                    format!(
                        "give it a passphrase (ssh-keygen -p -f {0}), or keep it in ssh-agent or on a FIDO key, or move it where {1} cannot read it",
                        file.display(),
                        user.name
                    ),
                );
            }
        }
    }
    Some(path)
}

/// The unencrypted private keys under the `.ssh` of the agent's user and of the user running
/// this, that the agent's user can read: each with its public half.
fn readable_private_keys(user: &perm::User) -> Vec<(ssh_key::public::KeyData, PathBuf)> {
    let mut dirs = vec![user.home.join(".ssh")];
    dirs.extend(
        crate::io::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".ssh"))
            .filter(|d| d != &dirs[0]),
    );
    let mut found = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten().take(MAX_ENTRIES) {
            let file = entry.path();
            if !file.is_file() || !perm::can_read(user, &file) {
                continue;
            }
            if let Some(key) = unencrypted(&file) {
                found.push((key, file));
            }
        }
    }
    found
}

/// The public half of the unencrypted private key in `file`: OpenSSH's format, or the
/// older PEM one with its `.pub` beside it.
fn unencrypted(file: &Path) -> Option<ssh_key::public::KeyData> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(MAX_KEY_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    if text.contains("-----BEGIN OPENSSH PRIVATE KEY-----") {
        let key = ssh_key::PrivateKey::from_openssh(&text).ok()?;
        return (!key.is_encrypted()).then(|| key.public_key().key_data().clone());
    }
    if text.contains(" PRIVATE KEY-----") && !text.contains("ENCRYPTED") {
        let mut public = file.as_os_str().to_owned();
        public.push(".pub");
        let public = std::fs::read_to_string(PathBuf::from(public)).ok()?;
        return Some(
            ssh_key::PublicKey::from_openssh(&public)
                .ok()?
                .key_data()
                .clone(),
        );
    }
    None
}
