//! Property (issue 14): for any refused ssh or `docker exec` command with a remote command,
//! the filled `<command>` of the first usage, parsed by the shell parser, gives back the
//! words the agent wrote; and the echoed command gives back the refused command's words.
//! Quoting is what the agent would write (`shell_words::quote`), the words are random
//! mixes of shell metacharacters, quotes, spaces and control characters.
//! `MESH_GUARD_PROPERTY_SEED` picks another seed.

use mesh_guard::catalog::{self, LazyCatalog};
use mesh_guard::config::Paths;
use mesh_guard::decide::Decision;
use mesh_guard::rules::Rules;
use std::collections::HashMap;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "common/xorshift.rs"]
mod xorshift;
use xorshift::XorShift;

const PIECES: &[&str] = &[
    "ls", "cat", "make", "/srv/app", "a b", "&&", ";", "|", "||", "'", "\"", "it's", "x\"y", "*",
    "?", "~", "#", "(", ")", "{", "}", "<", ">", "\\", "\n", "\t", "é", "$x", "`", "=", ",", "-n",
    "--", "!", "%", "\u{5}", "\u{1b}", "\u{7f}", "\u{85}",
];

/// Programs and targets whose first tool is `mesh exec`, with the words before the remote
/// command.
const PREFIXES: &[&[&str]] = &[
    &["ssh", "build"],
    &["ssh", "-p", "2222", "web"],
    &["ssh", "-t", "deploy@api"],
    &["autossh", "-M", "0", "web"],
    &["docker", "exec", "restic"],
    &["docker", "exec", "-it", "buildkitd"],
];

fn word(rng: &mut XorShift) -> String {
    let n = 1 + rng.below(3);
    (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect()
}

fn parse(text: &str) -> Vec<String> {
    let script = mesh_guard::shell::parse(text, 0, &HashMap::new()).expect(text);
    assert_eq!(script.commands.len(), 1, "{text:?} is one command");
    script.commands[0].words.clone()
}

#[test]
fn filled_commands_and_echoes_parse_back_to_the_same_words() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let paths = Paths {
        catalog: root.join("tests/corpus/unseen/catalog.toml"),
        db: std::env::temp_dir().join("mesh-guard-property-refusal.db"),
        rules: None,
        home: mesh_guard::config::Home::Session,
    };
    let rules = Rules::load(None).unwrap();
    let catalog = LazyCatalog::ready(catalog::load(&paths.catalog).unwrap());
    let seed = std::env::var("MESH_GUARD_PROPERTY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1414_u64);
    let mut rng = XorShift::new(seed);
    let mut checked = 0;
    for _ in 0..400 {
        let prefix = PREFIXES[rng.below(PREFIXES.len())];
        // The first remote word is a program an exec runs: never an option.
        let mut remote = vec![["uname", "df", "stat", "echo"][rng.below(4)].to_string()];
        remote.extend((0..rng.below(4)).map(|_| word(&mut rng)));
        let written: Vec<String> = prefix
            .iter()
            .map(|w| w.to_string())
            .chain(remote.iter().map(|w| shell_words::quote(w).into_owned()))
            .collect();
        let source = written.join(" ");
        let outcome = mesh_guard::app::decide(&paths, &rules, &catalog, &source, None);
        let Decision::Refuse(refusal) = &outcome.decision else {
            panic!("{source:?} must be refused");
        };
        // Refused as unverifiable (a payload the parser rejects): no tool to check.
        if refusal.rule == mesh_guard::rule::Rule::Unverifiable {
            continue;
        }
        let usage = &outcome
            .instead
            .first()
            .unwrap_or_else(|| panic!("{source:?}: no tool: {}", outcome.message))
            .usage;
        assert!(
            !outcome.message.chars().any(char::is_control),
            "{:?}",
            outcome.message
        );
        // A machine the command does not determine (a module on four machines) stays a
        // placeholder for the agent to fill: fill it as the agent would.
        let words = parse(&usage.replacen("<machine>", "build", 1));
        let at = words.iter().position(|w| w == "--").expect(usage);
        // The words the shell parser gives for what the agent wrote (mostly `remote`; a
        // parser may read an odd character otherwise, and the usage must follow it).
        assert_eq!(words[at + 1..], refusal.inner[..], "{source:?} → {usage}");
        // Not with a brace: the walker reads `{cat 'x'` as one word (a known gap, reported).
        if remote
            .iter()
            .all(|w| w.is_ascii() && !w.contains(['{', '}']))
        {
            assert_eq!(words[at + 1..], remote[..], "{source:?} → {usage}");
        }
        // The echo: "mesh-guard refused `…`: it reaches".
        let echo = outcome
            .message
            .split_once("mesh-guard refused `")
            .and_then(|(_, rest)| rest.rsplit_once("`: it reaches"))
            .map(|(echo, _)| echo)
            .expect(&outcome.message);
        if !echo.ends_with('…') {
            assert_eq!(parse(echo), refusal.command, "{source:?} echoed as {echo}");
        }
        checked += 1;
    }
    assert!(
        checked >= 300,
        "only {checked} of 400 were refused with a tool"
    );
}
