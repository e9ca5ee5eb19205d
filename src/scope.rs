//! Scoped overrides (decision 0015): `MESH_GUARD_OVERRIDE_SCOPE` narrows the operator's
//! override to what it names. Read from the start environment only, under the same
//! use-time rule as the override itself (decision 0008, `usetime`).

use crate::decide::{Refusal, Rule};

pub const SCOPE_VAR: &str = "MESH_GUARD_OVERRIDE_SCOPE";

/// The rules an override can cover: the ones that are not about the guard itself.
const COVERABLE: [Rule; 6] = [
    Rule::RemoteAccess,
    Rule::RemoteDaemon,
    Rule::MeshContainer,
    Rule::MeshUnit,
    Rule::Unverifiable,
    Rule::FailClosed,
];

/// What an override covers. A command passes only if it satisfies every kind of term
/// given; a kind not given does not narrow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub machines: Vec<String>,
    pub modules: Vec<String>,
    pub rules: Vec<String>,
    /// UTC milliseconds after which the override is over.
    pub until_ms: Option<i64>,
    /// The scope as the operator wrote it, for messages and the record.
    pub text: String,
}

/// The scope in this process's environment: `None` when unset, `Some(Err)` when malformed.
pub fn from_env() -> Option<Result<Scope, String>> {
    crate::io::var_os(SCOPE_VAR).map(|v| parse(&v.to_string_lossy()))
}

/// Reads `machine:NAME module:NAME rule:ID until:TIME`, space-separated.
pub fn parse(text: &str) -> Result<Scope, String> {
    let mut scope = Scope {
        text: text.split_whitespace().collect::<Vec<_>>().join(" "),
        ..Scope::default()
    };
    if scope.text.is_empty() {
        return Err(format!("{SCOPE_VAR} is set but empty"));
    }
    for whole in text.split_whitespace() {
        // Shown in a refusal: an operator's long term is cut there.
        let term: &str = match whole.char_indices().nth(60) {
            Some((at, _)) => &whole[..at],
            None => whole,
        };
        let term = if term.len() < whole.len() {
            format!("{term}…")
        } else {
            term.to_string()
        };
        let term = term.as_str();
        let (kind, value) = whole
            .split_once(':')
            .filter(|(_, v)| !v.is_empty())
            .ok_or_else(|| format!("`{term}` is not KIND:VALUE"))?;
        match kind {
            "machine" => scope.machines.push(host(value)),
            "module" => scope.modules.push(value.to_string()),
            "rule" => {
                if !COVERABLE.iter().any(|r| r.id() == value) {
                    let known: Vec<&str> = COVERABLE.iter().map(|r| r.id()).collect();
                    return Err(format!(
                        "`{term}`: no rule an override covers is called `{value}` (one of: {})",
                        known.join(", ")
                    ));
                }
                scope.rules.push(value.to_string());
            }
            "until" => {
                if scope.until_ms.is_some() {
                    return Err("`until:` is given more than once".into());
                }
                // An RFC 3339 date and time: a span such as `2h` would move with each command.
                if !value.contains(['T', 't']) {
                    return Err(format!(
                        "`{term}`: not an RFC 3339 time (2026-11-30T18:00:00Z)"
                    ));
                }
                let ms = crate::audit::parse_time(value, 0).map_err(|_| {
                    format!("`{term}`: not an RFC 3339 time (2026-11-30T18:00:00Z)")
                })?;
                scope.until_ms = Some(ms);
            }
            _ => {
                return Err(format!(
                    "`{term}`: an unknown kind (machine, module, rule or until)"
                ));
            }
        }
    }
    Ok(scope)
}

/// Machine names compare as the catalog compares them.
fn host(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl Scope {
    /// The scope as a refusal shows it, cut so the message stays under 1,000 characters.
    pub fn shown(&self) -> String {
        const MAX: usize = 120;
        if self.text.chars().count() <= MAX {
            return self.text.clone();
        }
        let cut: String = self.text.chars().take(MAX).collect();
        format!("{cut}…")
    }

    /// Whether the scope covers a command, given every refusal it would meet (a command
    /// reaching two machines must have both in scope). `Err` says why not.
    pub fn covers(&self, refusals: &[&Refusal], now_ms: i64) -> Result<(), String> {
        if let Some(until) = self.until_ms
            && now_ms >= until
        {
            return Err(format!(
                "it ended at {}",
                crate::audit::format_time(until, false)
            ));
        }
        for refusal in refusals {
            if !self.rules.is_empty() && !self.rules.iter().any(|r| r == refusal.rule.id()) {
                return Err(format!("it does not cover rule {}", refusal.rule.id()));
            }
            if !self.machines.is_empty() {
                match machine_of(refusal) {
                    Some(m) if self.machines.contains(&host(&m)) => {}
                    Some(m) => return Err(format!("it does not cover machine {m}")),
                    None => return Err("the command names no machine the scope lists".into()),
                }
            }
            if !self.modules.is_empty() {
                match refusal.object.as_ref().and_then(|o| o.module()) {
                    Some(m) if self.modules.iter().any(|s| s == m) => {}
                    Some(m) => return Err(format!("it does not cover module {m}")),
                    // ssh to a machine reaches every module on it.
                    None => return Err("the command reaches more than a module".into()),
                }
            }
        }
        Ok(())
    }
}

fn machine_of(refusal: &Refusal) -> Option<String> {
    match &refusal.object {
        Some(crate::catalog::MeshObject::Machine(m)) => Some(m.machine.clone()),
        _ => refusal.machine.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_and_errors() {
        let s =
            parse(" machine:Atlas. module:controller rule:mesh-unit until:2026-12-01T00:00:00Z ")
                .unwrap();
        assert_eq!(s.machines, ["atlas"]);
        assert_eq!(s.modules, ["controller"]);
        assert_eq!(s.rules, ["mesh-unit"]);
        assert!(s.until_ms.is_some());
        for bad in [
            "",
            "   ",
            "atlas",
            "machine:",
            "host:atlas",
            "rule:self-protection",
            "rule:nothing",
            "until:2h",
            "until:tomorrow",
            "until:2026-12-01T00:00:00Z until:2026-12-02T00:00:00Z",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
