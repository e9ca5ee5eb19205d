//! The documentation agrees with itself: the README's hand install is the one
//! docs/agents/claude.md gives, and every agent's page says how to give it the
//! "instead of" table (issue 15).

use std::path::Path;

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The JSON code blocks of a Markdown text (indented ones too), parsed.
fn json_blocks(text: &str) -> Vec<serde_json::Value> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "```json" {
            let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            let body = body.join("\n");
            blocks.push(serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")));
        }
    }
    blocks
}

#[test]
fn the_readme_installs_claude_code_as_its_page_does() {
    let readme = json_blocks(&read("README.md"));
    let page = json_blocks(&read("docs/agents/claude.md"));
    let hooks = |v: &serde_json::Value| v.get("hooks").is_some();
    let readme: Vec<_> = readme.iter().filter(|v| hooks(v)).collect();
    assert_eq!(readme.len(), 1, "one hand-install block in the README");
    assert_eq!(readme[0], &page[0]);
    for event in ["PreToolUse", "SessionStart"] {
        assert!(page[0]["hooks"].get(event).is_some(), "{event}");
    }
}

#[test]
fn every_agent_page_gives_the_instead_of_table() {
    for (page, file) in [
        ("claude.md", "CLAUDE.md"),
        ("codex.md", "AGENTS.md"),
        ("gemini.md", "GEMINI.md"),
        ("copilot.md", "copilot-instructions.md"),
        ("cursor.md", ".cursor/rules/"),
    ] {
        let text = read(&format!("docs/agents/{page}"));
        let section = text
            .split("## Give the agent the \"instead of\" table")
            .nth(1)
            .unwrap_or_else(|| panic!("{page} has no section on the instead-of table"));
        assert!(
            section.contains("mesh-guard instead-of") && section.contains(file),
            "{page}: {section}"
        );
    }
}

#[test]
fn the_license_is_the_manifests() {
    let manifest = read("Cargo.toml");
    assert!(manifest.contains("license = \"MIT\""));
    let license = read("LICENSE");
    assert!(license.starts_with("MIT License\n\nCopyright (c) 2026 the mesh-guard developers\n"));
}

#[test]
fn the_records_kinds_are_the_ones_the_syslog_fields_name() {
    let fleet = read("docs/fleet.md").replace('\n', " ");
    let listed = fleet
        .split_once("`MESH_GUARD_KIND` (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list.to_string())
        .expect("docs/fleet.md lists MESH_GUARD_KIND's values");
    let kinds = mesh_guard::record::Kind::ALL.map(mesh_guard::record::Kind::as_str);
    assert_eq!(listed, kinds.join(", "));
}
