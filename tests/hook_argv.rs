//! The hook's command lines read without clap (decision 0030) give exactly what clap gives,
//! and anything unusual is left to clap; neither reads the guard's variables for a hook
//! (decision 0059). One test in this binary: it sets the process's environment (clap reads
//! the guard's variables from it for the operator's commands), which no other thread reads.

use mesh_guard::cli::Args;
use std::ffi::OsString;

const VARIABLES: [&str; 3] = ["MESH_GUARD_CATALOG", "MESH_GUARD_DB", "MESH_GUARD_RULES"];

/// Words a hook's command line is made of, plain and unusual.
const POOL: &[&str] = &[
    "--agent",
    "claude",
    "gemini",
    "--agent=codex",
    "--agent=auto",
    "--agent=Claude",
    "--mcp",
    "--mcp=true",
    "--catalog",
    "/etc/mesh-guard/catalog.toml",
    "--catalog=",
    "--db=/var/lib/mg/audit.db",
    "--db",
    "--rules",
    "rules.d",
    "--rules=-r",
    "--help",
    "-h",
    "--",
    "hook",
    "x=y",
];

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn argv(words: &[&str]) -> Vec<OsString> {
    ["mesh-guard", "hook"]
        .iter()
        .chain(words)
        .map(OsString::from)
        .collect()
}

/// `first`, then `hook`, then `rest`.
fn before(first: &[&str], rest: &[&str]) -> Vec<OsString> {
    std::iter::once("mesh-guard")
        .chain(first.iter().copied())
        .chain(std::iter::once("hook"))
        .chain(rest.iter().copied())
        .map(OsString::from)
        .collect()
}

/// Both readings of `args` under the current environment; the fast one, when it answers,
/// must be clap's answer. Whether the fast one answered.
fn agree(args: &[OsString]) -> bool {
    let fast = Args::parse_hook(args);
    let Some(fast) = fast else { return false };
    match Args::try_parse_args(args.to_vec()) {
        Ok(clap) => assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{args:?}"),
        Err(e) => panic!("{args:?}: the fast path answered {fast:?}, clap refused: {e}"),
    }
    true
}

/// Sets the guard's variables; `None` removes one.
fn environment(values: [Option<&str>; 3]) {
    for (name, value) in VARIABLES.iter().zip(values) {
        // SAFETY: this binary's only test runs on one thread; nothing else reads the
        // environment while it changes.
        unsafe {
            match value {
                Some(v) => std::env::set_var(name, v),
                None => std::env::remove_var(name),
            }
        }
    }
}

#[test]
fn the_hooks_command_lines_read_as_clap_reads_them() {
    let environments = [
        [None, None, None],
        [
            Some("/srv/catalog.toml"),
            Some("/srv/audit.db"),
            Some("/srv/rules"),
        ],
        [Some("/srv/catalog.toml"), None, Some("")],
        [Some(""), None, None],
    ];
    for env in environments {
        environment(env);
        let mut fast = 0;
        // Every sequence of up to three words from the pool.
        let mut sequences: Vec<Vec<&str>> = vec![vec![]];
        for _ in 0..3 {
            let longer: Vec<Vec<&str>> = sequences
                .iter()
                .filter(|s| s.len() == sequences.last().map_or(0, Vec::len))
                .flat_map(|s| {
                    POOL.iter().map(move |w| {
                        let mut s = s.clone();
                        s.push(*w);
                        s
                    })
                })
                .collect();
            sequences.extend(longer);
        }
        for words in &sequences {
            fast += usize::from(agree(&argv(words)));
            // The same words before the subcommand, as a hardened install writes the paths.
            fast += usize::from(agree(&before(words, &[])));
        }
        // And longer random ones.
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let len = 4 + (rng.next() % 5) as usize;
            let words: Vec<&str> = (0..len)
                .map(|_| POOL[(rng.next() % POOL.len() as u64) as usize])
                .collect();
            fast += usize::from(agree(&argv(&words)));
            let (first, rest) = words.split_at(len / 2);
            fast += usize::from(agree(&before(first, rest)));
        }
        // The pool's plain forms are many of these: the comparison was not vacuous.
        assert!(fast > 100, "{env:?}: only {fast} command lines read fast");
    }
    environment([None, None, None]);

    // The forms the plugin and `install` write go the fast way.
    let written: [&[&str]; 8] = [
        &[],
        &["--agent", "claude", "--mcp"],
        &["--agent", "claude"],
        &["--agent", "gemini"],
        &["--agent", "codex"],
        &["--agent", "copilot"],
        &["--agent", "cursor"],
        &[
            "--mcp",
            "--agent=claude",
            "--catalog",
            "/etc/mesh-guard/catalog.toml",
        ],
    ];
    for words in written {
        assert!(agree(&argv(words)), "{words:?} should be read without clap");
    }
    // A hardened install's hook: the paths before the subcommand (`install`, decision 0059).
    for words in [
        &[
            "--catalog",
            "/etc/mesh-guard/catalog.toml",
            "--rules",
            "/etc/mesh-guard/rules",
        ][..],
        &["--catalog=/c", "--db", "/d"],
    ] {
        let args = before(words, &["--agent", "claude"]);
        assert!(agree(&args), "{args:?} should be read without clap");
    }

    // Help, errors and the unusual are clap's.
    let unusual: [&[&str]; 12] = [
        &["--help"],
        &["-h"],
        &["--agent", "Claude"],
        &["--agent"],
        &["--mcp", "--mcp"],
        &["--mcp=true"],
        &["--catalog="],
        &["--catalog", "--mcp"],
        &["--db", "a", "--db", "b"],
        &["--", "--mcp"],
        &["--agent", "claude", "extra"],
        &["--rules=-r"],
    ];
    for words in unusual {
        let args = argv(words);
        assert!(
            Args::parse_hook(&args).is_none(),
            "{words:?} should go to clap"
        );
    }
    for args in [
        vec!["mesh-guard", "--catalog", "/c", "--catalog", "/d", "hook"],
        vec!["mesh-guard", "--agent", "claude", "hook"],
        vec!["mesh-guard", "--mcp", "hook"],
        vec!["mesh-guard", "check", "true"],
        vec!["mesh-guard"],
        vec!["mesh-guard", "--version"],
    ] {
        let args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
        assert!(Args::parse_hook(&args).is_none(), "{args:?}");
    }
    // The guard's variables, empty or not, choose nothing for a hook, either way it is
    // read; an operator's command still takes them.
    for value in ["", "/tmp/agent-chosen"] {
        environment([Some(value), Some(value), Some(value)]);
        let fast = Args::parse_hook(&argv(&[])).unwrap();
        let clap = Args::try_parse_args(argv(&["--agent", "Claude"]));
        assert!(clap.is_err(), "clap's own error stays");
        let clap = Args::try_parse_args(argv(&[])).unwrap();
        for args in [fast, clap] {
            assert_eq!(
                (args.catalog, args.db, args.rules),
                (None, None, None),
                "{value:?}"
            );
        }
    }
    environment([Some("/tmp/agent-chosen"), None, None]);
    let start = ["mesh-guard", "session-start"].map(OsString::from);
    assert_eq!(Args::try_parse_args(start).unwrap().catalog, None);
    let check = ["mesh-guard", "check", "true"].map(OsString::from);
    assert_eq!(
        Args::try_parse_args(check).unwrap().catalog,
        Some("/tmp/agent-chosen".into())
    );
    environment([None, None, None]);
}
