//! Host lists: `a,b`, `"a b"`, ansible's `a:b:!c`, and pdsh/clush ranges
//! (`node-0[1-3]`, `node-[0001-0003,0005]`) expanded exactly, or unknown past a bound.

use super::*;

/// Hosts one range may stand for before the list is taken as unknown.
const MAX_HOSTS: usize = 4096;

/// The first host of a list that resolves to something (mesh, unknown).
pub(super) fn host_list(catalog: &Catalog, value: &str, user: Option<&str>) -> Resolved {
    let mut unknown = false;
    for piece in pieces(value) {
        let piece = piece.trim_start_matches(['!', '&', '@']);
        if piece.is_empty() {
            continue;
        }
        let Some(hosts) = expand(piece) else {
            unknown = true;
            continue;
        };
        // Each host is taken whole (`user@host:port`) and split at `:` (ansible's `a:b`).
        for host_word in &hosts {
            let hops = std::iter::once(host_word.as_str()).chain(host_word.split(':').skip(1));
            for hop in hops {
                match host(catalog, hop, user, Rule::RemoteAccess) {
                    Resolved::Nothing | Resolved::Forge(_) => {}
                    Resolved::Unknown => unknown = true,
                    found => return found,
                }
            }
        }
    }
    if unknown {
        Resolved::Unknown
    } else {
        Resolved::Nothing
    }
}

/// Pieces split at commas and blanks outside `[…]`.
fn pieces(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in value.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                out.push(&value[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out
}

/// A piece with its ranges expanded, as pdsh does: `[1-3]`, `[01-03,7]` (a range keeps
/// its start's width). `None`: past the bound, or a bracket that is not a range (an IPv6
/// address in brackets is kept as it is).
fn expand(piece: &str) -> Option<Vec<String>> {
    let Some(open) = piece.find('[') else {
        return Some(vec![piece.to_string()]);
    };
    let close = open + piece[open..].find(']')?;
    let inside = &piece[open + 1..close];
    if inside.contains(':')
        || !inside
            .chars()
            .all(|c| c.is_ascii_digit() || c == '-' || c == ',')
    {
        return Some(vec![piece.to_string()]);
    }
    let mut alternatives = Vec::new();
    for part in inside.split(',') {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u64, u64) = (from.parse().ok()?, to.parse().ok()?);
        if b < a || b - a > MAX_HOSTS as u64 {
            return None;
        }
        for n in a..=b {
            alternatives.push(format!("{n:0width$}", width = from.len()));
        }
    }
    let tails = expand(&piece[close + 1..])?;
    if alternatives.len().saturating_mul(tails.len()) > MAX_HOSTS {
        return None;
    }
    let head = &piece[..open];
    Some(
        alternatives
            .iter()
            .flat_map(|a| tails.iter().map(move |t| format!("{head}{a}{t}")))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand_as_pdsh_does() {
        assert_eq!(
            expand("node-0[1-3]").unwrap(),
            ["node-01", "node-02", "node-03"]
        );
        assert_eq!(
            expand("n[0001-0002,0009]x").unwrap(),
            ["n0001x", "n0002x", "n0009x"]
        );
        assert_eq!(expand("[fd00::1]").unwrap(), ["[fd00::1]"]);
        assert!(expand("n[1-99999999]").is_none());
        assert_eq!(pieces("a[1,2],b c"), ["a[1,2]", "b", "c"]);
    }
}
