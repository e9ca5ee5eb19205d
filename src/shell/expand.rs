//! Word expansion as far as the command text tells: quotes and escapes removed, variables
//! assigned in the command substituted (every value they may hold), the rest [`UNKNOWN`].

mod brace;
mod eval;
mod text;
use text::*;

use super::walk::Walker;
use super::{MAX_ALTERNATIVES, Stdin, UNKNOWN};
use crate::bash_eval;
use shuck_ast::{
    BourneParameterExpansion, HeredocBodyPart, ParameterExpansionSyntax, ParameterOp, StmtSeq,
    Word, WordPart, WordPartNode,
};

/// Marks whitespace that came from an unquoted expansion: bash splits fields there.
pub(crate) const SPLIT: char = '\u{1}';
/// Unquoted glob characters, kept apart from quoted ones until the word's place is known:
/// in an argument an unmatched glob stays literal, but a globbed program word
/// (`/usr/bin/ss?`) runs whatever file matches, so it is unknown.
const GLOBS: [(char, char); 3] = [('\u{2}', '*'), ('\u{3}', '?'), ('\u{4}', '[')];

/// Glob marks back to the characters they stand for (an argument).
pub(crate) fn literal_globs(word: String) -> String {
    if !word.contains(|c| GLOBS.iter().any(|(mark, _)| *mark == c)) {
        return word;
    }
    word.chars()
        .map(|c| {
            GLOBS
                .iter()
                .find(|(mark, _)| *mark == c)
                .map_or(c, |(_, glob)| *glob)
        })
        .collect()
}

/// Glob marks to unknown (a program word).
pub(crate) fn unknown_globs(word: String) -> String {
    word.chars()
        .map(|c| {
            if GLOBS.iter().any(|(mark, _)| *mark == c) {
                UNKNOWN
            } else {
                c
            }
        })
        .collect()
}

/// One way a word may expand, before field splitting.
#[derive(Clone, Default)]
struct Piece {
    text: String,
    quoted: bool,
}

impl Walker<'_> {
    /// Every way `word` may expand, each a list of fields (usually one way, one field).
    pub(crate) fn fields(&mut self, word: &Word) -> Vec<Vec<String>> {
        let mut fields = self.fields_with_globs(word);
        for alternative in &mut fields {
            for field in alternative.iter_mut() {
                *field = literal_globs(std::mem::take(field));
            }
        }
        fields
    }

    /// As [`Self::fields`], with unquoted glob characters still marked.
    pub(crate) fn fields_with_globs(&mut self, word: &Word) -> Vec<Vec<String>> {
        if word.has_active_brace_expansion() {
            return self.brace_fields(word);
        }
        let mut pieces = vec![Piece::default()];
        self.parts(&word.parts, false, &mut pieces);
        pieces
            .into_iter()
            .map(|piece| {
                piece
                    .text
                    .split(SPLIT)
                    .filter(|f| piece.quoted || !f.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .collect()
    }

    /// Every value a word may take as one string (assignments, here-strings, loop lists).
    pub(crate) fn joined(&mut self, word: &Word) -> Vec<String> {
        self.fields(word).into_iter().map(|f| f.join(" ")).collect()
    }

    /// Every combination of the alternatives so far with those of the next word.
    pub(crate) fn product(
        &mut self,
        so_far: Vec<Vec<String>>,
        next: Vec<Vec<String>>,
    ) -> Vec<Vec<String>> {
        // Past the bound the word's value is unknown, which matters only where it is a
        // program or a target in a command that names the mesh (contract: unverifiable).
        if so_far.len() * next.len() > MAX_ALTERNATIVES {
            let mut first = so_far.into_iter().next().unwrap_or_default();
            first.push(UNKNOWN.to_string());
            return vec![first];
        }
        // Each prefix is moved into its last combination, not cloned: a simple command of
        // n words (one alternative each) is then built in O(n), not O(n²).
        let Some((last, others)) = next.split_last() else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(so_far.len() * next.len());
        for prefix in so_far {
            for fields in others {
                let mut words = prefix.clone();
                words.extend(fields.iter().cloned());
                out.push(words);
            }
            let mut words = prefix;
            words.extend(last.iter().cloned());
            out.push(words);
        }
        out
    }

    fn parts(&mut self, parts: &[WordPartNode], quoted: bool, pieces: &mut Vec<Piece>) {
        for part in parts {
            match &part.kind {
                WordPart::Literal(text) => {
                    let raw = literal(text, self.src, part.span);
                    let text = if quoted {
                        unescape_double(raw)
                    } else {
                        unescape_bare(raw)
                    };
                    append(pieces, &text);
                }
                WordPart::SingleQuoted { value, .. } => {
                    let raw = value.slice(self.src);
                    let text = if value.is_source_backed() {
                        strip_quotes(raw)
                    } else {
                        raw
                    };
                    append(pieces, text);
                    mark_quoted(pieces);
                }
                WordPart::DoubleQuoted { parts, .. } => {
                    self.parts(parts, true, pieces);
                    mark_quoted(pieces);
                }
                WordPart::Variable(name) => {
                    let values = self.variable(name.as_str());
                    self.append_values(pieces, values, quoted);
                }
                WordPart::CommandSubstitution { body, .. } => {
                    let value = self.substitution(body);
                    self.append_values(pieces, vec![value], quoted);
                }
                WordPart::ProcessSubstitution { body, .. } => {
                    let commands = self.nested(body);
                    let path = format!("/dev/fd/{}", self.next_fd);
                    self.next_fd = self.next_fd.saturating_sub(1).max(3);
                    // `bash <(echo 'ssh atlas')`: the file's content is that output.
                    if let Stdin::Text(text) = super::walk::output_of_body(body, &commands) {
                        self.files.insert(path.clone(), text);
                    }
                    append(pieces, &path);
                }
                WordPart::ArithmeticExpansion {
                    expression,
                    expression_ast,
                    expression_word_ast,
                    ..
                } => {
                    self.misread_arithmetic(expression, expression_ast.is_some());
                    let value = self.arithmetic(expression_word_ast);
                    self.append_values(pieces, vec![value], quoted);
                }
                WordPart::Parameter(expansion) => {
                    let values = match &expansion.syntax {
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Access {
                            reference,
                        }) if reference.subscript.is_none() => {
                            self.variable(reference.name.as_str())
                        }
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Access {
                            reference,
                        }) if reference.has_array_selector() => self.array(reference.name.as_str()),
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Access {
                            reference,
                        }) => self.element(reference),
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Operation {
                            reference,
                            operator,
                            operand_word_ast,
                            ..
                        }) if reference.subscript.is_none() => self.operation(
                            reference.name.as_str(),
                            operator,
                            operand_word_ast.as_deref(),
                        ),
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Slice {
                            reference,
                            offset_word_ast,
                            length_word_ast,
                            ..
                        }) if reference.subscript.is_none() => self.slice(
                            reference.name.as_str(),
                            offset_word_ast,
                            length_word_ast.as_deref(),
                        ),
                        ParameterExpansionSyntax::Bourne(BourneParameterExpansion::Length {
                            reference,
                        }) if reference.subscript.is_none() => {
                            self.each_value(reference.name.as_str(), bash_eval::param::length)
                        }
                        ParameterExpansionSyntax::Bourne(
                            BourneParameterExpansion::Transformation {
                                reference,
                                operator,
                            },
                        ) if reference.subscript.is_none() => {
                            let op = *operator;
                            self.each_value(reference.name.as_str(), |v| {
                                bash_eval::param::transform(v, op)
                            })
                        }
                        ParameterExpansionSyntax::Bourne(other) => {
                            if let Some(w) = other.operand_word_ast() {
                                self.fields(w);
                            }
                            vec![UNKNOWN.to_string()]
                        }
                        ParameterExpansionSyntax::Zsh(_) => vec![UNKNOWN.to_string()],
                    };
                    self.append_values(pieces, values, quoted);
                }
                WordPart::ParameterExpansion {
                    reference,
                    operator,
                    operand_word_ast,
                    ..
                } => {
                    let values = self.operation(
                        reference.name.as_str(),
                        operator,
                        operand_word_ast.as_deref(),
                    );
                    self.append_values(pieces, values, quoted);
                }
                WordPart::ArrayAccess(reference) if reference.has_array_selector() => {
                    let values = self.array(reference.name.as_str());
                    self.append_values(pieces, values, quoted);
                }
                WordPart::ArrayAccess(reference) => {
                    let values = self.element(reference);
                    self.append_values(pieces, values, quoted);
                }
                WordPart::IndirectExpansion {
                    operand_word_ast, ..
                } => {
                    if let Some(w) = operand_word_ast {
                        self.fields(w);
                    }
                    append(pieces, &UNKNOWN.to_string());
                }
                WordPart::Substring {
                    reference,
                    offset_word_ast,
                    length_word_ast,
                    ..
                } if reference.subscript.is_none() => {
                    let values = self.slice(
                        reference.name.as_str(),
                        offset_word_ast,
                        length_word_ast.as_deref(),
                    );
                    self.append_values(pieces, values, quoted);
                }
                WordPart::Substring {
                    offset_word_ast,
                    length_word_ast,
                    ..
                }
                | WordPart::ArraySlice {
                    offset_word_ast,
                    length_word_ast,
                    ..
                } => {
                    self.fields(offset_word_ast);
                    if let Some(w) = length_word_ast {
                        self.fields(w);
                    }
                    append(pieces, &UNKNOWN.to_string());
                }
                _ => append(pieces, &UNKNOWN.to_string()),
            }
        }
    }

    /// `"${name[@]}"`: an array's elements as separate words, when the command assigned it.
    fn array(&self, name: &str) -> Vec<String> {
        match self.arrays.get(name) {
            Some(elements) => vec![elements.join(&SPLIT.to_string())],
            None => self.variable(name),
        }
    }

    pub(crate) fn variable(&self, name: &str) -> Vec<String> {
        match self.vars.get(name) {
            Some(values) if !values.is_empty() => values.clone(),
            _ => vec![UNKNOWN.to_string()],
        }
    }

    /// A command substitution runs its commands; its value is known only when it is a
    /// lone `echo`/`printf` of known words.
    fn substitution(&mut self, body: &StmtSeq) -> String {
        let output = match self.file_shorthand(body) {
            Some(text) => text,
            None => super::walk::output_of_body(body, &self.nested(body)),
        };
        match output {
            // bash drops a substitution's trailing newlines.
            Stdin::Text(text) => text.trim_end_matches('\n').to_string(),
            Stdin::Bytes(bytes) => crate::shell::shell_text(&bytes).map_or_else(
                || UNKNOWN.to_string(),
                |text| text.trim_end_matches('\n').to_string(),
            ),
            _ => UNKNOWN.to_string(),
        }
    }

    fn append_values(&mut self, pieces: &mut Vec<Piece>, values: Vec<String>, quoted: bool) {
        if pieces.len() * values.len() > MAX_ALTERNATIVES {
            append(pieces, &UNKNOWN.to_string());
            return;
        }
        let values: Vec<String> = values
            .into_iter()
            .map(|v| {
                if quoted {
                    v
                } else {
                    v.split_whitespace()
                        .collect::<Vec<_>>()
                        .join(&SPLIT.to_string())
                }
            })
            .collect();
        if let [only] = values.as_slice() {
            append(pieces, only);
            return;
        }
        let mut out = Vec::with_capacity(pieces.len() * values.len());
        for piece in pieces.iter() {
            for v in &values {
                let mut p = piece.clone();
                p.text.push_str(v);
                out.push(p);
            }
        }
        *pieces = out;
    }

    /// The text a heredoc feeds, with expansions done when its delimiter is unquoted.
    pub(crate) fn heredoc(&mut self, heredoc: &shuck_ast::Heredoc) -> String {
        let mut text = String::new();
        for part in &heredoc.body.parts {
            match &part.kind {
                HeredocBodyPart::Literal(t) => text.push_str(literal(t, self.src, part.span)),
                HeredocBodyPart::Variable(name) => {
                    let values = self.variable(name.as_str());
                    text.push_str(&values.join(" "));
                }
                HeredocBodyPart::CommandSubstitution { body, .. } => {
                    let value = self.substitution(body);
                    text.push_str(&value);
                }
                HeredocBodyPart::ArithmeticExpansion {
                    expression,
                    expression_ast,
                    expression_word_ast,
                    ..
                } => {
                    self.misread_arithmetic(expression, expression_ast.is_some());
                    self.fields(expression_word_ast);
                    text.push(UNKNOWN);
                }
                HeredocBodyPart::Parameter(_) => text.push(UNKNOWN),
            }
        }
        text
    }
}
