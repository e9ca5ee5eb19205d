//! Reading one rules file with every key checked. Shared with `build.rs`, which includes
//! this file: a built-in file that does not read fails the build, so no release can ship a
//! family that guards nothing; an operator's file that does not read is an error.

use super::schema::RulesFile;

/// The rules in `text`, or the TOML parser's words on its first mistake, with its line.
pub(crate) fn parse(name: &str, text: &str) -> Result<RulesFile, TomlError> {
    toml::from_str(text).map_err(|e| TomlError {
        file: name.to_string(),
        line: e.span().map(|s| line_of(text, s.start)).unwrap_or(0),
        message: e.message().trim().to_string(),
    })
}

/// A rules file that is not TOML of the rules' shape: where, and the TOML parser's own
/// message (free text: the parser's, not ours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TomlError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// The 1-based line of byte `at` in `text`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_built_in_file_is_refused_with_its_line() {
        let broken = "[[program]]\nnames = [\"nomad\"]\nlong_valeu = [\"address\"]\n";
        let err = parse("nomad.toml", broken).err().unwrap();
        assert_eq!(
            err.to_string(),
            "nomad.toml:3: unknown field `long_valeu`, expected one of `names`, `over`, \
             `options`, `env`, `operands`, `inert`, `subcommand`, `parent_subcommands`, \
             `same_as`, `ranks_as`, `only_by_target`, `replace`, `methods`, `short_value`, `long_value`, \
             `stop_at_operand`, `options_after_first_operand`, `single_dash_long`, \
             `long_two_values`, `short_flag`, `long_flag`, `optional_value`, `abbreviations`"
        );
    }

    #[test]
    fn every_built_in_file_reads() {
        for (name, text) in super::super::BUILT_IN {
            parse(name, text).unwrap();
        }
    }
}
