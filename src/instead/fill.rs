//! A usage's placeholders filled from what the command determines.

use super::Placeholder;
use std::collections::HashMap;

/// Placeholder → shell text (already quoted).
pub type Values = HashMap<Placeholder, String>;

/// Fills `<placeholders>` for a usage to run. An optional `[…]` part is kept, filled and
/// unbracketed, when all its placeholders are known, and left out otherwise; a required one
/// that cannot be known stays `<name>`, for the agent to fill.
pub fn fill(usage: &str, values: &dyn Fn(&Placeholder) -> Option<String>) -> String {
    fill_parts(usage, values, false)
}

/// Fills what is known of a usage shown for reading (the "instead of" table): as `fill`,
/// but an optional part with an unknown placeholder stays, bracketed, for the reader.
pub fn fill_known(usage: &str, values: &dyn Fn(&Placeholder) -> Option<String>) -> String {
    fill_parts(usage, values, true)
}

fn fill_parts(
    usage: &str,
    values: &dyn Fn(&Placeholder) -> Option<String>,
    keep_optional: bool,
) -> String {
    let mut out = String::new();
    let mut rest = usage;
    while let Some(open) = rest.find(['[', '<']) {
        out.push_str(&rest[..open]);
        let optional = rest[open..].starts_with('[');
        let Some(len) = rest[open..].find(if optional { ']' } else { '>' }) else {
            break;
        };
        let part = &rest[open..open + len + 1];
        let inner = &part[1..part.len() - 1];
        if optional {
            let filled = fill_parts(inner, values, keep_optional);
            if !filled.contains('<') {
                out.push_str(&filled);
            } else if keep_optional {
                out.push_str(&format!("[{filled}]"));
            } else if out.ends_with(' ') {
                out.pop();
            }
        } else {
            let placeholder = Placeholder::parse(inner);
            out.push_str(&values(&placeholder).unwrap_or_else(|| part.to_string()));
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_parts_are_filled_or_left_out() {
        let known: Values = [(Placeholder::Module, "controller".to_string())].into();
        let get = |p: &Placeholder| known.get(p).cloned();
        assert_eq!(
            fill("mesh logs <module> [--machine <machine>]", &get),
            "mesh logs controller"
        );
        assert_eq!(
            fill("mesh exec <machine> -- <command>", &get),
            "mesh exec <machine> -- <command>"
        );
        let both: Values = [
            (Placeholder::Module, "controller".to_string()),
            (Placeholder::Machine, "atlas".to_string()),
        ]
        .into();
        let get = |p: &Placeholder| both.get(p).cloned();
        assert_eq!(
            fill("mesh logs <module> [--machine <machine>] --tail", &get),
            "mesh logs controller --machine atlas --tail"
        );
    }

    #[test]
    fn a_table_keeps_the_optional_parts_it_cannot_fill() {
        let known: Values = [(Placeholder::Module, "db".to_string())].into();
        let get = |p: &Placeholder| known.get(p).cloned();
        assert_eq!(
            fill_known(
                "mesh logs <module> [--machine <machine>] [--for <module>]",
                &get
            ),
            "mesh logs db [--machine <machine>] --for db"
        );
    }
}
