//! The real bash, as a test oracle: many snippets run in one `bash -c`, each in its own
//! command substitution so an expansion error ends only that case.

use std::io::Write;
use std::process::{Command, Stdio};

/// Whether bash can be asked. Without it the differential tests say so and pass, unless
/// MESH_GUARD_E2E_REQUIRED=1, where a missing bash fails them (a silent skip would hide it).
pub fn available(test: &str) -> bool {
    let found = Command::new("bash")
        .args(["-c", "[ \"${BASH_VERSINFO[0]}\" -ge 5 ]"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() != Ok("1"),
            "{test}: bash 5 is required (MESH_GUARD_E2E_REQUIRED=1) but was not found"
        );
        eprintln!("{test}: SKIPPED, no bash 5 on this machine");
    }
    found
}

/// Quotes `text` as one single-quoted bash word.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Runs each snippet (which writes its result on stdout): `Ok(output)` when it exited 0,
/// `Err(())` when bash reported an error.
pub fn run(snippets: &[String]) -> Vec<Result<String, ()>> {
    let mut script = String::new();
    for s in snippets {
        script.push_str(&format!(
            "r=$( {{ {s}\n}} 2>/dev/null; rc=$?; printf x; exit $rc ); rc=$?; printf '%s\\0%s\\0' \"$rc\" \"${{r%x}}\"\n"
        ));
    }
    // The script goes on stdin: hundreds of cases pass the argument-size limit.
    let mut child = Command::new("bash")
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()));
    let output = child.wait_with_output().expect("bash answers");
    writer.join().expect("writer").expect("script written");
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<&str> = text.split('\0').collect();
    assert!(
        fields.len() > snippets.len() * 2,
        "bash answered {} fields for {} cases: {}",
        fields.len(),
        snippets.len(),
        String::from_utf8_lossy(&output.stderr)
    );
    fields
        .chunks(2)
        .take(snippets.len())
        .map(|pair| {
            if pair[0] == "0" {
                Ok(pair[1].to_string())
            } else {
                Err(())
            }
        })
        .collect()
}

/// A small deterministic generator (xorshift), so every run tests the same cases.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// What a comparison found.
#[derive(Default)]
pub struct Tally {
    pub known: usize,
    /// Cases bash evaluated without an error.
    pub answered: usize,
    pub unknown: usize,
    pub wrong: Vec<String>,
}

impl Tally {
    /// Ours must equal bash's whenever ours is known; `case` describes it for the report.
    pub fn check(&mut self, case: &str, ours: Option<&str>, bash: &Result<String, ()>) {
        self.answered += usize::from(bash.is_ok());
        match (ours, bash) {
            (None, _) => {
                self.unknown += 1;
                if std::env::var("BASH_EVAL_SHOW_UNKNOWN").is_ok() {
                    eprintln!("unknown: {case} -> bash {bash:?}");
                }
            }
            (Some(a), Ok(b)) if a == b => self.known += 1,
            (Some(a), b) => self.wrong.push(format!("{case}: ours {a:?}, bash {b:?}")),
        }
    }

    /// No wrong known value, and most cases bash answers known (a module answering
    /// Unknown to everything would pass the first test alone).
    pub fn assert_sound(&self, what: &str, min_known_percent: usize) {
        let total = self.known + self.unknown + self.wrong.len();
        eprintln!(
            "{what}: {total} cases, bash answered {}, {} known here and equal, {} unknown",
            self.answered, self.known, self.unknown
        );
        assert!(
            self.wrong.is_empty(),
            "{what}: {} wrong:\n{}",
            self.wrong.len(),
            self.wrong.join("\n")
        );
        assert!(
            self.known * 100 >= self.answered * min_known_percent,
            "{what}: only {} of the {} bash answered known",
            self.known,
            self.answered
        );
    }
}
