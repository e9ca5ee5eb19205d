//! `mesh-guard replay`: every shell command in agents' session transcripts decided with the
//! catalog and rules in force, nothing recorded; what a rollout would refuse (decision 0061).

use crate::app::{decide, load_rules};
use crate::catalog::Mode;
use crate::cli::Format;
use crate::config::Paths;
use crate::decide::Decision;
use crate::error::exit;
use crate::replay::tally::{Refused, Tally, render_csv, render_json, render_table};
use crate::replay::{self, Met, Source};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Progress goes to stderr once a replay has run this long, then at most this often.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

pub fn run(paths: &Paths, given: &[PathBuf], format: Format) -> i32 {
    let rules = match load_rules(paths) {
        Ok(rules) => rules,
        Err(e) => {
            errln!("{e}");
            return e.exit_code();
        }
    };
    let catalog = paths.lazy_catalog();
    if let Err(errors) = catalog.get() {
        for e in errors {
            errln!("error: {e}");
        }
        return exit::ERROR;
    }
    let sources: Vec<(PathBuf, Option<crate::hook::Agent>)> = if given.is_empty() {
        let home = crate::io::var_os("HOME")
            .map(PathBuf::from)
            .or_else(crate::perm::account_home)
            .unwrap_or_default();
        let var = |name: &str| {
            crate::io::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let found: Vec<Source> = replay::default_sources(&home, var)
            .into_iter()
            .filter(|s| s.dir.is_dir())
            .collect();
        if found.is_empty() {
            errln!(
                "mesh-guard replay: no agent transcripts under {} (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp, ~/.copilot/session-state); give files or directories",
                home.display()
            );
        }
        found.into_iter().map(|s| (s.dir, Some(s.agent))).collect()
    } else {
        given.iter().map(|p| (p.clone(), None)).collect()
    };
    let mut tally = Tally::default();
    let mut progress = Progress::new();
    for (path, agent) in &sources {
        let found = replay::walk(path, *agent, &mut |met| match met {
            Met::Transcript(file) => {
                replay_file(paths, &rules, &catalog, file, &mut tally, &mut progress);
            }
            Met::Unreadable(entry, why) => {
                let shown = entry.display().to_string();
                errln!("mesh-guard replay: skipped {shown}: {why}");
                tally.skipped.push((shown, why));
            }
        });
        if found == 0 && path.is_dir() {
            let shown = path.display().to_string();
            let looked = replay::looked_for(*agent);
            errln!("mesh-guard replay: no transcript in {shown} (looked for {looked})");
            tally.empty.push((shown, looked.to_string()));
        }
    }
    progress.done(&tally);
    out!(
        "{}",
        match format {
            Format::Table => render_table(&tally),
            Format::Json => render_json(&tally),
            Format::Csv => render_csv(&tally),
        }
    );
    exit::OK
}

fn replay_file(
    paths: &Paths,
    rules: &crate::rules::Rules,
    catalog: &crate::catalog::LazyCatalog,
    file: &Path,
    tally: &mut Tally,
    progress: &mut Progress,
) {
    let shown = file.display().to_string();
    let read = replay::read(file, &mut |found| {
        tally.command(&found);
        progress.tick(tally);
        // The directory the command ran in, where it is still there (scripts, compose files
        // and ssh settings are read from it as the hook would).
        let cwd = Some(PathBuf::from(&found.cwd)).filter(|d| d.is_absolute() && d.is_dir());
        let outcome = decide(paths, rules, catalog, &found.command, cwd);
        let Some(refusal) = outcome.decision.refusal() else {
            return;
        };
        let mode = match outcome.decision {
            Decision::Refuse(_) => Mode::Enforce,
            Decision::Pass(_) => Mode::Report,
        };
        let refused = Refused {
            rule: refusal.rule,
            target: &refusal.target,
            tools: outcome.instead.iter().map(|s| s.tool.clone()).collect(),
            shape: &refusal.shape,
            mode,
        };
        tally.refused(&found, &shown, refused);
    });
    match read {
        Ok(read) if !read.recognised => {
            let why = if read.damaged > 0 {
                "not a transcript: its lines are not JSON"
            } else {
                "not a transcript of Claude Code, Codex, Gemini CLI or Copilot CLI"
            };
            errln!("mesh-guard replay: skipped {shown}: {why}");
            tally.skipped.push((shown, why.to_string()));
        }
        Ok(read) => {
            tally.files += 1;
            if read.damaged > 0 {
                errln!(
                    "mesh-guard replay: {shown}: {} line{} could not be read (not JSON, or longer than {} MiB), skipped",
                    read.damaged,
                    if read.damaged == 1 { "" } else { "s" },
                    replay::MAX_LINE / (1024 * 1024)
                );
                tally.damaged.push((shown, read.damaged));
            }
        }
        Err(e) => {
            errln!("mesh-guard replay: skipped {shown}: {e}");
            tally.skipped.push((shown, e.to_string()));
        }
    }
}

/// Progress on stderr for a replay that runs long; nothing for a short one.
struct Progress {
    started: Instant,
    last: Option<Instant>,
}

impl Progress {
    fn new() -> Progress {
        Progress {
            started: Instant::now(),
            last: None,
        }
    }

    fn tick(&mut self, tally: &Tally) {
        let now = Instant::now();
        let due = match self.last {
            None => now.duration_since(self.started) >= PROGRESS_AFTER,
            Some(last) => now.duration_since(last) >= PROGRESS_AFTER,
        };
        if due {
            self.last = Some(now);
            errln!(
                "mesh-guard replay: {} commands read, {} would be refused, {} transcripts done…",
                tally.commands,
                tally.would_refuse,
                tally.files,
            );
        }
    }

    fn done(&self, tally: &Tally) {
        if self.last.is_some() {
            errln!(
                "mesh-guard replay: done: {} transcripts read, {} commands",
                tally.files,
                tally.commands
            );
        }
    }
}
