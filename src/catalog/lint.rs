//! Warnings: what a valid catalog says that can never match, or matches more than its
//! writer may think. They do not make the catalog invalid.

use super::{CatalogError, CatalogFile, Cidr, Source};

/// The placeholders that match a word naming that kind of mesh object; any other matches
/// any one word, which in a `replaces` entry is most often a typo (`<machin>`).
const TYPED_PLACEHOLDERS: [&str; 4] = ["machine", "module", "container", "unit"];

pub(super) fn warnings(
    sources: &[Source],
    files: &[CatalogFile],
    guarded: &dyn Fn(&str) -> bool,
) -> Vec<CatalogError> {
    let mut warnings = Vec::new();
    for (source, file) in sources.iter().zip(files) {
        if let Some(mesh) = &file.mesh {
            for n in &mesh.get_ref().networks {
                if let Ok(cidr) = n.get_ref().parse::<Cidr>()
                    && cidr.has_host_bits()
                {
                    warnings.push(source.error(
                        Some(n.span().start),
                        format!(
                            "`{}` has host bits set: it is read as the network `{}`",
                            n.get_ref(),
                            cidr.network()
                        ),
                    ));
                }
            }
        }
        let tools = file.module.iter().flat_map(|m| &m.tool).chain(&file.verb);
        for tool in tools {
            for entry in &tool.replaces {
                replaces(source, entry, guarded, &mut warnings);
            }
        }
    }
    if files.iter().all(|f| f.machine.is_empty()) {
        warnings.push(CatalogError {
            file: sources.first().map(|s| s.path.clone()).unwrap_or_default(),
            line: None,
            message: "the catalog has no `[[machine]]`: no machine is guarded by name, only what `[mesh]` domains and networks cover".into(),
        });
    }
    warnings
}

fn replaces(
    source: &Source,
    entry: &toml::Spanned<String>,
    guarded: &dyn Fn(&str) -> bool,
    warnings: &mut Vec<CatalogError>,
) {
    let at = Some(entry.span().start);
    let mut words = entry.get_ref().split_whitespace();
    if let Some(program) = words.next() {
        let base = crate::argv::base_name(program);
        if !guarded(base) {
            warnings.push(source.error(
                at,
                format!(
                    "`{}`: no rule guards `{base}`, so the guard never refuses it and this entry never matches",
                    entry.get_ref()
                ),
            ));
        }
    }
    for word in words {
        if let Some(name) = word.strip_prefix('<').and_then(|w| w.strip_suffix('>'))
            && !TYPED_PLACEHOLDERS.contains(&name)
        {
            warnings.push(source.error(
                at,
                format!(
                    "`{}`: `{word}` is not a known placeholder (`<machine>`, `<module>`, `<container>`, `<unit>`); it matches any one word",
                    entry.get_ref()
                ),
            ));
        }
    }
}
