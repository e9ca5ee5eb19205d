//! mesh-guard: keeps AI coding agents on a mesh's own tools.

/// Prints a line on stdout, ignoring a closed pipe (`mesh-guard audit | head` is not an
/// error, and must not panic).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// As `outln!`, without the newline.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
pub mod app;
pub mod argv;
pub mod audit;
pub mod bash_eval;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod config;
pub mod deadline;
pub mod decide;
pub mod error;
pub mod hook;
pub mod install;
pub mod instead;
pub mod message;
pub mod ondisk;
pub mod perm;
pub mod record;
pub mod rules;
pub mod scope;
pub mod search;
pub mod session;
pub mod shell;
pub mod time;
pub mod unwrap;

/// Hooks must never end without an answer (decision 0002): past this, the hook refuses.
const HOOK_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// The deadline; debug builds let the tests shorten it (`MESH_GUARD_DEBUG_DEADLINE_MS`) to
/// prove a hang refuses without waiting ten seconds.
fn hook_deadline() -> std::time::Duration {
    let debug = cfg!(debug_assertions)
        .then(|| std::env::var("MESH_GUARD_DEBUG_DEADLINE_MS").ok())
        .flatten()
        .and_then(|ms| ms.parse().ok())
        .map(std::time::Duration::from_millis);
    debug.unwrap_or(HOOK_DEADLINE)
}

/// Runs a command so that every way it can fail still gives a clear answer: a panic or a
/// hang in `hook` becomes a refusal (exit 2), never a silent pass.
pub fn main_with(args: cli::Args) -> i32 {
    let hook_agent = match &args.command {
        cli::Command::Hook { agent, .. } => Some(agent.fallback()),
        _ => None,
    };
    if let Some(agent) = hook_agent {
        // A panic's own report would be noise to the agent; the refusal below says it.
        std::panic::set_hook(Box::new(|_| {}));
        let message = app::fail_closed("the check took too long");
        let stdout = format!("{}\n", hook::deny(agent, &message)).into_bytes();
        let stderr = format!("{message}\n").into_bytes();
        if !deadline::arm(hook_deadline(), stdout, stderr) {
            // No timer: a watchdog thread (a small stack: it only sleeps) keeps the promise.
            let _ = std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    std::thread::sleep(hook_deadline());
                    std::process::exit(app::refuse(agent, &message, None));
                });
        }
    }
    // The work runs on the main thread: its stack (8 MiB by default) holds the walk, whose
    // depth the parser bounds (decision 0001), and a thread of its own would cost every
    // hook call a spawn (docs/performance.md).
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commands::run(args))).ok();
    match (result, hook_agent) {
        (Some(code), _) => code,
        (None, Some(agent)) => app::refuse(agent, &session::internal_error_message(), None),
        (None, None) => {
            eprintln!("error: mesh-guard failed inside (an internal error)");
            error::exit::ERROR
        }
    }
}
pub mod protect;
