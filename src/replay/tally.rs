//! What a replay found, counted as it goes (memory bounded by the catalog, never by the
//! transcripts: rules, targets, shapes and tools are the catalog's), and said as a table,
//! JSON or CSV.

use super::transcript::Found;
use crate::catalog::Mode;
use crate::rule::Rule;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Examples kept, the first ones met for each rule.
const EXAMPLES_PER_RULE: usize = 3;
/// Rows shown of each count in the table (JSON and CSV give them all).
const TABLE_ROWS: usize = 10;

/// One command that would be refused, as an example.
#[derive(Debug, Clone)]
pub struct Example {
    pub found: Found,
    pub file: String,
    pub rule: Rule,
    pub target: String,
    pub tools: Vec<String>,
    /// Enforce, or report where the catalog sets report-only mode.
    pub mode: Mode,
}

/// A refusal as replay counts it.
pub struct Refused<'a> {
    pub rule: Rule,
    pub target: &'a str,
    /// Empty when one must be created: then `shape` says for what.
    pub tools: Vec<String>,
    pub shape: &'a str,
    pub mode: Mode,
}

#[derive(Debug, Default)]
pub struct Tally {
    pub files: u64,
    pub commands: u64,
    pub would_refuse: u64,
    pub reported: u64,
    pub by_agent: BTreeMap<String, u64>,
    pub by_rule: BTreeMap<String, u64>,
    pub by_target: BTreeMap<String, u64>,
    pub missing: BTreeMap<String, u64>,
    pub tools: BTreeMap<String, u64>,
    pub examples: Vec<Example>,
    /// Transcripts skipped, and why.
    pub skipped: Vec<(String, String)>,
    /// Transcripts read with lines that could not be: how many.
    pub damaged: Vec<(String, u64)>,
    /// Directories with no transcript, and what was looked for.
    pub empty: Vec<(String, String)>,
}

impl Tally {
    pub fn command(&mut self, found: &Found) {
        self.commands += 1;
        *self
            .by_agent
            .entry(found.agent.name().to_string())
            .or_default() += 1;
    }

    pub fn refused(&mut self, found: &Found, file: &str, refused: Refused) {
        self.would_refuse += 1;
        self.reported += u64::from(refused.mode == Mode::Report);
        *self
            .by_rule
            .entry(refused.rule.id().to_string())
            .or_default() += 1;
        if !refused.target.is_empty() {
            *self
                .by_target
                .entry(refused.target.to_string())
                .or_default() += 1;
        }
        if refused.tools.is_empty() {
            let shape = if refused.shape.is_empty() {
                refused.rule.id()
            } else {
                refused.shape
            };
            *self.missing.entry(shape.to_string()).or_default() += 1;
        }
        for tool in &refused.tools {
            *self.tools.entry(tool.clone()).or_default() += 1;
        }
        let kept = self
            .examples
            .iter()
            .filter(|e| e.rule == refused.rule)
            .count();
        if kept < EXAMPLES_PER_RULE {
            self.examples.push(Example {
                found: found.clone(),
                file: file.to_string(),
                rule: refused.rule,
                target: refused.target.to_string(),
                tools: refused.tools,
                mode: refused.mode,
            });
        }
    }
}

/// Most first, then by name.
fn ranked(counts: &BTreeMap<String, u64>) -> Vec<(&String, u64)> {
    let mut list: Vec<(&String, u64)> = counts.iter().map(|(k, &n)| (k, n)).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    list
}

fn counts_json(counts: &BTreeMap<String, u64>) -> Value {
    Value::Object(
        ranked(counts)
            .into_iter()
            .map(|(k, n)| (k.clone(), json!(n)))
            .collect(),
    )
}

pub fn render_json(t: &Tally) -> String {
    let examples: Vec<Value> = t
        .examples
        .iter()
        .map(|e| {
            json!({
                "agent": e.found.agent.name(), "session": e.found.session, "time": e.found.time,
                "file": e.file, "command": e.found.command, "rule": e.rule.id(),
                "target": e.target, "tools": e.tools, "mode": e.mode.as_str(),
            })
        })
        .collect();
    let object = json!({
        "files": t.files,
        "commands": t.commands,
        "would_refuse": t.would_refuse,
        "reported": t.reported,
        "by_agent": counts_json(&t.by_agent),
        "by_rule": counts_json(&t.by_rule),
        "by_target": counts_json(&t.by_target),
        "missing": ranked(&t.missing).iter().map(|(s, n)| json!({"shape": s, "count": n})).collect::<Vec<_>>(),
        "tools": ranked(&t.tools).iter().map(|(s, n)| json!({"tool": s, "count": n})).collect::<Vec<_>>(),
        "examples": examples,
        "skipped": t.skipped.iter().map(|(f, why)| json!({"file": f, "why": why})).collect::<Vec<_>>(),
        "damaged": t.damaged.iter().map(|(f, n)| json!({"file": f, "lines": n})).collect::<Vec<_>>(),
        "empty": t.empty.iter().map(|(d, looked)| json!({"directory": d, "looked_for": looked})).collect::<Vec<_>>(),
    });
    let mut out = crate::audit::to_string_pretty(&object);
    out.push('\n');
    out
}

/// One row per figure: `section,name,count,agent,session,time,file,mode,command,reason`;
/// a row fills the columns it has (an example its file and mode, a skipped file its reason).
pub fn render_csv(t: &Tally) -> String {
    let mut out = String::new();
    let mut line = |fields: [&str; 10]| {
        let quoted: Vec<String> = fields
            .iter()
            .map(|f| {
                // What an agent wrote is drawn, not obeyed, in the operator's terminal.
                let f = crate::audit::visible(f);
                if f.contains([',', '"', '\r', '\n']) {
                    format!("\"{}\"", f.replace('"', "\"\""))
                } else {
                    f.to_string()
                }
            })
            .collect();
        out.push_str(&quoted.join(","));
        out.push_str("\r\n");
    };
    line([
        "section", "name", "count", "agent", "session", "time", "file", "mode", "command", "reason",
    ]);
    let count = |section: &'static str, name: &str, n: u64| {
        [section, name, &n.to_string(), "", "", "", "", "", "", ""].map(str::to_string)
    };
    let mut rows: Vec<[String; 10]> = Vec::new();
    for (name, n) in [
        ("files", t.files),
        ("commands", t.commands),
        ("would-refuse", t.would_refuse),
        ("reported", t.reported),
    ] {
        rows.push(count("summary", name, n));
    }
    for (section, counts) in [
        ("agent", &t.by_agent),
        ("rule", &t.by_rule),
        ("target", &t.by_target),
        ("missing", &t.missing),
        ("tool", &t.tools),
    ] {
        for (name, n) in ranked(counts) {
            rows.push(count(section, name, n));
        }
    }
    for row in &rows {
        line(row.each_ref().map(String::as_str));
    }
    for e in &t.examples {
        let name = format!("{} {}", e.rule.id(), e.target);
        let f = &e.found;
        line([
            "example",
            name.trim(),
            "",
            f.agent.name(),
            &f.session,
            &f.time,
            &e.file,
            e.mode.as_str(),
            &f.command,
            "",
        ]);
    }
    for (file, why) in &t.skipped {
        line(["skipped", file, "", "", "", "", file, "", "", why]);
    }
    for (file, n) in &t.damaged {
        let why = "lines not JSON, or too long";
        line([
            "damaged",
            file,
            &n.to_string(),
            "",
            "",
            "",
            file,
            "",
            "",
            why,
        ]);
    }
    for (dir, looked) in &t.empty {
        let why = format!("no transcript: looked for {looked}");
        line(["empty", dir, "", "", "", "", dir, "", "", &why]);
    }
    out
}

pub fn render_table(t: &Tally) -> String {
    let agents: Vec<String> = ranked(&t.by_agent)
        .iter()
        .map(|(a, n)| format!("{a} {n}"))
        .collect();
    let mut out = format!(
        "replayed {} transcript{}: {} shell command{}{}; {} would be refused",
        t.files,
        plural(t.files),
        t.commands,
        plural(t.commands),
        if agents.is_empty() {
            String::new()
        } else {
            format!(" ({})", agents.join(", "))
        },
        t.would_refuse
    );
    if t.reported > 0 {
        out.push_str(&format!(
            " ({} of them in report-only mode, passed by the hook)",
            t.reported
        ));
    }
    out.push('\n');
    let mut section = |title: &str, counts: &BTreeMap<String, u64>| {
        if counts.is_empty() {
            return;
        }
        out.push_str(&format!("\n{title}\n"));
        for (name, n) in ranked(counts).into_iter().take(TABLE_ROWS) {
            out.push_str(&format!("{n:>7}  {}\n", one_line(name)));
        }
    };
    section("WOULD REFUSE, BY RULE", &t.by_rule);
    section("BY TARGET", &t.by_target);
    section("SHAPES THAT NEED A TOOL (one must be created)", &t.missing);
    section("TOOLS THAT WOULD BE NAMED", &t.tools);
    if !t.examples.is_empty() {
        out.push_str("\nEXAMPLES\n");
        for e in &t.examples {
            // Every field but the agent and the rule is the transcript's text.
            let shown = |text: &str, width: usize| match one_line(text) {
                text if text.is_empty() => "-".to_string(),
                text => text.chars().take(width).collect(),
            };
            out.push_str(&format!(
                "{}  {}  {}  {}  {}  {}\n",
                shown(&e.found.time, 40),
                e.found.agent.name(),
                shown(&e.found.session, 8),
                e.rule.id(),
                shown(&e.target, 40),
                one_line(&e.found.command)
            ));
        }
    }
    for (file, why) in &t.skipped {
        out.push_str(&format!("\nskipped {}: {}", one_line(file), one_line(why)));
    }
    for (dir, looked) in &t.empty {
        let dir = one_line(dir);
        out.push_str(&format!("\nno transcript in {dir} (looked for {looked})"));
    }
    if !t.skipped.is_empty() || !t.empty.is_empty() {
        out.push('\n');
    }
    out
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Text on one line, cut at 160 characters, without the control and bidirectional
/// characters a transcript could use to rewrite the operator's terminal.
/// A newline, a carriage return and a tab are shown escaped (`\n`), so a command's lines
/// stay apart.
fn one_line(text: &str) -> String {
    let escaped = if text.contains(['\n', '\r', '\t']) {
        std::borrow::Cow::Owned(
            text.replace('\n', "\\n")
                .replace('\r', "\\r")
                .replace('\t', "\\t"),
        )
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    let clean = crate::audit::clean(&escaped);
    let mut line: String = clean.chars().take(160).collect();
    if clean.chars().count() > 160 {
        line.push('…');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_no_control_or_bidirectional_character_of_a_transcript() {
        let mut tally = Tally::default();
        let found = Found {
            agent: crate::hook::Agent::Claude,
            session: "s\u{1b}[2J".into(),
            time: "t\u{202e}".into(),
            cwd: String::new(),
            command: "ssh atlas \u{1b}]0;title\u{7}\nrm -rf x".into(),
        };
        tally.command(&found);
        let refused = Refused {
            rule: Rule::RemoteAccess,
            target: "atlas\u{2066}",
            tools: vec!["exec".into()],
            shape: "",
            mode: Mode::Enforce,
        };
        tally.refused(&found, "f", refused);
        let table = render_table(&tally);
        assert!(
            !table.contains(['\u{1b}', '\u{7}', '\u{202e}', '\u{2066}']),
            "{table:?}"
        );
        assert!(table.contains("ssh atlas"), "{table}");
        // The newline is shown as one, not turned into a space.
        assert!(table.contains("\\nrm -rf x"), "{table}");
    }
}
