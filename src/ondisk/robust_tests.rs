//! The parsers take any text without panicking: the hook must end in a clear answer even on a
//! hostile or half-written file.

use super::ssh::tests_memory::Memory;
use super::ssh::{self, Context, Destination, Source};
use super::{endpoint, make, podman, startup};

const ALPHABET: &[&str] = &[
    "Host",
    "Match",
    "exec",
    "host",
    "final",
    "Include",
    "HostName",
    "ProxyJump",
    "=",
    " ",
    "\t",
    "\n",
    "\"",
    "'",
    "\\",
    "#",
    "%h",
    "%",
    "*",
    "?",
    "!",
    ",",
    "@",
    ":",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "$(shell ",
    ";",
    "alias ",
    "f() ",
    "<<EOF",
    "EOF",
    "é",
    "a",
    "db",
    "\0",
    "{\"currentContext\":",
    "[engine]",
    "uri = ",
    "~/",
    "../",
    "/",
];

/// A fixed-seed generator: every run tries the same texts, so a failure reproduces.
fn texts(count: usize) -> Vec<String> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = (next() % 40) as usize;
            (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect()
        })
        .collect()
}

#[test]
fn no_parser_panics_on_arbitrary_text() {
    let context = Context {
        home: "/h",
        local_user: Some("me"),
    };
    let destination = Destination {
        host: "db".into(),
        user: None,
        port: None,
    };
    for text in texts(1500) {
        let mut memory = Memory::default();
        memory.files.insert("/h/.ssh/config".into(), text.clone());
        memory.files.insert("/h/.ssh/x".into(), text.clone());
        let sources = [Source::User("/h/.ssh/config".into())];
        let _ = ssh::resolve(&sources, &destination, &context, &mut memory);
        let _ = ssh::parse_destination(&text, true);
        let _ = make::parse(&text);
        let _ = startup::scan(&text, "/h");
        let _ = endpoint::current_context(&text);
        let _ = endpoint::context_host(&text);
        let _ = podman::engine_conf(std::slice::from_ref(&text));
        let _ = podman::connections(&text);
    }
}
