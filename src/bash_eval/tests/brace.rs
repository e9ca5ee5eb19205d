//! Brace expansion: expected words, as bash 5.2 gives them.

use crate::bash_eval::brace::{MAX_WORDS, expand, expand_text};
use crate::bash_eval::{Part, Value};

fn words(word: &str) -> Vec<String> {
    expand_text(word).expect("known")
}

#[test]
fn comma_lists_nest_and_keep_preamble_and_postscript() {
    assert_eq!(words("s{s,}h"), ["ssh", "sh"]);
    assert_eq!(words("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
    assert_eq!(words("{a,b}{1,2}"), ["a1", "a2", "b1", "b2"]);
    assert_eq!(words("x{,}y"), ["xy", "xy"]);
    assert_eq!(words("{a}b{c,d}"), ["{a}bc", "{a}bd"]);
    assert_eq!(words("{a{b,c}}"), ["{ab}", "{ac}"]);
}

#[test]
fn sequences_count_pad_and_step() {
    assert_eq!(words("node-0{1..2}"), ["node-01", "node-02"]);
    assert_eq!(words("atla{s..s}"), ["atlas"]);
    assert_eq!(words("{01..12..5}"), ["01", "06", "11"]);
    assert_eq!(words("{-3..02}"), ["-3", "-2", "-1", "00", "01", "02"]);
    assert_eq!(words("{5..1..2}"), ["5", "3", "1"]);
    assert_eq!(words("{1..10..-3}"), ["1", "4", "7", "10"]);
    assert_eq!(words("{a..e..2}"), ["a", "c", "e"]);
    assert_eq!(words("{e..a}"), ["e", "d", "c", "b", "a"]);
    assert_eq!(
        words("{2147483648..2147483649}"),
        ["2147483648", "2147483649"]
    );
}

#[test]
fn invalid_braces_stay_literal() {
    for word in [
        "{1..a}", "{a}", "{}", "a{}b", "{1..3..}", "{aa..c}", "{1..2", "x}{",
    ] {
        assert_eq!(words(word), [word], "{word}");
    }
}

#[test]
fn quoted_braces_and_commas_are_text() {
    let quoted = [Part::Quoted("{a,b}".into())];
    assert_eq!(expand(&quoted).unwrap(), vec![quoted.to_vec()]);
    let comma = [
        Part::Bare("{a".into()),
        Part::Quoted(",".into()),
        Part::Bare("b}".into()),
    ];
    assert_eq!(expand(&comma).unwrap().len(), 1);
    // A variable's value is never brace syntax: `y=a,b; {$y,c}` is `a,b c`.
    let value = [
        Part::Bare("{".into()),
        Part::Quoted("a,b".into()),
        Part::Bare(",c}".into()),
    ];
    let out = expand(&value).unwrap();
    assert_eq!(
        out,
        vec![
            vec![Part::Quoted("a,b".into())],
            vec![Part::Bare("c".into())]
        ]
    );
    // An unknown piece inside an alternative stays in that alternative.
    let hole = [
        Part::Bare("{a,".into()),
        Part::Unknown,
        Part::Bare("}".into()),
    ];
    let out = expand(&hole).unwrap();
    assert_eq!(out, vec![vec![Part::Bare("a".into())], vec![Part::Unknown]]);
}

#[test]
fn past_the_bound_the_value_is_unknown_not_a_prefix() {
    // 65 alternatives were cut to 64 before (issue 13); now every one is there…
    let many: Vec<String> = (1..=65).map(|i| format!("h{i}")).collect();
    let word = format!("{{{}}}", many.join(","));
    assert_eq!(words(&word).len(), 65);
    // …and past the bound nothing is claimed.
    assert_eq!(expand_text("{1..5000}"), Err(Value::Unknown));
    assert_eq!(expand_text("{a,b}{1..3000}"), Err(Value::Unknown));
    assert_eq!(
        expand_text(&format!("{{1..{MAX_WORDS}}}")).unwrap().len(),
        MAX_WORDS
    );
}

#[test]
fn ambiguous_quoting_is_unknown() {
    // `a\ {b,c}` and `"a "{b,c}` differ in bash; the parts cannot tell them apart.
    let blank = [
        Part::Bare("a".into()),
        Part::Quoted(" ".into()),
        Part::Bare("{b,c}".into()),
    ];
    assert_eq!(expand(&blank), Err(Value::Unknown));
    // Letter ranges that pass through `\` and `[` are not given.
    assert_eq!(expand_text("{Z..a}"), Err(Value::Unknown));
}

#[test]
fn long_words_are_unknown_not_slow() {
    assert_eq!(expand_text(&"{a,b}".repeat(300)), Err(Value::Unknown));
    assert_eq!(expand_text(&"{".repeat(100_000)), Err(Value::Unknown));
    assert_eq!(words(&"x".repeat(10_000)).len(), 1);
}
