//! `mesh-guard override grant`: an override grant signed with the operator's SSH key
//! through `ssh-keygen -Y sign` (so ssh-agent, passphrases and FIDO keys work as they do
//! for the operator's other signatures), printed as the line that exports it
//! (decision 0058).

use crate::cli::GrantArgs;
use crate::config::Paths;
use crate::error::exit;
use crate::grant::{Grant, MAX_LIFETIME_MS, NAMESPACE, VAR};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The keys tried, in `~/.ssh`, when `-f` is not given: as `ssh` tries them.
const DEFAULT_KEYS: [&str; 5] = [
    "id_ed25519",
    "id_ecdsa",
    "id_ed25519_sk",
    "id_ecdsa_sk",
    "id_rsa",
];
/// Past this `ssh-keygen`'s signature is not read further: no signature is this long.
const MAX_SIGNATURE_BYTES: u64 = 64 * 1024;

pub fn run(paths: &Paths, args: &GrantArgs) -> i32 {
    match grant(paths, args) {
        Ok(text) => {
            outln!("export {VAR}={text}");
            exit::OK
        }
        Err(e) => {
            errln!("error: {e}");
            exit::ERROR
        }
    }
}

/// Why no grant was signed.
#[derive(Debug)]
enum GrantError {
    /// A `--machine`, `--module` or `--rule` that is not one word.
    NotOneWord {
        option: &'static str,
        name: String,
    },
    NotASpan(String),
    LongerThanADay,
    Message(crate::grant::MessageError),
    NoRandom(std::io::Error),
    NoHome,
    NoKey,
    NoSshKeygen(std::io::Error),
    SshKeygenUnfinished(std::io::Error),
    SignFailed(PathBuf),
    Signature(crate::grant::BadSignature),
}

impl std::fmt::Display for GrantError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantError::NotOneWord { option, name } => {
                write!(f, "--{option} {name:?}: a name is one word")
            }
            GrantError::NotASpan(given) => {
                write!(f, "--for {given:?}: expected a span such as 30m or 2h")
            }
            GrantError::LongerThanADay => {
                f.write_str("--for: a grant lasts at most 24h; sign another when it ends")
            }
            GrantError::Message(e) => e.fmt(f),
            GrantError::NoRandom(e) => write!(f, "cannot read /dev/urandom ({e})"),
            GrantError::NoHome => f.write_str("no home directory to find a key in: give one with -f"),
            GrantError::NoKey => f.write_str(
                "no key in ~/.ssh (id_ed25519, id_ecdsa, id_ed25519_sk, id_ecdsa_sk, id_rsa): give one with -f",
            ),
            GrantError::NoSshKeygen(e) => {
                write!(f, "cannot run ssh-keygen ({e}): install OpenSSH's ssh-keygen")
            }
            GrantError::SshKeygenUnfinished(e) => write!(f, "ssh-keygen did not finish ({e})"),
            GrantError::SignFailed(key) => {
                write!(f, "ssh-keygen -Y sign -f {} failed (above)", key.display())
            }
            GrantError::Signature(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GrantError {}

fn grant(paths: &Paths, args: &GrantArgs) -> Result<String, GrantError> {
    let mut terms = Vec::new();
    let rules: Vec<String> = args.rule.iter().map(|r| r.id().to_string()).collect();
    for (kind, names) in [
        ("machine", &args.machine),
        ("module", &args.module),
        ("rule", &rules),
    ] {
        for name in names {
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(GrantError::NotOneWord {
                    option: kind,
                    name: name.clone(),
                });
            }
            terms.push(format!("{kind}:{name}"));
        }
    }
    let span = crate::time::span_ms(&args.duration)
        .filter(|ms| *ms > 0)
        .ok_or_else(|| GrantError::NotASpan(args.duration.clone()))?;
    if span > MAX_LIFETIME_MS {
        return Err(GrantError::LongerThanADay);
    }
    let issued_ms = crate::record::now_ms() / 1000 * 1000;
    let grant = Grant {
        reason: args.reason.trim().to_string(),
        scope: terms.join(" "),
        host: args.host.clone().unwrap_or_else(crate::record::host_name),
        issued_ms,
        expires_ms: issued_ms + span,
        nonce: nonce()?,
    };
    grant.check().map_err(GrantError::Message)?;
    let key = match &args.key {
        Some(key) => key.clone(),
        None => default_key()?,
    };
    let message = grant.render();
    let text =
        crate::grant::encode(&message, &sign(&key, &message)?).map_err(GrantError::Signature)?;
    // Said now, not at the refusal it would otherwise meet: the operator is here to fix it.
    let expires = crate::time::format_time(grant.expires_ms, false);
    match crate::pipeline::verify_grant_on(paths, &text, &grant.host) {
        Ok(verified) => errln!(
            "mesh-guard: a grant for {} until {expires}{}, signed by {}",
            grant.host,
            if grant.scope.is_empty() {
                String::new()
            } else {
                format!(", covering `{}`", grant.scope)
            },
            verified.signer
        ),
        Err(not) => errln!(
            "mesh-guard: warning: the guard beside {} will not honour this grant: {}",
            paths.catalog.display(),
            not.why
        ),
    }
    Ok(text)
}

/// Signs `message` with `ssh-keygen -Y sign`: its armored signature.
fn sign(key: &std::path::Path, message: &str) -> Result<String, GrantError> {
    let mut child = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", NAMESPACE, "-f"])
        .arg(key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(GrantError::NoSshKeygen)?;
    let written = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(message.as_bytes()));
    let mut signature = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| out.take(MAX_SIGNATURE_BYTES).read_to_string(&mut signature));
    let status = child.wait().map_err(GrantError::SshKeygenUnfinished)?;
    if !status.success() || !matches!(written, Some(Ok(()))) || !matches!(read, Some(Ok(_))) {
        return Err(GrantError::SignFailed(key.to_path_buf()));
    }
    Ok(signature)
}

/// The first of the usual keys in `~/.ssh`: the private key, or its public half alone
/// (ssh-agent then signs).
fn default_key() -> Result<PathBuf, GrantError> {
    let home = crate::io::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .or_else(crate::perm::passwd_home)
        .ok_or(GrantError::NoHome)?;
    for name in DEFAULT_KEYS {
        let private = home.join(".ssh").join(name);
        let public = home.join(".ssh").join(format!("{name}.pub"));
        if private.is_file() {
            return Ok(private);
        }
        if public.is_file() {
            return Ok(public);
        }
    }
    Err(GrantError::NoKey)
}

/// Sixteen hex digits from the system's random source: each grant's bytes its own.
fn nonce() -> Result<String, GrantError> {
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(GrantError::NoRandom)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
