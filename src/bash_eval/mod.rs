//! Bash's own evaluation of the expansions a command builds its words with: brace
//! expansion, parameter operations, arithmetic, `printf` and backslash escapes.
//!
//! Every function here is pure (no files, environment or processes) and answers in one of
//! two ways: the value bash would compute, exactly, or [`Value::Unknown`]. It never answers
//! a near value: a guard that trusts `${h%.evil}` to be `atlas.evil` lets `atlas` through
//! (issue 13). Where bash's result depends on something this module does not see (the
//! locale for non-ASCII text, shell options such as `extglob`, array attributes), the
//! answer is Unknown.
//!
//! The walk (src/shell) keeps a word as text with [`crate::shell::UNKNOWN`] for parts it
//! cannot know; [`Value::from_marked`] and [`Value::into_marked`] convert between the two.
//!
//! How the walk calls it, in bash's order of expansions:
//! - Brace expansion first, on the word's parts before anything else is expanded:
//!   literal text unquoted is [`Part::Bare`], quoted or escaped text and every expansion's
//!   place is [`Part::Quoted`] (its value, if known) or [`Part::Unknown`]; then
//!   [`brace::expand`]. `Err(Value::Unknown)` means the whole word is unknown.
//! - `${x op …}`: the operand words as parts (a quoted `"*"` or `"&"` is literal), the
//!   variable's value from the walk, then [`param`]'s function for the operator; offsets
//!   and lengths through [`arith::eval_int`] first.
//! - `$(( … ))` and `(( … ))`: the expression's text after its own expansions, to
//!   [`arith::evaluate`] (value and the variables it set, which the walk must apply) or
//!   [`arith::eval`] (unknown when the expression assigns), with a lookup that answers
//!   `None` for an unset variable.
//! - `printf FMT ARGS…`, `echo -e ARGS…`, `$'…'`: [`printf::printf`], [`escape::echo_e`]
//!   per argument (a `stop` ends the output), [`escape::ansi_c`].

pub mod arith;
mod arith_assign;
mod arith_ops;
pub mod brace;
mod brace_seq;
pub mod escape;
pub mod glob;
pub mod param;
pub mod printf;
mod printf_number;

#[cfg(test)]
mod tests;

/// What an expansion yields: bash's exact text, or nothing trustworthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Known(String),
    Unknown,
}

impl Value {
    pub fn known(text: impl Into<String>) -> Self {
        Value::Known(text.into())
    }

    pub fn as_known(&self) -> Option<&str> {
        match self {
            Value::Known(s) => Some(s),
            Value::Unknown => None,
        }
    }

    /// The walk's form: a text holding the NUL marker is unknown (bash strings hold no NUL).
    pub fn from_marked(text: &str) -> Self {
        if text.contains('\0') {
            Value::Unknown
        } else {
            Value::Known(text.to_string())
        }
    }

    /// Back to the walk's form: unknown becomes a lone NUL marker.
    pub fn into_marked(self) -> String {
        match self {
            Value::Known(s) => s,
            Value::Unknown => "\0".to_string(),
        }
    }
}

/// One piece of a word as the walk sees it after quote removal. Brace expansion and
/// patterns need to know which characters were quoted: `"{a,b}"` and `"*"` are literal.
///
/// Where an expansion's value goes depends on the step, because bash expands braces
/// before variables but patterns after them (checked against bash 5.2):
/// - in a word for [`brace::expand`], every expansion's value is `Quoted` (`y=a,b;
///   {$y,c}` gives `a,b c`); and an unbraced `$name` directly followed by bare text is
///   `Unknown`, since bash reads the name again after the braces (`$x{a,b}` is
///   `$xa $xb`);
/// - in a pattern or a replacement for [`param`], an unquoted expansion's value is
///   `Bare` (`p='b*'; ${x/$p/<&>}` matches `b*` and inserts the match), a quoted one
///   `Quoted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Unquoted text: braces, glob characters and `&` are active.
    Bare(String),
    /// Quoted or backslash-escaped text: always literal.
    Quoted(String),
    /// A piece whose value cannot be known.
    Unknown,
}

/// The text of parts when every one is known, `None` otherwise.
pub fn known_text(parts: &[Part]) -> Option<String> {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Bare(s) | Part::Quoted(s) => out.push_str(s),
            Part::Unknown => return None,
        }
    }
    Some(out)
}
