//! Self-protection: what a command may not do to the guard itself (rules/self.toml). Its own
//! files are not the agent's to write ([`files`], by what each writer writes, [`writes`], and
//! the other names a hard link gives a file, [`hard_links`]); an agent may not be started with
//! the guard's hooks away ([`agents`]); the operator's subcommands are the operator's
//! ([`guard_cli`]); and no command grants itself the override ([`overrides`]).

mod agents;
mod files;
mod guard_cli;
mod hard_links;
mod overrides;
mod writes;
