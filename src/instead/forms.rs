//! A refused command in the family's grammar: the forms its `replaces` shapes are matched
//! against. Options are not shape words and aliases rank as the family's program, so
//! `nerdctl logs x` is also `docker logs x`, `service x restart` is `systemctl restart x`,
//! and `ssh -p 2222 -o … atlas 'sudo journalctl -u x'` is also `ssh atlas journalctl -u x`
//! and `journalctl -u x`.

use crate::argv::base_name;
use crate::decide::Refusal;
use crate::rule::Rule;

/// The programs whose carried command runs on another machine.
const REMOTE_SHELLS: [&str; 5] = ["ssh", "autossh", "mosh", "sshpass", "dbclient"];

/// Every form of the refused command, the command itself first.
pub fn forms(refusal: &Refusal, machine: Option<&str>) -> Vec<Vec<String>> {
    let words = &refusal.command;
    let mut forms = vec![words.clone()];
    let Some(program) = words.first().map(|w| base_name(w)) else {
        return forms;
    };
    // The family's program in the program's place.
    if !refusal.family.is_empty() && refusal.family != [program] {
        let mut family = refusal.family.clone();
        family.extend(words[1..].iter().cloned());
        forms.push(family);
    }
    // systemctl's compound verbs rank as the verb they come to.
    if program == "systemctl" {
        forms.extend(plain_verbs(words));
    }
    // A call that does what another command does ranks as that command on its target.
    for equivalent in &refusal.equivalent {
        let mut form = equivalent.clone();
        form.push(refusal.target.clone());
        let plain = plain_verbs(&form);
        forms.push(form);
        forms.extend(plain);
    }
    // `service UNIT VERB` (or a family form of it, `/etc/init.d/UNIT VERB`): systemctl's
    // grammar is `systemctl VERB UNIT`.
    let services: Vec<Vec<String>> = forms
        .iter()
        .filter_map(|form| match form.as_slice() {
            [service, unit, verb, rest @ ..] if base_name(service) == "service" => {
                let mut systemctl = vec!["systemctl".to_string(), verb.clone(), unit.clone()];
                systemctl.extend(rest.iter().cloned());
                Some(systemctl)
            }
            _ => None,
        })
        .collect();
    forms.extend(services);
    let family = refusal.family.first().map_or(program, String::as_str);
    // A program that reaches a machine and carries a command runs it there (`rsh atlas
    // journalctl`, `pdsh -w atlas …`), as ssh does.
    let remote = REMOTE_SHELLS.contains(&program)
        || REMOTE_SHELLS.contains(&family)
        || (refusal.rule == Rule::RemoteAccess && !refusal.inner.is_empty());
    let runs: Vec<Vec<String>> = if refusal.runs.is_empty() && !refusal.inner.is_empty() {
        vec![refusal.inner.clone()]
    } else {
        refusal.runs.clone()
    };
    // The program and its target with what the target runs: `ssh atlas journalctl …`,
    // `docker exec redis redis-cli …`.
    let head: Vec<String> = if remote {
        let host = machine.map_or_else(Vec::new, |m| vec![m.to_string()]);
        std::iter::once(program.to_string()).chain(host).collect()
    } else {
        words[..words.len().saturating_sub(refusal.inner.len())].to_vec()
    };
    // A run with a part that cannot be known (`systemctl status $(cat f)`) is not ranked
    // on: what it does is not known.
    // `podman exec redis redis-cli` is also `docker exec redis redis-cli`, `rsh atlas …` is
    // also `ssh atlas …`.
    let family_head: Option<Vec<String>> =
        (!refusal.family.is_empty() && refusal.family != [program]).then(|| {
            let mut h = refusal.family.clone();
            h.extend(head.iter().skip(1).cloned());
            h
        });
    for run in runs
        .iter()
        .filter(|r| r.iter().all(|w| crate::shell::is_known(w)))
    {
        for head in std::iter::once(&head).chain(family_head.as_ref()) {
            let mut form = head.clone();
            form.extend(run.iter().cloned());
            forms.push(form);
        }
        // On another machine, what runs there is a command as if typed there.
        if remote {
            forms.push(run.clone());
        }
    }
    if remote {
        if runs.is_empty() {
            forms.extend(family_head);
            forms.push(head);
        }
        forms.extend((1..words.len()).map(|i| words[i..].to_vec()));
    }
    forms
}

/// A systemctl command with its compound verb (`reload-or-restart`) replaced by each plainer
/// verb it comes to.
fn plain_verbs(words: &[String]) -> Vec<Vec<String>> {
    let Some(at) = words.iter().position(|w| verb_as(w).is_some()) else {
        return Vec::new();
    };
    let verbs = verb_as(&words[at]).unwrap_or_default();
    verbs
        .iter()
        .map(|verb| {
            let mut form = words.to_vec();
            form[at] = verb.to_string();
            form
        })
        .collect()
}

/// systemctl's verbs that do what a plainer verb does (`reload-or-restart`: a reload, or a
/// restart), in the order they rank.
fn verb_as(verb: &str) -> Option<&'static [&'static str]> {
    Some(match verb {
        "reload-or-restart" | "try-reload-or-restart" => &["reload", "restart"],
        "try-restart" | "condrestart" => &["restart"],
        "force-reload" => &["reload"],
        _ => return None,
    })
}
