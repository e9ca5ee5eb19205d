//! The operator's override grant (decision 0058): `MESH_GUARD_OVERRIDE` holds a reason, a
//! scope, the host it is for and its expiry, signed with the operator's SSH key
//! (PROTOCOL.sshsig, namespace `mesh-guard-override`, as `ssh-keygen -Y sign` makes it). It
//! is verified in process against `allowed_signers` beside the catalog, and only when a
//! refusal is about to be overridden or a session starts: a pass verifies nothing.
//!
//! Its text is `mg1.<message>.<signature>`, both parts base64url without padding: letters,
//! digits, `-`, `_` and `.`, which no shell quotes and no environment mangles.

mod message;
pub mod signers;
mod trust;

pub use message::{Grant, MessageError};
pub use signers::{AllowedSigners, BadLine, LineError, NotAllowed};
pub use trust::{
    FIX, Place, SYSTEM_SIGNERS, judge, signer_places, trusted_signers, trusted_signers_for,
};

use base64ct::{Base64, Base64UrlUnpadded, Encoding};
use std::path::{Path, PathBuf};

/// The sshsig namespace a grant is signed in: a signature made for anything else (git
/// commits, files) is no grant.
pub const NAMESPACE: &str = "mesh-guard-override";
/// The variable the grant is read from, in the guard's own environment.
pub const VAR: &str = "MESH_GUARD_OVERRIDE";
const PREFIX: &str = "mg1.";
/// Past this the variable is not read: no grant is this long.
const MAX_TEXT: usize = 16 * 1024;
/// Past this `allowed_signers` is not read.
const MAX_SIGNERS_BYTES: u64 = 1024 * 1024;
/// How far ahead of this host's clock a grant may be issued (the signer's clock may lead).
const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;
/// The longest a grant may last: a copy the agent keeps is good at most this long.
pub const MAX_LIFETIME_MS: i64 = 24 * 3_600_000;

/// A grant whose signature, signer, host and time all hold.
#[derive(Debug, Clone)]
pub struct Verified {
    pub grant: Grant,
    /// The signer's key fingerprint (`SHA256:…`).
    pub signer: String,
}

/// Why a grant is not honoured (one line, no host paths), and what was learnt of it.
#[derive(Debug, Clone, Default)]
pub struct NotHonoured {
    pub why: String,
    /// The key that signed it, once its signature verified.
    pub signer: String,
    /// Its expiry, RFC 3339, once its message could be read.
    pub expires: String,
}

/// `allowed_signers` beside the catalog: in its directory for a catalog file or directory.
pub fn allowed_signers_for(catalog: &Path) -> PathBuf {
    catalog
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("allowed_signers")
}

/// The grant in this process's environment, if the variable is set and not empty.
pub fn text_in_env() -> Option<String> {
    crate::io::var_os(VAR)
        .map(|v| v.to_string_lossy().trim().to_string())
        .filter(|v| !v.is_empty())
}

/// Why no grant can be honoured: no list of signers the guard may trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoSigners {
    /// No list can be opened (`beside` the catalog only, or there and at the system's).
    Absent {
        system_too: bool,
    },
    WritableByOthers,
    NotText,
    TooLarge,
    /// A list within the reach of the guard's account: the clause says which and why.
    InReach(String),
}

impl std::fmt::Display for NoSigners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoSigners::Absent { system_too: false } => {
                f.write_str("there is no readable allowed_signers file beside the catalog")
            }
            NoSigners::Absent { system_too: true } => write!(
                f,
                "there is no readable allowed_signers file beside the catalog or at {}",
                trust::SYSTEM_SIGNERS
            ),
            NoSigners::WritableByOthers => {
                f.write_str("allowed_signers is writable by its group or others")
            }
            NoSigners::NotText => f.write_str("allowed_signers cannot be read as text"),
            NoSigners::TooLarge => f.write_str("allowed_signers is larger than 1 MiB"),
            NoSigners::InReach(clause) => {
                write!(f, "{clause}, so no key it lists is trusted. {}", trust::FIX)
            }
        }
    }
}

impl std::error::Error for NoSigners {}

/// Reads `allowed_signers`, bounded; `Err` says why no grant can be honoured.
pub fn read_signers(path: &Path) -> Result<AllowedSigners, NoSigners> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|_| NoSigners::Absent { system_too: false })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Anyone who may write it may sign for themselves.
        if file.metadata().is_ok_and(|m| m.mode() & 0o022 != 0) {
            return Err(NoSigners::WritableByOthers);
        }
    }
    let mut text = String::new();
    file.take(MAX_SIGNERS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|_| NoSigners::NotText)?;
    if text.len() as u64 > MAX_SIGNERS_BYTES {
        return Err(NoSigners::TooLarge);
    }
    Ok(AllowedSigners::parse(&text))
}

/// The grant `text` verified against `signers` on `host` at `now_ms`.
pub fn verify(
    text: &str,
    signers: Result<&AllowedSigners, &NoSigners>,
    host: &str,
    now_ms: i64,
) -> Result<Verified, NotHonoured> {
    let fail = |why: String| NotHonoured {
        why,
        ..NotHonoured::default()
    };
    let Some(body) = text.strip_prefix(PREFIX) else {
        return Err(fail(
            "it is not a signed grant (a plain reason is no override; the operator makes one with `mesh-guard override grant`)".into(),
        ));
    };
    if text.len() > MAX_TEXT {
        return Err(fail(
            "the grant is malformed: it is longer than 16 KiB".into(),
        ));
    }
    let (message, signature) =
        decode(body).map_err(|why| fail(format!("the grant is malformed: {why}")))?;
    let grant = Grant::parse(&message).map_err(|why| {
        fail(format!(
            "the grant is malformed: {}",
            Malformed::Message(why)
        ))
    })?;
    let fail = |why: String, signer: &str| NotHonoured {
        why,
        signer: signer.to_string(),
        expires: crate::time::format_time(grant.expires_ms, false),
    };
    if signature.namespace() != NAMESPACE {
        return Err(fail(
            format!(
                "the grant is malformed: it was signed for `{}`, not {NAMESPACE}",
                signature.namespace()
            ),
            "",
        ));
    }
    let key = ssh_key::PublicKey::new(signature.public_key().clone(), "");
    let fingerprint = key.fingerprint(ssh_key::HashAlg::Sha256).to_string();
    let signers = signers.map_err(|why| fail(why.to_string(), ""))?;
    signers
        .allows(signature.public_key(), NAMESPACE, now_ms)
        .map_err(|why| fail(format!("it is signed by {fingerprint}, but {why}"), ""))?;
    key.verify(NAMESPACE, message.as_bytes(), &signature)
        .map_err(|_| {
            fail(
                "its signature does not verify (the grant was changed after it was signed)".into(),
                "",
            )
        })?;
    if !same_host(&grant.host, host) {
        return Err(fail(
            format!("it is for the host {}, not this one ({host})", grant.host),
            &fingerprint,
        ));
    }
    if now_ms >= grant.expires_ms {
        return Err(fail(
            format!(
                "it expired at {}",
                crate::time::format_time(grant.expires_ms, false)
            ),
            &fingerprint,
        ));
    }
    if grant.issued_ms > now_ms + CLOCK_SKEW_MS {
        return Err(fail(
            format!(
                "it is not valid until {}",
                crate::time::format_time(grant.issued_ms, false)
            ),
            &fingerprint,
        ));
    }
    Ok(Verified {
        grant,
        signer: fingerprint,
    })
}

fn same_host(a: &str, b: &str) -> bool {
    a.trim_end_matches('.')
        .eq_ignore_ascii_case(b.trim_end_matches('.'))
}

/// Why `ssh-keygen -Y sign`'s output is no signature to put in a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadSignature {
    NotBase64,
    /// `ssh-key`'s words on it.
    Unreadable(String),
}

impl std::fmt::Display for BadSignature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadSignature::NotBase64 => f.write_str("the signature is not base64"),
            BadSignature::Unreadable(e) => write!(f, "the signature cannot be read ({e})"),
        }
    }
}

impl std::error::Error for BadSignature {}

/// Why a grant's text does not decode into a message and a signature (after "the grant is
/// malformed: ").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    NoSignaturePart,
    MessageNotBase64Url,
    MessageNotUtf8,
    SignatureNotBase64Url,
    NotAnSshSignature,
    Message(MessageError),
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::NoSignaturePart => f.write_str("it has no signature part"),
            Malformed::MessageNotBase64Url => f.write_str("its message is not base64url"),
            Malformed::MessageNotUtf8 => f.write_str("its message is not UTF-8"),
            Malformed::SignatureNotBase64Url => f.write_str("its signature is not base64url"),
            Malformed::NotAnSshSignature => f.write_str("its signature is not an SSH signature"),
            Malformed::Message(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Malformed {}

/// The grant's text: the signed message and the signature `ssh-keygen -Y sign` printed
/// (armored, `-----BEGIN SSH SIGNATURE-----`).
pub fn encode(message: &str, armored: &str) -> Result<String, BadSignature> {
    let body: String = armored
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
        .collect();
    let blob = Base64::decode_vec(&body).map_err(|_| BadSignature::NotBase64)?;
    ssh_key::SshSig::from_pem(armored).map_err(|e| BadSignature::Unreadable(e.to_string()))?;
    Ok(format!(
        "{PREFIX}{}.{}",
        Base64UrlUnpadded::encode_string(message.as_bytes()),
        Base64UrlUnpadded::encode_string(&blob)
    ))
}

/// The message and the signature out of a grant's text (after its prefix).
fn decode(body: &str) -> Result<(String, ssh_key::SshSig), Malformed> {
    let (message, signature) = body.split_once('.').ok_or(Malformed::NoSignaturePart)?;
    let message =
        Base64UrlUnpadded::decode_vec(message).map_err(|_| Malformed::MessageNotBase64Url)?;
    let message = String::from_utf8(message).map_err(|_| Malformed::MessageNotUtf8)?;
    let blob =
        Base64UrlUnpadded::decode_vec(signature).map_err(|_| Malformed::SignatureNotBase64Url)?;
    let wrapped: Vec<String> = Base64::encode_string(&blob)
        .as_bytes()
        .chunks(70)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    let pem = format!(
        "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
        wrapped.join("\n")
    );
    let signature = ssh_key::SshSig::from_pem(pem).map_err(|_| Malformed::NotAnSshSignature)?;
    Ok((message, signature))
}
