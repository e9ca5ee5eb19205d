//! mesh-guard: keeps AI coding agents on a mesh's own tools.

/// Prints a line on stdout (`io`: the process's, or the one `run` was given), ignoring a
/// closed pipe (`mesh-guard audit | head` is not an error, and must not panic).
macro_rules! outln {
    () => {{
        let _ = $crate::io::write_out(format_args!("\n"));
    }};
    ($($arg:tt)*) => {{
        let _ = $crate::io::write_out(format_args!("{}\n", format_args!($($arg)*)));
    }};
}

/// As `outln!`, without the newline.
macro_rules! out {
    ($($arg:tt)*) => {{
        let _ = $crate::io::write_out(format_args!($($arg)*));
    }};
}

/// As `outln!`, on stderr.
macro_rules! errln {
    ($($arg:tt)*) => {{
        let _ = $crate::io::write_err(format_args!("{}\n", format_args!($($arg)*)));
    }};
}
pub mod allocator;
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
pub mod grant;
pub mod hook;
pub mod install;
pub mod instead;
pub mod io;
mod memfns;
pub mod message;
pub mod ondisk;
pub mod perm;
pub mod pipeline;
pub mod record;
pub mod replay;
pub mod rule;
pub mod rules;
pub mod scope;
pub mod search;
pub mod sha256;
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
    let hook_agent = hook_agent(&args);
    if let Some(agent) = hook_agent {
        // A panic's own report would be noise to the agent; the refusal below says it.
        std::panic::set_hook(Box::new(|_| {}));
        // Fixed at build time: every call arms the deadline, almost none is refused by it.
        let stdout = deadline::answer::stdout(agent).as_bytes();
        let stderr = deadline::answer::STDERR.as_bytes();
        if !deadline::arm(hook_deadline(), stdout, stderr) {
            // No timer: a watchdog thread (a small stack: it only sleeps) keeps the promise.
            let _ = std::thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    std::thread::sleep(hook_deadline());
                    let answer = pipeline::Answer::refused(agent, deadline::answer::MESSAGE.into());
                    std::process::exit(answer.print());
                });
        }
    }
    answer(args, hook_agent)
}

/// Runs the program in this process, on `io` instead of the process's stdin, stdout, stderr
/// and environment: the whole program as a test calls it, without spawning. The hook's
/// deadline is not armed (it ends the process; the spawn tests check it), and the working
/// directory is still the process's. `args` are without the program's name.
pub fn run<I, T>(args: I, io: io::Io) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    io::with(io, || match cli::Args::parse_in(args) {
        Ok(args) => {
            let hook_agent = hook_agent(&args);
            answer(args, hook_agent)
        }
        Err(e) => {
            let text = e.render().to_string();
            if e.use_stderr() {
                errln!("{}", text.trim_end());
            } else {
                outln!("{}", text.trim_end());
            }
            e.exit_code()
        }
    })
}

/// The agent whose protocol a hook call answers in before its event is read.
fn hook_agent(args: &cli::Args) -> Option<hook::Agent> {
    match &args.command {
        cli::Command::Hook { agent, .. } => Some(agent.fallback()),
        _ => None,
    }
}

/// The command's exit code, or the refusal (hook) or error for a panic inside it.
fn answer(args: cli::Args, hook_agent: Option<hook::Agent>) -> i32 {
    // The work runs on the main thread: its stack (8 MiB by default) holds the walk, whose
    // depth the parser bounds (decision 0001), and a thread of its own would cost every
    // hook call a spawn (docs/performance.md).
    let result =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commands::run(args))).ok();
    match (result, hook_agent) {
        (Some(code), _) => code,
        (None, Some(agent)) => {
            pipeline::Answer::refused(agent, pipeline::internal_error_message()).print()
        }
        (None, None) => {
            errln!("error: mesh-guard failed inside (an internal error)");
            error::exit::ERROR
        }
    }
}
pub mod protect;
pub mod world;
