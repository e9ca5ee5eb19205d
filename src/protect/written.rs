//! The file a file-writing tool would leave, so that a write is judged by its result and
//! not by its own text: an Edit that completes `MESH_GUARD_OVERRIDE_X=1` into
//! `MESH_GUARD_OVERRIDE=1` writes only `_X=1` → `=1`, yet leaves the override set.
//!
//! The edits are applied as Claude Code applies them: `old_string` → `new_string`, the
//! first occurrence or every one with `replace_all`, MultiEdit's edits in order, and
//! NotebookEdit's cell source replaced, inserted or deleted.

use serde_json::Value;
use std::path::Path;

/// Past this the current file is not read: the edit is judged on its own text and what
/// was read, which is as much as a startup file ever holds.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The text the tool whose input is `input` (its JSON) would leave at `path`, or `None`
/// when the input is not an edit this knows (the caller then judges its text alone).
pub fn after(path: &Path, input: &str) -> Option<String> {
    let input: Value = serde_json::from_str(input).ok()?;
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    if let Some(content) = text("content") {
        return Some(content.to_string());
    }
    if let Some(new_source) = text("new_source") {
        return Some(notebook(&current(path), &input, new_source));
    }
    let edits: Vec<&Value> = match input.get("edits").and_then(Value::as_array) {
        Some(edits) => edits.iter().collect(),
        None if input.get("old_string").is_some() => vec![&input],
        None => return None,
    };
    let mut file = current(path);
    for edit in edits {
        let old = edit.get("old_string").and_then(Value::as_str)?;
        let new = edit.get("new_string").and_then(Value::as_str)?;
        let all = edit
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        file = if old.is_empty() && file.is_empty() {
            // Claude Code creates a file from an empty `old_string`.
            new.to_string()
        } else if all {
            file.replace(old, new)
        } else {
            file.replacen(old, new, 1)
        };
    }
    Some(file)
}

/// The file as it is now: empty when absent or not a regular file (a pipe is never
/// opened, and opening is non-blocking, so the hook cannot be made to wait).
fn current(path: &Path) -> String {
    use std::os::unix::fs::OpenOptionsExt;
    const O_NONBLOCK: i32 = 0o4000;
    let mut bytes = Vec::new();
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(path);
    if let (true, Ok(file)) = (regular, opened)
        && let Ok(metadata) = file.metadata()
        && metadata.is_file()
    {
        // A read that fails part-way leaves the content unknown: empty, as for a pipe.
        bytes = crate::ondisk::read::read_up_to(&file, metadata.len(), MAX_FILE_BYTES)
            .unwrap_or_default();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every cell's source once the edit is made, one after another (what a startup file
/// could take from a notebook is its text; the cells' order does not change that).
fn notebook(file: &str, input: &Value, new_source: &str) -> String {
    let json: Value = serde_json::from_str(file).unwrap_or_default();
    let cells = json
        .get("cells")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let cell_id = input.get("cell_id").and_then(Value::as_str);
    let mode = input
        .get("edit_mode")
        .and_then(Value::as_str)
        .unwrap_or("replace");
    let source = |cell: &Value| match cell.get("source") {
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect::<String>(),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let mut out: Vec<String> = Vec::new();
    let mut matched = false;
    for (i, cell) in cells.iter().enumerate() {
        let id = cell.get("id").and_then(Value::as_str);
        let this = cell_id.is_some_and(|c| Some(c) == id || c == format!("cell-{i}"));
        matched |= this;
        match (this, mode) {
            (true, "delete") => {}
            (true, "insert") => {
                out.push(source(cell));
                out.push(new_source.to_string());
            }
            (true, _) => out.push(new_source.to_string()),
            (false, _) => out.push(source(cell)),
        }
    }
    if !matched {
        out.push(new_source.to_string());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, text: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("mesh-guard-written-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn edits_apply_as_claude_code_applies_them() {
        let path = scratch("rc", "a=1\nMESH_GUARD_OVERRIDE_X=1\na=1\n");
        let edit = r#"{"file_path":"x","old_string":"_X=","new_string":"="}"#;
        assert_eq!(
            after(&path, edit).unwrap(),
            "a=1\nMESH_GUARD_OVERRIDE=1\na=1\n"
        );
        let all = r#"{"old_string":"a=1","new_string":"b","replace_all":true}"#;
        assert_eq!(
            after(&path, all).unwrap(),
            "b\nMESH_GUARD_OVERRIDE_X=1\nb\n"
        );
        let first = r#"{"old_string":"a=1","new_string":"b"}"#;
        assert_eq!(
            after(&path, first).unwrap(),
            "b\nMESH_GUARD_OVERRIDE_X=1\na=1\n"
        );
        let multi = r#"{"edits":[{"old_string":"_X","new_string":"_Y"},{"old_string":"_Y=","new_string":"="}]}"#;
        assert!(
            after(&path, multi)
                .unwrap()
                .contains("MESH_GUARD_OVERRIDE=1")
        );
    }

    #[test]
    fn a_notebook_cell_is_replaced() {
        let path = scratch(
            "n.ipynb",
            r#"{"cells":[{"id":"a","source":["x = 1\n"]},{"id":"b","source":"y"}]}"#,
        );
        let input = r#"{"notebook_path":"n","cell_id":"b","new_source":"z"}"#;
        assert_eq!(after(&path, input).unwrap(), "x = 1\n\nz");
        let delete = r#"{"cell_id":"a","new_source":"","edit_mode":"delete"}"#;
        assert_eq!(after(&path, delete).unwrap(), "y");
    }
}
