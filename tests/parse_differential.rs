//! The guard against real bash: whenever bash runs `ssh db` (a mesh machine of the unseen
//! catalog) for a command, the guard must refuse that command. Constructs where a parser
//! can lose text (arrays in subshells, `$(( ))` beside `$( ( ) )`, case patterns with
//! parentheses, `coproc`, extglob, here-strings, escaped comments) are put before, after
//! and around `ssh db`; bash runs each with an `ssh` on `PATH` that only leaves a mark.
//! A command bash rejects, and so never runs ssh, asserts nothing.
//!
//! Needs `bash` and `timeout`; without them the test says so, and fails when
//! `MESH_GUARD_E2E_REQUIRED=1`.

mod common;

use common::{Scratch, call};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Constructs that run nothing guarded; each is tried before and after `ssh db`.
const CONSTRUCTS: &[&str] = &[
    "(a=(x))",
    "(a=(x) )",
    "( a=(x))",
    "(a=(x y) b=(z))",
    "(a+=(x))",
    "(a=([0]=x))",
    "(declare -a a=(x))",
    "(a=(x)) >/dev/null",
    "{ a=(x); }",
    "f() ( a=(x) )",
    "a=( $(echo x) )",
    "echo $(( 1 + (2) ))",
    "echo $( (echo x) )",
    "echo $((echo x) )",
    "echo $[1+(2)]",
    "((a=(1)))",
    "let 'a=(1)'",
    "case x in (x) echo;; esac",
    "case x in (x|y) echo;; (*) echo;; esac",
    "case x in x) (a=(x));; esac",
    "coproc echo x",
    "coproc c { echo x; }",
    "shopt -s extglob; echo x",
    "echo @(a|b)",
    "echo !(x)",
    "cat <<< x",
    "cat <<<x",
    "cat <<< \"$(echo x)\"",
    "echo a \\# b",
    "echo a\\\\",
    "echo x # a comment \\",
    "echo ${a[(1)]}",
    "echo ${x//(/y}",
    "echo \"${x:-(}\"",
    "echo $'\\x28'",
    "[[ x =~ (a) ]]",
    "[[ ( x == y ) ]]",
    "echo {a,(b)}",
    "time (echo)",
    "! (echo)",
    "echo <(echo)",
    "a=(x) b=(y)",
    "trap 'echo' EXIT",
    "select x in a; do break; done </dev/null",
    "function f { echo; }",
    "echo )",
    "echo ((a))",
    "(a=(x)",
];

/// Where `ssh db` sits around a construct `C`.
const PLACES: &[&str] = &[
    "C; ssh db",
    "C\nssh db",
    "C && ssh db",
    "C || ssh db",
    "C | ssh db",
    "ssh db; C",
    "ssh db\nC",
];

/// Commands that hold `ssh db` inside a construct.
const INSIDE: &[&str] = &[
    "(a=(x); ssh db)",
    "(a=($(ssh db)))",
    "echo $( (ssh db) )",
    "echo $((ssh db) )",
    "case x in (x) ssh db;; esac",
    "case x in x) (a=(x)); ssh db;; esac",
    "coproc ssh db",
    "coproc c { ssh db; }",
    "cat <<< \"$(ssh db)\"",
    "[[ x == $(ssh db) ]]",
    "[[ x == @($(ssh db)) ]]",
    "echo ${x:-$(ssh db)}",
    "echo ${a[$(ssh db)]}",
    "a[$(ssh db)]=x",
    "echo a \\# b; ssh db",
    "echo a \\\n# x\nssh db",
    "f() ( a=(x); ssh db ); f",
    "echo $(( $(ssh db) ))",
    "echo $[$(ssh db)]",
    "((x=$(ssh db)))",
    "cat <<EOF\n$(ssh db)\nEOF",
    "cat <<EOF\n$((1+$(ssh db)))\nEOF",
    "cat <<EOF; ssh db\nx\nEOF",
    "cat <<-EOF\n\tx\n\tEOF\nssh db",
    "echo \"$(ssh db)\"",
    "echo `ssh db`",
    "echo \"`ssh db`\"",
    "x=${y:=$(ssh db)}",
    "echo ${x#$(ssh db)}",
    "echo ${x/$(ssh db)/y}",
    "echo ${x:$(ssh db)}",
    "declare a=$(ssh db)",
    "local a=$(ssh db)",
    "export a=$(ssh db)",
    "readonly a=(x $(ssh db))",
    "a=(x) ssh db",
    "for ((i=$(ssh db); i<0; i++)); do :; done",
    "for x in $(ssh db); do :; done",
    "select x in $(ssh db); do break; done </dev/null",
    "while ssh db; do break; done",
    "echo x >$(ssh db)",
    "echo x 2>&1 >\"$(ssh db)\"",
    "{ ssh db; } 2>/dev/null",
    "(ssh db) &",
    "coproc (ssh db)",
    "time ssh db",
    "! ssh db",
    "[ -n \"$(ssh db)\" ]",
    "test -n `ssh db`",
    "trap 'ssh db' EXIT",
    "alias s='ssh db'\ns",
    "function f { ssh db; }; f",
    "f() { ssh db; }\nf",
    "echo a; # comment\nssh db",
    "echo a # x \\\nssh db",
    "cat <<E\n$((ssh db) )\nE",
    "bash -c '(a=(x)); ssh db'",
    "eval '(a=(x))\nssh db'",
    "sh -c 'echo $((ssh db) )'",
    "echo ${x:-$((ssh db) )}",
    // Quoting, expansions, case fall-through, heredoc delimiters and comments.
    "echo $(case x in x) ssh db;; esac)",
    "echo \"$(echo \")\")\"; ssh db",
    "a=$'it\\'s'; ssh db",
    "echo ${x:-'}'}; ssh db",
    "echo ${x//\\}/y}; ssh db",
    "echo $(( $(echo 1) )) ; ssh db",
    "cat <<E;ssh db\nbody\nE",
    "cat << 'E' | ssh db\nx\nE",
    "cat <<E\nE\nssh db",
    "echo a#; ssh db",
    "function f() { :; }; ssh db",
    "declare -A m=([k]=v); ssh db",
    "a=([k]=$(ssh db))",
    "x=$(</dev/null); ssh db",
    "exec {fd}>/dev/null; ssh db",
    "echo $\"hello\"; ssh db",
    "echo ~+; ssh db",
    "for i in 1; { ssh db; }",
    "case x in x) ssh db;& y) ;; esac",
    "case x in x) ;;& *) ssh db;; esac",
    "case x in x) ;& y) ssh db;; esac",
    "(( 0 )) || ssh db",
    "time -p ssh db",
    "printf -v x %s $(ssh db)",
    "echo \\\n; ssh db",
    "cat < <(ssh db)",
    ">&2 ssh db",
    "2>/dev/null ssh db",
    "X=1 \\ssh db",
    "$'ssh' db",
    "s\\sh db",
    "command -- ssh db",
    "for ((;;)); do ssh db; break; done",
    "let x=1 ssh=2; ssh db",
    "ssh db <<< x",
    "ssh db &>/dev/null &",
    "\\\nssh db",
    "echo x |& ssh db",
    "echo $[ $(ssh db) ]",
    "case $(ssh db) in *) ;; esac",
    "[[ $(ssh db) ]]",
    "for x in; do :; done; ssh db",
    "x=(); ssh db",
    "a=( [0]=1 [1]=$(ssh db) )",
    "typeset -a a=( $(ssh db) )",
    "echo ${#a[@]} ; ssh db",
    "echo ${!a[@]}; ssh db",
    "echo ${a[@]:0:1}; ssh db",
    "echo \"${a[@]/#/x}\"; ssh db",
    "echo ${x@Q}; ssh db",
    "echo ${x,,}; ssh db",
    "echo ${x^^}; ssh db",
    "a=(x); echo ${a[0]}; ssh db",
    "echo $((a[1]=2)); ssh db",
    "f() { a=(x); }; f; ssh db",
    "echo \"$( (a=(x)) )\"; ssh db",
    "(a=(x)) 2>&1 | cat; ssh db",
    "((a[0]=1)); ssh db",
    "echo \"${x:-(}\"; ssh db",
    "echo ${x:-)}; ssh db",
    "echo $( echo ')' ); ssh db",
    "echo `echo \\`echo x\\``; ssh db",
    "x=`ssh db`",
    "echo $((1))$((2)); ssh db",
    "echo $( ( echo ) )$( (echo) ); ssh db",
    "shopt -s extglob\necho !(x); ssh db",
    "echo {1..3}; ssh db",
    "echo {a,b}{c,d}; ssh db",
    ": ${x:=$(ssh db)}",
    "trap -- 'ssh db' EXIT",
    "echo \"#\"; ssh db",
    "echo '#'; ssh db",
    "echo x#y; ssh db",
    "echo x;#y\nssh db",
];

fn tools() -> bool {
    ["bash", "timeout"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Whether bash, run on `command`, runs `ssh` (the fake one in `bin`).
fn bash_runs_ssh(command: &str, dir: &Path, bin: &Path) -> bool {
    let mark = dir.join("ran");
    let _ = std::fs::remove_file(&mark);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let _ = Command::new("timeout")
        .args(["5", "bash", "-c", command])
        .env_clear()
        .env("PATH", path)
        .env("MARK", &mark)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output();
    mark.exists()
}

fn guard_refuses(command: &str, catalog: &Path, db: &Path) -> bool {
    let catalog = catalog.to_string_lossy();
    let db = db.to_string_lossy();
    let out = call(
        &["--catalog", &catalog, "--db", &db, "check", "--", command],
        &[],
        b"",
    );
    out.code == 1
}

#[test]
fn whenever_bash_runs_ssh_to_a_mesh_machine_the_guard_refuses() {
    if !tools() {
        eprintln!("SKIPPED: bash and timeout are needed to compare the guard with bash");
        assert!(
            std::env::var("MESH_GUARD_E2E_REQUIRED").as_deref() != Ok("1"),
            "bash and timeout are required (MESH_GUARD_E2E_REQUIRED=1)"
        );
        return;
    }
    let scratch = Scratch::new("differential");
    let bin = scratch.path("bin");
    let fake = scratch.write("bin/ssh", "#!/bin/sh\n: > \"$MARK\"\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let work = scratch.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let catalog: PathBuf =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/unseen/catalog.toml");
    let db = scratch.path("audit.db");

    let mut commands: Vec<String> = CONSTRUCTS
        .iter()
        .flat_map(|c| PLACES.iter().map(move |p| p.replace('C', c)))
        .collect();
    commands.extend(INSIDE.iter().map(|s| s.to_string()));

    let mut ran = 0;
    let mut missed = Vec::new();
    for command in &commands {
        if !bash_runs_ssh(command, &work, &bin) {
            continue;
        }
        ran += 1;
        if !guard_refuses(command, &catalog, &db) {
            missed.push(command.clone());
        }
    }
    // The fake ssh must really be what bash runs, or the test proves nothing.
    assert!(
        ran > commands.len() / 2,
        "bash ran ssh for only {ran} of {} commands",
        commands.len()
    );
    assert!(
        missed.is_empty(),
        "bash runs `ssh db` but the guard passes:\n{}",
        missed
            .iter()
            .map(|c| format!("  {c:?}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
