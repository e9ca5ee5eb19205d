//! What a call does, as the command that does the same (the rules' `methods`): a D-Bus call
//! to systemd ranks as the systemctl command its method comes to, a request to a container
//! engine's API as the docker command its action comes to.

use crate::argv::Arg;
use crate::decide::target;
use crate::rules::Program;

/// The commands a call comes to, by the rules' `methods`: a D-Bus method, named whole or as
/// the last part of `INTERFACE.METHOD` (`org.freedesktop.systemd1.Manager.RestartUnit`),
/// busctl's verb (`get-property`), or a container engine API path's action
/// (`/containers/NAME/logs`), wherever among the words it stands.
pub(in crate::decide) fn commands(spec: &Program, scanned: &[Arg]) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    for arg in scanned {
        let (word, operand) = match arg {
            Arg::Option {
                value: Some(value), ..
            } => (value.as_str(), false),
            Arg::Option { value: None, .. } => continue,
            Arg::Operand(word) => (word.as_str(), true),
        };
        let method = match target::engine_request(word) {
            Some(request) => Some(request.action),
            // A method named whole is an operand (`busctl call … RestartUnit`); within a
            // dotted name it is capitalised (`…Manager.RestartUnit`), unlike a file's
            // extension (`-o out.json`).
            None => word
                .rsplit_once('.')
                .map(|(_, last)| last)
                .filter(|last| last.starts_with(|c: char| c.is_ascii_uppercase()))
                .or(operand.then_some(word))
                .map(String::from),
        };
        let Some(command) = method.and_then(|m| spec.methods.get(&m)) else {
            continue;
        };
        let command: Vec<String> = command.split_whitespace().map(String::from).collect();
        if !found.contains(&command) {
            found.push(command);
        }
    }
    found
}
