//! `make`: the recipes it will run, read from the makefile it will read, as its own option
//! parser reads its words (GNU Make 4.3's `make --help`: `-kf FILE` is `-k -f FILE`,
//! `--file=FILE`, `--dry` for `--dry-run`). A dry run (`-n`, and `-q`, `-t`, which run no
//! recipe either) runs only the lines make always runs: `+` lines and `$(MAKE)`.

use crate::decide::*;
use crate::rules::Syntax;

/// make's options, from `make --help` (GNU Make 4.3).
fn syntax() -> Syntax {
    let list = |words: &[&str]| words.iter().map(|w| w.to_string()).collect();
    Syntax {
        short_value: "CEfIoW".into(),
        short_flag: "bmBdehikLnpqrRsStvw".into(),
        long_value: list(&[
            "directory",
            "eval",
            "file",
            "makefile",
            "include-dir",
            "old-file",
            "assume-old",
            "what-if",
            "new-file",
            "assume-new",
            "jobserver-style",
        ]),
        long_flag: list(&[
            "always-make",
            "environment-overrides",
            "help",
            "ignore-errors",
            "keep-going",
            "check-symlink-times",
            "just-print",
            "dry-run",
            "recon",
            "print-data-base",
            "question",
            "no-builtin-rules",
            "no-builtin-variables",
            "silent",
            "quiet",
            "no-silent",
            "no-keep-going",
            "stop",
            "touch",
            "trace",
            "version",
            "print-directory",
            "no-print-directory",
            "warn-undefined-variables",
        ]),
        optional_value: list(&[
            "-j",
            "--jobs",
            "-l",
            "--load-average",
            "--max-load",
            "-O",
            "--output-sync",
            "--debug",
        ]),
        abbreviations: true,
        ..Syntax::default()
    }
}

/// Options with which make runs no recipe line but those it always runs.
const NO_RECIPES: [&str; 9] = [
    "-n",
    "--just-print",
    "--dry-run",
    "--recon",
    "-q",
    "--question",
    "-t",
    "--touch",
    "-h",
];

impl Guard<'_> {
    /// The recipes `make ARGS` runs in `cwd`, walked as payloads.
    pub(in crate::decide) fn make(
        &self,
        args: &[String],
        cwd: &std::path::Path,
        disk: &dyn crate::world::Disk,
        depth: usize,
        walk: &mut Walk,
    ) {
        let syntax = syntax();
        let scanned = argv::scan(&syntax, args);
        // `-j 4`: 4 may be the jobs or a target; both readings are taken.
        let valued = argv::scan_as(&syntax, args, &argv::ambiguous(&syntax, &scanned));
        let value_of = |names: &[&str]| {
            scanned.iter().rev().find_map(|a| match a {
                Arg::Option { name, value } if names.contains(&name.as_str()) => value.clone(),
                _ => None,
            })
        };
        let file = value_of(&["-f", "--file", "--makefile"]);
        let dry_run = scanned
            .iter()
            .any(|a| matches!(a, Arg::Option { name, .. } if NO_RECIPES.contains(&name.as_str())));
        // `make -E 'x:;CMD' x`: the text is makefile text; its recipes may run.
        let mut lines: Vec<String> = Vec::new();
        for arg in &scanned {
            if let Arg::Option {
                name,
                value: Some(text),
            } = arg
                && matches!(name.as_str(), "-E" | "--eval")
            {
                let eval = crate::ondisk::make::parse(text);
                lines.extend(eval.parse_time);
                lines.extend(eval.recipes.into_iter().flat_map(|(_, r)| r));
            }
        }
        let cwd = match value_of(&["-C", "--directory"]) {
            Some(dir) if !is_known(&dir) => return self.make_lines(lines, depth, walk),
            Some(dir) => self
                .world
                .resolve(&self.world.expand_tilde(&dir), Some(cwd)),
            None => cwd.to_path_buf(),
        };
        if let Some(makefile) = disk.makefile(&cwd, file.as_deref()) {
            let goals = |scanned: &[Arg]| -> Vec<String> {
                argv::operands(scanned)
                    .filter(|a| !a.contains('='))
                    .map(String::from)
                    .collect()
            };
            let (first, second) = (goals(&scanned), goals(&valued));
            let mut targets: Vec<&str> = first.iter().chain(&second).map(String::as_str).collect();
            // The default goal: the first target that is not special (`.PHONY`).
            let default = makefile
                .recipes
                .iter()
                .map(|(t, _)| t.split_whitespace().next().unwrap_or(""))
                .find(|t| !t.starts_with('.'));
            if first.is_empty() || second.is_empty() {
                targets.extend(default);
            }
            let wanted = |rule: &str| rule.split_whitespace().any(|t| targets.contains(&t));
            lines.extend(makefile.parse_time.iter().cloned());
            for (at, (target, recipe)) in makefile.recipes.iter().enumerate() {
                if !wanted(target) {
                    continue;
                }
                match makefile.dry_run.get(at) {
                    Some(always) if dry_run => lines.extend(always.iter().cloned()),
                    _ => lines.extend(recipe.iter().cloned()),
                }
            }
        }
        self.make_lines(lines, depth, walk);
    }

    fn make_lines(&self, lines: Vec<String>, depth: usize, walk: &mut Walk) {
        for line in lines {
            self.payload(&line, depth + 1, &[], walk);
        }
    }
}
