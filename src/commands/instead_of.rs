//! `mesh-guard instead-of`: the "instead of" table for the agent's instructions.

use crate::app::load_catalog;

use crate::catalog::Catalog;
use crate::cli::TableFormat;
use crate::config::Paths;
use crate::error::exit;

pub fn run(paths: &Paths, format: TableFormat, mcp: bool) -> i32 {
    let catalog = match load_catalog(paths) {
        Ok(c) => c,
        Err(e) => {
            errln!("{e}");
            return e.exit_code();
        }
    };
    out!("{}", instead_of_table(&catalog, format));
    // JSON stays a list of rows for programs; the markdown is for an agent to read.
    if mcp && format == TableFormat::Markdown {
        outln!("\n{INSTEAD_OF_SEARCH}");
    }
    exit::OK
}

/// Under the table, where the agent has the MCP server.
pub const INSTEAD_OF_SEARCH: &str = "For a command not in this table, ask the MCP tool `mesh_search`: it names the mesh tool that replaces a shell command, usage filled in.";

/// The "instead of" table: every `replaces` shape → the tool and its usage, filled as a
/// refusal fills it (`instead::table`).
pub fn instead_of_table(catalog: &Catalog, format: TableFormat) -> String {
    match format {
        TableFormat::Json => {
            let list: Vec<_> = crate::instead::table(catalog)
                .iter()
                .map(|r| {
                    serde_json::json!({"instead_of": r.instead_of, "tool": r.tool, "usage": r.usage})
                })
                .collect();
            format!("{}\n", serde_json::Value::Array(list))
        }
        TableFormat::Markdown => crate::instead::markdown(catalog),
    }
}
