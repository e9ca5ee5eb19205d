//! A word of a D-Bus call → the unit names it can carry to systemd. busctl, gdbus, dbus-send
//! and qdbus spell an argument differently: as itself (`x.service`), typed (`string:x.service`,
//! `array:string:a,b`), as GVariant text (`'x.service'`, `['a', 'b']`, `@s 'x'`, `<'x'>`), or
//! as the unit's object path (`/org/freedesktop/systemd1/unit/x_2eservice`).

/// The object path under which systemd publishes each unit, by its escaped name.
const UNIT_PATH: &str = "/org/freedesktop/systemd1/unit/";

/// dbus-send's type prefixes (`TYPE:VALUE`, nested for containers).
const TYPES: [&str; 15] = [
    "string",
    "objpath",
    "variant",
    "array",
    "dict",
    "signature",
    "byte",
    "boolean",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "double",
];

/// GVariant text's type keywords, which may stand before a value (`string 'x'`).
const GVARIANT_KEYWORDS: [&str; 13] = [
    "string",
    "objectpath",
    "signature",
    "boolean",
    "byte",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "handle",
    "int64",
    "uint64",
    "double",
];

/// Every unit name `word` may carry. A word that carries none is returned as it is, so a
/// word that only names a unit plainly is still checked as one.
pub(crate) fn unit_names(word: &str) -> Vec<String> {
    let mut value = word.trim();
    while let Some((ty, rest)) = value.split_once(':')
        && TYPES.contains(&ty)
    {
        value = rest;
    }
    value
        .split(',')
        .map(|piece| unescape_gvariant(gvariant_text(piece)))
        .filter(|piece| !piece.is_empty())
        .map(|piece| match piece.strip_prefix(UNIT_PATH) {
            Some(label) => unescape(label).unwrap_or_else(|| piece.clone()),
            None => piece,
        })
        .collect()
}

/// One GVariant value as text, its decoration off: `['x'` → `x`, `@s 'x'` → `x`,
/// `string 'x'` (or `string'x'`) → `x`, `<"x">` → `x`.
fn gvariant_text(piece: &str) -> &str {
    const DECORATION: &[char] = &[
        ' ', '\t', '\n', '\r', '[', ']', '(', ')', '<', '>', '\'', '"',
    ];
    let piece = piece.trim_matches(DECORATION);
    // A type before the value: `@s 'x'`, `@as ['x']`, or a keyword glib takes with or
    // without a space after it (`string'x'`).
    let typed = match piece.strip_prefix('@') {
        Some(annotated) => annotated
            .find(|c: char| c.is_ascii_whitespace() || c == '\'')
            .map(|at| at + 1),
        None => GVARIANT_KEYWORDS
            .iter()
            .find(|kw| {
                piece.strip_prefix(**kw).is_some_and(|rest| {
                    rest.starts_with(|c: char| c.is_ascii_whitespace() || c == '\'' || c == '"')
                })
            })
            .map(|kw| kw.len()),
    };
    match typed {
        Some(at) => piece[at..].trim_matches(DECORATION),
        None => piece,
    }
}

/// A GVariant string's escapes undone: `\u002d` and `\U0000002d` are `-`, `\\` is `\`, `\n`
/// a line end. An escape that is not one stays as written.
fn unescape_gvariant(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let wide = match after.chars().next() {
            Some('u') => 4,
            Some('U') => 8,
            Some(other) => {
                out.push(match other {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
                rest = &after[other.len_utf8()..];
                continue;
            }
            None => {
                out.push('\\');
                rest = after;
                continue;
            }
        };
        match after
            .get(1..=wide)
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .and_then(char::from_u32)
        {
            Some(decoded) => {
                out.push(decoded);
                rest = &after[1 + wide..];
            }
            None => {
                out.push('\\');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// systemd's object-path label back to the unit's name: every byte other than an ASCII letter
/// or digit is written `_` and two lower-case hex digits (a leading digit too), and the empty
/// name is `_`. A label that is not such an escape is no unit's (`None`).
fn unescape(label: &str) -> Option<String> {
    if label == "_" {
        return Some(String::new());
    }
    let bytes = label.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'_' => {
                let hex = label.get(at + 1..at + 3)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                out.push(u8::from_str_radix(hex, 16).ok()?);
                at += 3;
            }
            b if b.is_ascii_alphanumeric() => {
                out.push(b);
                at += 1;
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_word_is_itself() {
        assert_eq!(
            unit_names("mesh-controller.service"),
            ["mesh-controller.service"]
        );
        assert_eq!(unit_names("RestartUnit"), ["RestartUnit"]);
    }

    #[test]
    fn dbus_send_types_are_taken_off() {
        assert_eq!(
            unit_names("string:mesh-controller.service"),
            ["mesh-controller.service"]
        );
        assert_eq!(unit_names("variant:string:x"), ["x"]);
        assert_eq!(
            unit_names("array:string:a.service,b.service"),
            ["a.service", "b.service"]
        );
        // Not a type: a word with a colon of its own stays whole.
        assert_eq!(unit_names("host:path"), ["host:path"]);
    }

    #[test]
    fn gvariant_quotes_lists_and_annotations_are_taken_off() {
        assert_eq!(
            unit_names("'mesh-controller.service'"),
            ["mesh-controller.service"]
        );
        assert_eq!(unit_names("\"x\""), ["x"]);
        assert_eq!(
            unit_names("['a.service', 'b.service']"),
            ["a.service", "b.service"]
        );
        assert_eq!(unit_names("@s 'x.service'"), ["x.service"]);
        assert_eq!(unit_names("<'x'>"), ["x"]);
    }

    #[test]
    fn gvariant_type_keywords_and_escapes_are_read() {
        assert_eq!(
            unit_names("string 'mesh-controller.service'"),
            ["mesh-controller.service"]
        );
        assert_eq!(
            unit_names("'mesh\\u002dcontroller.service'"),
            ["mesh-controller.service"]
        );
        assert_eq!(unit_names("'a\\U0000002db'"), ["a-b"]);
        assert_eq!(unit_names("'a\\\\b'"), ["a\\b"]);
        // Not an escape: kept as written.
        assert_eq!(unit_names("'a\\uzz'"), ["a\\uzz"]);
    }

    #[test]
    fn a_units_object_path_is_its_name() {
        assert_eq!(
            unit_names("/org/freedesktop/systemd1/unit/mesh_2dcontroller_2eservice"),
            ["mesh-controller.service"]
        );
        assert_eq!(
            unit_names("objpath:/org/freedesktop/systemd1/unit/_31x_2eservice"),
            ["1x.service"]
        );
        assert_eq!(
            unit_names("'/org/freedesktop/systemd1/unit/a_40b_2eservice'"),
            ["a@b.service"]
        );
    }

    #[test]
    fn a_label_that_is_no_escape_stays_as_written() {
        for label in ["a-b", "a_2", "a_zz", "_2"] {
            let path = format!("{UNIT_PATH}{label}");
            assert_eq!(unit_names(&path), vec![path.clone()], "{label}");
        }
        assert_eq!(unescape("_"), Some(String::new()));
    }
}
