//! What both targets share: the built-in rules and the example catalog, loaded once.

use mesh_guard::catalog::{self, LazyCatalog};
use mesh_guard::config::Paths;
use mesh_guard::rules::Rules;
use std::path::PathBuf;

pub struct Fixture {
    pub paths: Paths,
    pub rules: Rules,
    pub catalog: LazyCatalog,
}

fn fixture() -> Fixture {
    {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let catalog_path = root.join("examples/catalog.toml");
        let catalog = catalog::load(&catalog_path).expect("the example catalog is valid");
        Fixture {
            paths: Paths {
                catalog: catalog_path,
                db: std::env::temp_dir().join("mesh-guard-fuzz.db"),
                rules: None,
            },
            rules: Rules::load(None).expect("the built-in rules load"),
            catalog: LazyCatalog::ready(catalog),
        }
    }
}

thread_local! {
    static FIXTURE: Fixture = fixture();
}

/// Decides one command the way the hook does; a refusal must carry a message.
pub fn decide(source: &str) {
    FIXTURE.with(|f| {
        let outcome = mesh_guard::app::decide(&f.paths, &f.rules, &f.catalog, source, None);
        if let mesh_guard::decide::Decision::Refuse(_) = outcome.decision {
            assert!(!outcome.message.is_empty(), "a refusal without a message");
            assert!(
                outcome.message.chars().count() < 1000,
                "a refusal message of 1,000 characters or more"
            );
        }
    })
}
