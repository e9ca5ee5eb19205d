//! What a `<placeholder>` of a usage or a `replaces` shape stands for.

/// A usage's or a shape's `<name>`, typed: the mesh objects the catalog knows, the command
/// a target would run, and the parts of a copy.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Placeholder {
    Machine,
    Module,
    Container,
    Unit,
    /// The whole command the target would run, shell-quoted.
    Command,
    /// What a copy copies from.
    Source,
    /// The path on the machine a copy goes to.
    Path,
    /// Any other `<name>`: any one word in a shape, unknown in a usage.
    Other(String),
}

impl Placeholder {
    pub fn parse(name: &str) -> Placeholder {
        match name {
            "machine" => Placeholder::Machine,
            "module" => Placeholder::Module,
            "container" => Placeholder::Container,
            "unit" => Placeholder::Unit,
            "command" => Placeholder::Command,
            "source" => Placeholder::Source,
            "path" => Placeholder::Path,
            other => Placeholder::Other(other.to_string()),
        }
    }

    /// A kind of mesh object the catalog names.
    pub fn is_object(&self) -> bool {
        matches!(
            self,
            Placeholder::Machine | Placeholder::Module | Placeholder::Container | Placeholder::Unit
        )
    }

    /// `<machine>` from `<machine>`; `None` for a literal word.
    pub fn in_word(word: &str) -> Option<Placeholder> {
        word.strip_prefix('<')
            .and_then(|w| w.strip_suffix('>'))
            .map(Placeholder::parse)
    }
}
