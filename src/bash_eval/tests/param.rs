//! Parameter operations: expected values, as bash 5.2 gives them.

use crate::bash_eval::param::*;
use crate::bash_eval::{Part, Value};

fn bare(s: &str) -> Vec<Part> {
    vec![Part::Bare(s.into())]
}

fn k(s: &str) -> Value {
    Value::known(s)
}

#[test]
fn length_and_substrings() {
    assert_eq!(length("atlas"), k("5"));
    assert_eq!(length("é"), Value::Unknown);
    assert_eq!(substring("atlas.evil", 0, Some(6)), k("atlas."));
    assert_eq!(substring("atlas", -2, None), k("as"));
    assert_eq!(substring("atlas", 1, Some(-1)), k("tla"));
    assert_eq!(substring("abc", -5, None), k(""));
    assert_eq!(substring("abc", 5, None), k(""));
    assert_eq!(substring("abc", 1, Some(-3)), Value::Unknown); // bash: substring expression < 0
}

#[test]
fn removing_prefixes_and_suffixes() {
    assert_eq!(
        remove("atlas.evil", &bare(".evil"), Trim::ShortestSuffix),
        k("atlas")
    );
    assert_eq!(remove("a.b.c", &bare("*."), Trim::ShortestPrefix), k("b.c"));
    assert_eq!(remove("a.b.c", &bare("*."), Trim::LongestPrefix), k("c"));
    assert_eq!(remove("a.b.c", &bare(".*"), Trim::ShortestSuffix), k("a.b"));
    assert_eq!(remove("a.b.c", &bare(".*"), Trim::LongestSuffix), k("a"));
    assert_eq!(
        remove("node-001", &bare("*[[:digit:]]"), Trim::ShortestSuffix),
        k("node-00")
    );
    assert_eq!(
        remove("node", &bare("[!n]*"), Trim::LongestPrefix),
        k("node")
    );
    // A quoted `*` is a star, not a pattern.
    assert_eq!(
        remove("a*b", &[Part::Quoted("a*".into())], Trim::ShortestPrefix),
        k("b")
    );
    assert_eq!(
        remove("ab", &bare("+(a)"), Trim::ShortestPrefix),
        Value::Unknown
    );
    assert_eq!(
        remove("ab", &[Part::Unknown], Trim::ShortestPrefix),
        Value::Unknown
    );
}

#[test]
fn replacing() {
    assert_eq!(
        replace("node-001", &bare("00"), &bare("01"), Anchor::First),
        k("node-011")
    );
    assert_eq!(
        replace("aXbXc", &bare("X"), &bare("-"), Anchor::All),
        k("a-b-c")
    );
    assert_eq!(
        replace("abc", &bare(""), &bare("r"), Anchor::Start),
        k("rabc")
    );
    assert_eq!(
        replace("abc", &bare(""), &bare("r"), Anchor::End),
        k("abcr")
    );
    assert_eq!(replace("abc", &bare(""), &bare("r"), Anchor::All), k("abc"));
    assert_eq!(replace("", &bare("*"), &bare("r"), Anchor::First), k("r"));
    assert_eq!(
        replace("abc", &bare("?"), &bare("&&"), Anchor::All),
        k("aabbcc")
    );
    assert_eq!(
        replace(
            "abc",
            &bare("b"),
            &[Part::Quoted("&".into())],
            Anchor::First
        ),
        k("a&c")
    );
    assert_eq!(
        replace("abcb", &bare("b*"), &bare("X"), Anchor::First),
        k("aX")
    );
}

#[test]
fn changing_case() {
    assert_eq!(case("ATLAS", Case::LowerAll, &[]), k("atlas"));
    assert_eq!(case("atlas", Case::UpperFirst, &[]), k("Atlas"));
    assert_eq!(case("abc", Case::UpperAll, &bare("[ab]")), k("ABc"));
    assert_eq!(case("abc", Case::UpperFirst, &bare("[b]")), k("abc"));
    assert_eq!(case("aBc", Case::ToggleAll, &[]), k("AbC"));
    assert_eq!(case("aBc", Case::ToggleFirst, &[]), k("ABc"));
}

#[test]
fn fallbacks_depend_on_set_and_empty() {
    let w = || k("w");
    assert_eq!(fallback(None, false, Fallback::Default, w()), k("w"));
    assert_eq!(fallback(Some(&k("")), false, Fallback::Default, w()), k(""));
    assert_eq!(fallback(Some(&k("")), true, Fallback::Default, w()), k("w"));
    assert_eq!(fallback(Some(&k("v")), true, Fallback::Assign, w()), k("v"));
    assert_eq!(
        fallback(Some(&k("v")), false, Fallback::Alternative, w()),
        k("w")
    );
    assert_eq!(
        fallback(Some(&k("")), true, Fallback::Alternative, w()),
        k("")
    );
    assert_eq!(
        fallback(Some(&Value::Unknown), true, Fallback::Default, w()),
        Value::Unknown
    );
}

#[test]
fn transforms() {
    assert_eq!(transform("it's", 'Q'), k(r"'it'\''s'"));
    assert_eq!(transform("a\nb", 'Q'), Value::Unknown);
    assert_eq!(transform("ssh", 'U'), k("SSH"));
    assert_eq!(transform("ssh", 'u'), k("Ssh"));
    assert_eq!(transform(r"s\x73h", 'E'), k("ssh"));
    assert_eq!(transform("x", 'P'), Value::Unknown);
}

#[test]
fn long_values_are_unknown_for_patterns_not_slow() {
    let long = "a".repeat(100_000);
    assert_eq!(
        remove(&long, &bare("*a"), Trim::ShortestSuffix),
        Value::Unknown
    );
    assert_eq!(
        replace(&long, &bare("b"), &bare("c"), Anchor::All),
        Value::Unknown
    );
    assert_eq!(length(&long), k("100000"));
    let fits = "ab".repeat(1000);
    assert_eq!(
        replace(&fits, &bare("b"), &bare(""), Anchor::All),
        k(&"a".repeat(1000))
    );
}
