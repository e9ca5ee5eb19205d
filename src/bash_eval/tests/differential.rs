//! Generated words and parameter operations, each evaluated here and by the real bash: whenever this module gives a
//! known value it must be bash's. Deterministic (fixed seeds), a few hundred per operation.

use super::oracle::{Gen, Tally, available, quote, run};
use crate::bash_eval::param::{self, Anchor, Case, Fallback, Trim};
use crate::bash_eval::{Part, Value, arith, brace};

pub(super) const CASES: usize = 400;

/// A word made of unquoted and single-quoted pieces: `(bash source, parts)`.
fn word(g: &mut Gen, alphabet: &[&str], quoted: &[&str], pieces: usize) -> (String, Vec<Part>) {
    let mut source = String::new();
    let mut parts = Vec::new();
    for _ in 0..pieces {
        if g.below(6) == 0 {
            let q = g.pick(quoted);
            source.push_str(&format!("\"{q}\""));
            parts.push(Part::Quoted(q.to_string()));
        } else {
            let b = g.pick(alphabet);
            source.push_str(b);
            parts.push(Part::Bare(b.to_string()));
        }
    }
    (source, parts)
}

pub(super) fn compare(what: &str, min_known: usize, cases: Vec<(String, Option<String>)>) {
    let snippets: Vec<String> = cases.iter().map(|(s, _)| s.clone()).collect();
    let answers = run(&snippets);
    let mut tally = Tally::default();
    for ((snippet, ours), bash) in cases.iter().zip(&answers) {
        tally.check(snippet, ours.as_deref(), bash);
    }
    tally.assert_sound(what, min_known);
}

#[test]
fn brace_expansion_matches_bash() {
    if !available("brace_expansion_matches_bash") {
        return;
    }
    let mut g = Gen::new(1);
    // Pieces joined at random: plain text, valid and invalid sequences, lists, stray braces.
    let alphabet: Vec<&str> = "{ } , a b 1 .. 0 - {1..3} {a,b} {0 5} {x..z} {-2..2..2} {c..a} \
        {09..11} {a} {} {1..3..} {a..1} {-1..-3} {1..a} {a..e..2} {01..3} {1..03} {-3..02} \
        {8..-010..3} {+1..2} {1..2..0} {A..C} ..2} {a.. x,y}"
        .split_whitespace()
        .collect();
    let quoted = [",", "{", "}", "a", ".."];
    let cases = (0..CASES)
        .map(|k| {
            let n = 1 + g.below(6);
            let (source, mut parts) = word(&mut g, &alphabet, &quoted, n);
            // Half the words get a fixed first and last letter, which keeps empty
            // alternatives visible; the others start and end with braces, where bash
            // ignores some, and their empty words vanish.
            let framed = k % 2 == 0;
            if framed {
                parts.insert(0, Part::Bare("p".into()));
                parts.push(Part::Bare("q".into()));
            }
            let ours = brace::expand(&parts).ok().map(|words| {
                let texts: Vec<String> = words
                    .iter()
                    .map(|w| crate::bash_eval::known_text(w).unwrap_or_default())
                    .filter(|t| framed || !t.is_empty())
                    .map(|t| format!("[{t}]\n"))
                    .collect();
                if texts.is_empty() {
                    "[]\n".to_string()
                } else {
                    texts.concat()
                }
            });
            let source = if framed {
                format!("p{source}q")
            } else {
                source
            };
            (format!("printf '[%s]\\n' {source}"), ours)
        })
        .collect();
    compare("brace", 70, cases);
}

const VALUES: [&str; 13] = [
    "atlas.evil",
    "node-001",
    "aXbXc",
    "",
    "a.b.c",
    "ABC-def",
    "x",
    "0012",
    "a b",
    "..--",
    r"s\x73h",
    r"a\tb\c?\c\\",
    "it's",
];

fn pattern(g: &mut Gen) -> (String, Vec<Part>) {
    let alphabet = [
        "*",
        "?",
        "a",
        "b",
        ".",
        "-",
        "e",
        "l",
        "0",
        "1",
        "[ab]",
        "[!a]",
        "[^.]",
        "[a-c]",
        "[[:digit:]]",
        "[[:upper:]]",
        "[a-]",
        "[!0-9]",
        "[[:alpha:][:digit:]]",
        "[z-a]",
        "[.-]",
        "X",
        "[",
        "]",
        "c",
    ];
    let n = 1 + g.below(4);
    word(g, &alphabet, &["*", "?", ".", "a"], n)
}

#[test]
fn pattern_operations_match_bash() {
    if !available("pattern_operations_match_bash") {
        return;
    }
    let mut g = Gen::new(2);
    let ops = [
        ("#", Trim::ShortestPrefix),
        ("##", Trim::LongestPrefix),
        ("%", Trim::ShortestSuffix),
        ("%%", Trim::LongestSuffix),
    ];
    let mut cases = Vec::new();
    for _ in 0..CASES {
        let v = g.pick(&VALUES);
        let (src, pat) = pattern(&mut g);
        let (op, trim) = ops[g.below(ops.len())];
        let ours = param::remove(v, &pat, trim);
        cases.push((
            format!("x={}; printf %s \"${{x{op}{src}}}\"", quote(v)),
            ours.as_known().map(str::to_string),
        ));
    }
    let anchors = [
        ("/", Anchor::First),
        ("//", Anchor::All),
        ("/#", Anchor::Start),
        ("/%", Anchor::End),
    ];
    for _ in 0..CASES {
        let v = g.pick(&VALUES);
        let (src, pat) = pattern(&mut g);
        let n = g.below(3);
        let (rsrc, rep) = word(&mut g, &["&", "r", "-", "Z"], &["&", "q"], n);
        let (op, anchor) = anchors[g.below(anchors.len())];
        let ours = param::replace(v, &pat, &rep, anchor);
        cases.push((
            format!("x={}; printf %s \"${{x{op}{src}/{rsrc}}}\"", quote(v)),
            ours.as_known().map(str::to_string),
        ));
    }
    let cases_ops = [
        ("^", Case::UpperFirst),
        ("^^", Case::UpperAll),
        (",", Case::LowerFirst),
        (",,", Case::LowerAll),
        ("~", Case::ToggleFirst),
        ("~~", Case::ToggleAll),
    ];
    for _ in 0..CASES / 2 {
        let v = g.pick(&VALUES);
        let (op, kind) = cases_ops[g.below(cases_ops.len())];
        let (src, pat) = if g.below(2) == 0 {
            (String::new(), Vec::new())
        } else {
            pattern(&mut g)
        };
        let ours = param::case(v, kind, &pat);
        cases.push((
            format!("x={}; printf %s \"${{x{op}{src}}}\"", quote(v)),
            ours.as_known().map(str::to_string),
        ));
    }
    compare("patterns", 80, cases);
}

#[test]
fn other_parameter_operations_match_bash() {
    if !available("other_parameter_operations_match_bash") {
        return;
    }
    let mut g = Gen::new(3);
    let mut cases = Vec::new();
    let offsets = ["0", "1", "2", "-1", "-2", "-5", "3", "10", "1+1", "-0"];
    let no_vars = |_: &str| None;
    for _ in 0..CASES {
        let v = g.pick(&VALUES);
        let off = g.pick(&offsets);
        let with_len = g.below(2) == 0;
        let len = g.pick(&offsets);
        let o = arith::eval_int(off, &no_vars).expect("offset");
        let l = arith::eval_int(len, &no_vars).expect("length");
        let ours = param::substring(v, o, with_len.then_some(l));
        let src = if with_len {
            format!("${{x: {off}: {len}}}")
        } else {
            format!("${{x: {off}}}")
        };
        cases.push((
            format!("x={}; printf %s \"{src}\"", quote(v)),
            ours.as_known().map(str::to_string),
        ));
    }
    for v in VALUES {
        cases.push((
            format!("x={}; printf %s \"${{#x}}\"", quote(v)),
            param::length(v).as_known().map(str::to_string),
        ));
        for op in ['Q', 'U', 'u', 'L', 'E'] {
            let ours = param::transform(v, op);
            cases.push((
                format!("x={}; printf %s \"${{x@{op}}}\"", quote(v)),
                ours.as_known().map(str::to_string),
            ));
        }
    }
    let states: [(&str, Option<Value>); 3] = [
        ("unset x", None),
        ("x=", Some(Value::known(""))),
        ("x=set", Some(Value::known("set"))),
    ];
    let ops = [
        ("-", Fallback::Default),
        ("=", Fallback::Assign),
        ("+", Fallback::Alternative),
    ];
    for (setup, current) in &states {
        for (op, kind) in ops {
            for colon in [false, true] {
                let ours = param::fallback(current.as_ref(), colon, kind, Value::known("w"));
                let c = if colon { ":" } else { "" };
                cases.push((
                    format!("{setup}; printf %s \"${{x{c}{op}w}}\""),
                    ours.as_known().map(str::to_string),
                ));
            }
        }
    }
    compare("parameters", 80, cases);
}
