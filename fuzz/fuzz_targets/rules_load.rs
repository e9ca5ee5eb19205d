//! The rules loader on arbitrary bytes: an operator's `--rules` file is read by every hook
//! call, so a malformed one must be an error, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mesh_guard::rules::Rules;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::write(dir.path().join("fuzz.toml"), data).expect("the rules file is written");
    if let Ok(rules) = Rules::load(Some(dir.path())) {
        // What a decision asks of loaded rules: every lookup must answer.
        for name in ["ssh", "docker", "sudo", "bash", "python3", "claude", "fuzz"] {
            let _ = rules.program(name);
            let _ = rules.wrapper(name);
            let _ = rules.shell(name);
            let _ = rules.interpreter(name);
            let _ = rules.writer(name);
            let _ = rules.agent(name);
            let _ = rules.is_guarded(name);
        }
    }
});
