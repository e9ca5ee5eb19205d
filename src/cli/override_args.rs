//! `mesh-guard override grant`'s arguments.

use clap::Subcommand;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum OverrideAction {
    /// Sign an override grant with your SSH key (through `ssh-keygen -Y sign`) and print the `export MESH_GUARD_OVERRIDE=…` line (exit 0 done, 2 error)
    #[command(
        after_help = "The key must be listed in allowed_signers beside the catalog (/etc/mesh-guard/allowed_signers in a hardened install), e.g.:\n  alice namespaces=\"mesh-guard-override\" ssh-ed25519 AAAA…\n\nExample:\n  mesh-guard override grant --reason 'incident 4711' --machine atlas --rule remote-access --for 1h -f ~/.ssh/id_ed25519"
    )]
    Grant(GrantArgs),
}

#[derive(Debug, clap::Args)]
pub struct GrantArgs {
    /// Why: shown in the record with every command the grant lets through
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// Only commands reaching this machine (repeatable)
    #[arg(long, value_name = "NAME")]
    pub machine: Vec<String>,
    /// Only commands reaching this module (repeatable)
    #[arg(long, value_name = "NAME")]
    pub module: Vec<String>,
    /// Only refusals of this rule: remote-access, remote-daemon, mesh-container, mesh-unit, unverifiable, fail-closed (repeatable)
    #[arg(long, value_name = "ID", value_parser = crate::scope::coverable_rule)]
    pub rule: Vec<crate::rule::Rule>,
    /// How long the grant lasts: 30m, 2h, … at most 24h
    #[arg(long = "for", value_name = "DURATION", default_value = "2h")]
    pub duration: String,
    /// The signing key (a private key, or a public key whose private half ssh-agent holds) [default: the first of ~/.ssh/id_ed25519, id_ecdsa, id_ed25519_sk, id_ecdsa_sk, id_rsa]
    #[arg(short = 'f', value_name = "KEY")]
    pub key: Option<PathBuf>,
    /// The host the grant is for [default: this host]
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}
