//! One wrapper taken off: what its own words say, read once by its option table.

use super::{Step, is_name, payload};
use crate::argv::{self, Arg, base_name};
use crate::rules::{Rules, Syntax, Wrapper};
use crate::shell::Command;

/// The syntax a wrapper's words are read by: its options end at its first operand (the
/// program it runs), unless its table says it reads options after operands too
/// (`permute`), as GNU getopt without `+` does (decision 0063).
pub(super) fn syntax(wrapper: &Wrapper) -> Syntax {
    Syntax {
        stop_at_operand: !wrapper.permute,
        ..wrapper.syntax.clone()
    }
}

/// What one reading (`scanned`) of a wrapper's words runs: payloads go to `out`, and the
/// command it runs next, when it runs one. Every part (inert options, shell options,
/// assignments, skipped operands) is read from `scanned`, never from the words again.
pub(super) fn take_off(
    wrapper: &Wrapper,
    command: &Command,
    scanned: &[Arg],
    out: &mut Vec<Step>,
) -> Option<Command> {
    // An inert option whose value is optional is inert only without one (`sudo -h` is
    // help, `sudo -hHOST` runs the command on HOST).
    let inert = scanned.iter().any(|a| match a {
        Arg::Option { name, value } => {
            wrapper.inert.contains(name)
                && (value.is_none() || !wrapper.syntax.optional_value.contains(name))
        }
        Arg::Operand(_) => false,
    });
    if inert {
        return None;
    }
    for arg in scanned {
        if let Arg::Option {
            name,
            value: Some(value),
        } = arg
            && (wrapper.shell_option.contains(name) || wrapper.split_option.contains(name))
        {
            out.push(payload(command, value.clone()));
        }
    }
    if wrapper.shell_operands {
        // `tmux new -d 'CMD'`, `trap 'CMD' INT TERM`: each operand is a command string.
        for source in argv::operands(scanned) {
            out.push(payload(command, source.to_string()));
        }
        return None;
    }
    if wrapper.no_program
        || (!wrapper.program_options.is_empty() && !argv::has(scanned, &wrapper.program_options))
    {
        return None;
    }
    let mut next = command.clone();
    let mut operands: Vec<String> = argv::operands(scanned).map(str::to_string).collect();
    if wrapper.assignments {
        let names = operands
            .iter()
            .map_while(|o| o.split_once('=').filter(|(name, _)| is_name(name)))
            .count();
        for assignment in operands.drain(..names) {
            if let Some((name, value)) = assignment.split_once('=') {
                next.env.push((name.to_string(), value.to_string()));
            }
        }
    }
    let operands: Vec<String> = operands.into_iter().skip(wrapper.skip).collect();
    if let Some((first, rest)) = operands.split_first()
        && wrapper.shell_word.contains(first)
    {
        if !rest.is_empty() {
            out.push(payload(&next, rest.join(" ")));
        }
        return None;
    }
    let joins = wrapper.shell_rest && !argv::has(scanned, &wrapper.program_flags);
    if joins || argv::has(scanned, &wrapper.shell_flags) {
        // `watch CMD ARGS`, `sudo -s CMD ARGS`: the words joined with spaces are the text
        // a shell runs (`sh -c "CMD ARGS"`).
        if !operands.is_empty() {
            let text = wrapper
                .line_ends
                .iter()
                .fold(operands.join(" "), |text, end| text.replace(end, "\n"));
            out.push(payload(&next, text));
        }
        return None;
    }
    next.words = operands;
    Some(next)
}

/// The directory a wrapper runs its program in, when its words say (`env -C DIR`,
/// `sudo -D DIR`): read by the wrapper's own table, so a program's `-C` after the
/// wrapper's first operand is the program's.
pub fn directory(rules: &Rules, command: &Command) -> Option<String> {
    let wrapper = rules.wrapper(base_name(command.words.first()?))?;
    if wrapper.chdir_option.is_empty() {
        return None;
    }
    let scanned = argv::scan(&syntax(wrapper), &command.words[1..]);
    scanned
        .into_iter()
        .filter_map(|a| match a {
            Arg::Option {
                name,
                value: Some(value),
            } if wrapper.chdir_option.contains(&name) => Some(value),
            _ => None,
        })
        .next_back()
}
