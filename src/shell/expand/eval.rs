//! Parameter operations and arithmetic, computed by [`crate::bash_eval`] exactly as bash
//! would, or unknown: never a near value (issue 13).

use super::*;
use crate::bash_eval::{Part, Value, arith, param};
use shuck_ast::{PatternPart, PatternPartNode};

/// Values past which an operation's alternatives are not worked out one by one.
const MAX_OPERATED: usize = 16;

impl Walker<'_> {
    /// What the walk knows of a variable: each value it may hold, `None` for none known.
    pub(crate) fn value_set(&self, name: &str) -> Option<Vec<Value>> {
        let values = self.vars.get(name).filter(|v| !v.is_empty())?;
        (values.len() <= MAX_OPERATED)
            .then(|| values.iter().map(|v| Value::from_marked(v)).collect())
    }

    /// Applies `op` to every value the variable may hold.
    pub(crate) fn each_value(&self, name: &str, op: impl Fn(&str) -> Value) -> Vec<String> {
        match self.value_set(name) {
            Some(values) => values
                .iter()
                .map(|v| match v {
                    Value::Known(text) => op(text).into_marked(),
                    Value::Unknown => UNKNOWN.to_string(),
                })
                .collect(),
            None => vec![UNKNOWN.to_string()],
        }
    }

    /// A word used as a pattern or replacement: quoted text literal, unquoted text and
    /// unquoted expansions' values active (bash expands them, then matches).
    pub(crate) fn pattern_word(&mut self, word: &Word) -> Vec<Part> {
        let mut out = Vec::new();
        for part in &word.parts {
            match &part.kind {
                WordPart::Literal(text) => {
                    bare_with_escapes(literal(text, self.src, part.span), &mut out)
                }
                WordPart::SingleQuoted { .. } | WordPart::DoubleQuoted { .. } => {
                    out.push(self.part_value(part).map_or(Part::Unknown, Part::Quoted));
                }
                _ => out.push(self.part_value(part).map_or(Part::Unknown, Part::Bare)),
            }
        }
        out
    }

    /// `${x#p}` and kin: the pattern's parts from shuck's pattern tree.
    pub(crate) fn pattern(&mut self, pattern: &shuck_ast::Pattern) -> Vec<Part> {
        let mut out = Vec::new();
        for node in &pattern.parts {
            let PatternPartNode { kind, span } = node;
            match kind {
                PatternPart::Literal(text) => {
                    bare_with_escapes(text.as_str(self.src, *span), &mut out)
                }
                PatternPart::AnyString => out.push(Part::Bare("*".into())),
                PatternPart::AnyChar => out.push(Part::Bare("?".into())),
                PatternPart::CharClass(class) => out.push(Part::Bare(class.slice(self.src).into())),
                // extglob groups depend on a shell option: unknown, but their
                // substitutions run all the same (`@($(ssh db))`).
                PatternPart::Group { patterns, .. } => {
                    for inner in patterns {
                        self.pattern(inner);
                    }
                    out.push(Part::Unknown);
                }
                PatternPart::Word(word) => out.extend(self.pattern_word(word)),
            }
        }
        out
    }

    /// One part alone, when it has exactly one known value.
    fn part_value(&mut self, part: &WordPartNode) -> Option<String> {
        let mut pieces = vec![Piece::default()];
        self.parts(std::slice::from_ref(part), false, &mut pieces);
        match pieces.as_slice() {
            [one] if !one.text.contains(UNKNOWN) && !one.text.contains(SPLIT) => {
                Some(literal_globs(one.text.clone()))
            }
            _ => None,
        }
    }

    /// `${a[i]}`: the element, when the command assigned the array in order and `i`
    /// evaluates; unknown otherwise (its subscript's substitutions still run).
    pub(crate) fn element(&mut self, reference: &shuck_ast::VarRef) -> Vec<String> {
        let name = reference.name.as_str();
        let Some(word) = reference.subscript.as_ref().and_then(|s| s.word_ast()) else {
            return self.variable(name);
        };
        let index = self.arith_int(word);
        match (index, self.arrays.get(name)) {
            (Some(i), Some(elements)) => {
                let at = if i < 0 { elements.len() as i64 + i } else { i };
                usize::try_from(at)
                    .ok()
                    .and_then(|at| elements.get(at))
                    .map_or_else(|| vec![UNKNOWN.to_string()], |e| vec![e.clone()])
            }
            _ => vec![UNKNOWN.to_string()],
        }
    }

    /// `${x:off:len}`: offset and length are arithmetic.
    pub(crate) fn slice(
        &mut self,
        name: &str,
        offset: &Word,
        length: Option<&Word>,
    ) -> Vec<String> {
        let off = self.arith_int(offset);
        let len = length.map(|w| self.arith_int(w));
        let (Some(off), Some(len)) = (off, len.map_or(Some(None), |l| l.map(Some))) else {
            return vec![UNKNOWN.to_string()];
        };
        self.each_value(name, |v| param::substring(v, off, len))
    }

    /// A word's arithmetic value, when it has one known value and assigns nothing.
    fn arith_int(&mut self, word: &Word) -> Option<i64> {
        match self.joined(word).as_slice() {
            [text] if !text.contains(UNKNOWN) => arith::eval_int(text, &|n| self.lookup(n)),
            _ => None,
        }
    }

    /// A variable for arithmetic: one known value, unknown otherwise (an unassigned name
    /// may come from the environment, so it is not taken as unset).
    pub(crate) fn lookup(&self, name: &str) -> Option<Value> {
        Some(match self.value_set(name).as_deref() {
            Some([one]) => one.clone(),
            _ => Value::Unknown,
        })
    }

    /// `$(( … ))`: its value, and the variables it sets take theirs.
    /// bash reads `$((ssh db) )` as `$( (ssh db) )`: an arithmetic expansion that does not
    /// parse and holds a parenthesis may be commands bash runs, so the walk is incomplete.
    pub(crate) fn misread_arithmetic(&mut self, expression: &shuck_ast::SourceText, parsed: bool) {
        if !parsed && expression.slice(self.src).contains(['(', ')']) {
            self.incomplete = Some("an arithmetic expansion could not be read".into());
        }
    }

    pub(crate) fn arithmetic(&mut self, expression: &Word) -> String {
        let texts = self.joined(expression);
        let [text] = texts.as_slice() else {
            return UNKNOWN.to_string();
        };
        if text.contains(UNKNOWN) {
            return UNKNOWN.to_string();
        }
        match arith::evaluate(text, &|n| self.lookup(n)) {
            Some(outcome) => {
                for (name, value) in outcome.assigned {
                    let again = (self.loops > 0).then(|| UNKNOWN.to_string());
                    self.assign(name, std::iter::once(value.to_string()).chain(again));
                }
                outcome.value.to_string()
            }
            None => UNKNOWN.to_string(),
        }
    }
}

/// Unquoted pattern text: a backslash makes the next character literal.
fn bare_with_escapes(raw: &str, out: &mut Vec<Part>) {
    let mut bare = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if !bare.is_empty() {
                out.push(Part::Bare(std::mem::take(&mut bare)));
            }
            if let Some(next) = chars.next() {
                out.push(Part::Quoted(next.to_string()));
            }
        } else {
            bare.push(c);
        }
    }
    if !bare.is_empty() {
        out.push(Part::Bare(bare));
    }
}

impl Walker<'_> {
    /// `${name OP operand}`: the default forms give every value they may take; the
    /// pattern and case forms are computed on each known value.
    pub(crate) fn operation(
        &mut self,
        name: &str,
        operator: &ParameterOp,
        operand: Option<&Word>,
    ) -> Vec<String> {
        use param::{Anchor, Case, Trim};
        let trim = |this: &mut Self, pattern: &shuck_ast::Pattern, trim: Trim| {
            let parts = this.pattern(pattern);
            this.each_value(name, |v| param::remove(v, &parts, trim))
        };
        let case = |this: &mut Self, case: Case| {
            let parts = operand.map(|w| this.pattern_word(w)).unwrap_or_default();
            this.each_value(name, |v| param::case(v, case, &parts))
        };
        match operator {
            ParameterOp::UseDefault | ParameterOp::AssignDefault | ParameterOp::Error => {
                let operand_values = operand.map(|w| self.joined(w));
                let mut values = self.vars.get(name).cloned().unwrap_or_default();
                values.extend(operand_values.unwrap_or_default());
                if values.is_empty() {
                    vec![UNKNOWN.to_string()]
                } else {
                    values
                }
            }
            ParameterOp::UseReplacement => {
                let operand_values = operand.map(|w| self.joined(w));
                match (
                    self.vars.get(name).filter(|v| !v.is_empty()),
                    operand_values,
                ) {
                    (Some(_), Some(values)) => values,
                    _ => vec![UNKNOWN.to_string()],
                }
            }
            ParameterOp::RemovePrefixShort { pattern } => trim(self, pattern, Trim::ShortestPrefix),
            ParameterOp::RemovePrefixLong { pattern } => trim(self, pattern, Trim::LongestPrefix),
            ParameterOp::RemoveSuffixShort { pattern } => trim(self, pattern, Trim::ShortestSuffix),
            ParameterOp::RemoveSuffixLong { pattern } => trim(self, pattern, Trim::LongestSuffix),
            ParameterOp::ReplaceFirst {
                pattern,
                replacement_word_ast,
                ..
            }
            | ParameterOp::ReplaceAll {
                pattern,
                replacement_word_ast,
                ..
            } => {
                let mut parts = self.pattern(pattern);
                let anchor = match parts.first_mut() {
                    _ if matches!(operator, ParameterOp::ReplaceAll { .. }) => Anchor::All,
                    Some(Part::Bare(text)) if text.starts_with('#') => {
                        text.remove(0);
                        Anchor::Start
                    }
                    Some(Part::Bare(text)) if text.starts_with('%') => {
                        text.remove(0);
                        Anchor::End
                    }
                    _ => Anchor::First,
                };
                let replacement = self.pattern_word(replacement_word_ast);
                self.each_value(name, |v| param::replace(v, &parts, &replacement, anchor))
            }
            ParameterOp::UpperFirst => case(self, Case::UpperFirst),
            ParameterOp::UpperAll => case(self, Case::UpperAll),
            ParameterOp::LowerFirst => case(self, Case::LowerFirst),
            ParameterOp::LowerAll => case(self, Case::LowerAll),
        }
    }
}
