//! Reading one rules file with every key checked. Shared with `build.rs`, which includes
//! this file: a built-in file that does not read fails the build, so no release can ship a
//! family that guards nothing; an operator's file that does not read is an error.

use super::schema::RulesFile;

/// The rules in `text`, or `NAME:LINE: what is wrong` for its first mistake.
pub(crate) fn parse(name: &str, text: &str) -> Result<RulesFile, String> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
        format!("{name}:{line}: {}", e.message().trim())
    })
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
            err,
            "nomad.toml:3: unknown field `long_valeu`, expected one of `names`, `over`, \
             `options`, `env`, `operands`, `inert`, `subcommand`, `parent_subcommands`, \
             `same_as`, `ranks_as`, `only_by_target`, `replace`, `methods`, `short_value`, `long_value`, \
             `stop_at_operand`, `options_after_first_operand`, `single_dash_long`, \
             `long_two_values`, `short_flag`, `long_flag`, `optional_value`, `abbreviations`"
        );
    }

    #[test]
    fn every_built_in_file_reads() {
        for (name, text, _) in super::super::BUILT_IN {
            parse(name, text).unwrap();
        }
    }
}
