//! How a program spells its options: the option syntax every rules table shares.

use serde::Deserialize;

/// How a program spells its options.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Syntax {
    /// Short options that take a value, as one string of letters.
    #[serde(default)]
    pub short_value: String,
    /// Long options (without `--`) that take a value.
    #[serde(default)]
    pub long_value: Vec<String>,
    /// Options end at the first operand (POSIX getopt) instead of anywhere (GNU).
    #[serde(default)]
    pub stop_at_operand: bool,
    /// With `stop_at_operand`: options may still follow the first operand, and end at the
    /// second (`ssh host -J jump cmd`: ssh reads options again after the destination).
    #[serde(default)]
    pub options_after_first_operand: bool,
    /// Go's flag package: `-address=x` and `--address x` are one long option each (never a
    /// group of short ones), both named with one dash (`-address`).
    #[serde(default)]
    pub single_dash_long: bool,
    /// Long options (without `--`) that take two values (`bwrap --bind SRC DEST`).
    #[serde(default)]
    pub long_two_values: Vec<String>,
    /// Short options that take no value. A syntax that lists its flags is *exact*: an
    /// option in none of its lists is unknown (decision 0053).
    #[serde(default)]
    pub short_flag: String,
    /// Long options (without `--`) that take no value.
    #[serde(default)]
    pub long_flag: Vec<String>,
    /// Options whose value is optional (`journalctl -b [ID]`, `-n [N]`): the next word may be
    /// theirs or not, so both readings are taken.
    #[serde(default)]
    pub optional_value: Vec<String>,
    /// getopt_long: an unambiguous prefix of a long option is that option (`--uni` is
    /// `--unit`). Read only in an exact syntax, where every long option is known.
    #[serde(default)]
    pub abbreviations: bool,
}

impl Syntax {
    /// Whether the syntax lists every option the program has.
    pub fn exact(&self) -> bool {
        !self.short_flag.is_empty() || !self.long_flag.is_empty()
    }
}
