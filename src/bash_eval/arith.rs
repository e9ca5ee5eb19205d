//! Arithmetic as bash's expr.c evaluates `$(( … ))`, offsets and lengths: 64-bit signed
//! integers that wrap, bash's precedence (unary minus binds tighter than `**`), `base#n`,
//! `0x`/octal literals, variables whose values are expressions in turn. An error bash
//! reports (division by zero, a negative exponent, a bad digit) is unknown. Assignments
//! and `++`/`--` are worked out by [`evaluate`], which says what they changed.

use std::cell::Cell;

use super::Value;
use super::arith_ops::{LEVELS, apply, is_name, number};

// Assignments and `++`/`--`: `impl Parser` continues in arith_assign.rs.

/// How deep variables may refer to expressions that name variables.
const MAX_DEPTH: usize = 32;
/// How deep parentheses, unary operators, `**` and `?:` may nest in one expression.
const MAX_NESTING: usize = 256;
/// Operands read in all, variables' expressions included: `a=b+b`, `b=c+c`, … would
/// otherwise cost 2³² steps. Past it the value is unknown, not slow.
const MAX_STEPS: usize = 100_000;

/// A variable's value as the walk knows it: `None` when the variable is unset.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<Value>;

/// The expression's value in decimal, as `$(( … ))` prints it (unknown if it assigns:
/// see [`evaluate`]).
pub fn eval(expr: &str, lookup: Lookup) -> Value {
    match eval_int(expr, lookup) {
        Some(n) => Value::Known(n.to_string()),
        None => Value::Unknown,
    }
}

/// The expression's value, `None` when it is unknown or assigns a variable: a caller that
/// ignored the change would later read a stale value.
pub fn eval_int(expr: &str, lookup: Lookup) -> Option<i64> {
    evaluate(expr, lookup)
        .filter(|o| o.assigned.is_empty())
        .map(|o| o.value)
}

/// An expression's value and the variables it set (`x = 1`, `x += 2`, `x++`), in order;
/// bash stores each as the decimal text of the number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub value: i64,
    pub assigned: Vec<(String, i64)>,
}

pub fn evaluate(expr: &str, lookup: Lookup) -> Option<Outcome> {
    let steps = Cell::new(MAX_STEPS);
    let mut p = Parser::new(expr, lookup, 0, &steps, Vec::new())?;
    let value = p.whole()?;
    Some(Outcome {
        value,
        assigned: p.changes,
    })
}

pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
    lookup: Lookup<'a>,
    depth: usize,
    /// Inside the side of `&&`, `||` or `?:` that bash does not evaluate: errors there
    /// do not count, and nothing is assigned.
    pub(super) noeval: usize,
    nesting: usize,
    /// What remains of [`MAX_STEPS`], shared with the variables' expressions.
    steps: &'a Cell<usize>,
    /// Variables set so far, read before the lookup; only the outermost expression sets.
    pub(super) changes: Vec<(String, i64)>,
}

impl<'a> Parser<'a> {
    fn new(
        expr: &'a str,
        lookup: Lookup<'a>,
        depth: usize,
        steps: &'a Cell<usize>,
        changes: Vec<(String, i64)>,
    ) -> Option<Self> {
        if depth > MAX_DEPTH || expr.contains('\0') {
            return None;
        }
        Some(Parser {
            s: expr.as_bytes(),
            i: 0,
            lookup,
            depth,
            noeval: 0,
            nesting: 0,
            steps,
            changes,
        })
    }

    /// The whole text as one expression; empty is 0.
    fn whole(&mut self) -> Option<i64> {
        self.skip_blanks();
        if self.i == self.s.len() {
            return Some(0);
        }
        let value = self.comma()?;
        self.skip_blanks();
        (self.i == self.s.len()).then_some(value)
    }

    /// Whether this parser may assign: a variable's value read as an expression may not
    /// here (bash would let `x='y=1'; $((x))` set `y`).
    pub(super) fn may_assign(&self) -> bool {
        self.depth == 0
    }

    fn comma(&mut self) -> Option<i64> {
        self.nested(Self::comma_inner)
    }

    /// Runs `f` one level deeper, refusing past [`MAX_NESTING`] (the stack is finite).
    fn nested(&mut self, f: fn(&mut Self) -> Option<i64>) -> Option<i64> {
        if self.nesting >= MAX_NESTING {
            return None;
        }
        self.nesting += 1;
        let value = f(self);
        self.nesting -= 1;
        value
    }

    fn comma_inner(&mut self) -> Option<i64> {
        let mut value = self.assign()?;
        while self.eat(",") {
            value = self.assign()?;
        }
        Some(value)
    }

    pub(super) fn ternary(&mut self) -> Option<i64> {
        let cond = self.binary(0)?;
        if !self.eat("?") {
            return Some(cond);
        }
        let yes = self.guarded(cond == 0, Self::comma)?;
        if !self.eat(":") {
            return None;
        }
        let no = self.guarded(cond != 0, Self::ternary)?;
        Some(if cond != 0 { yes } else { no })
    }

    /// Parses with `f`, not evaluating when `skip`.
    fn guarded(&mut self, skip: bool, f: impl FnOnce(&mut Self) -> Option<i64>) -> Option<i64> {
        self.noeval += usize::from(skip);
        let value = f(self);
        self.noeval -= usize::from(skip);
        value
    }

    fn binary(&mut self, level: usize) -> Option<i64> {
        let Some(ops) = LEVELS.get(level) else {
            return self.power();
        };
        let mut left = self.binary(level + 1)?;
        'next: loop {
            for op in *ops {
                if !self.eat(op) {
                    continue;
                }
                let skip = match *op {
                    "&&" => left == 0,
                    "||" => left != 0,
                    _ => false,
                };
                let right = self.guarded(skip, |p| p.binary_next(level))?;
                left = apply(op, left, right, self.noeval > 0)?;
                continue 'next;
            }
            return Some(left);
        }
    }

    fn binary_next(&mut self, level: usize) -> Option<i64> {
        self.binary(level + 1)
    }

    /// `**`, right to left; its operands are unary expressions.
    fn power(&mut self) -> Option<i64> {
        self.nested(Self::power_inner)
    }

    fn power_inner(&mut self) -> Option<i64> {
        let base = self.unary()?;
        if !self.eat("**") {
            return Some(base);
        }
        let exp = self.power()?;
        if exp < 0 {
            return None; // bash reports it even where it does not evaluate
        }
        let (mut result, mut base, mut exp) = (1i64, base, exp);
        while exp != 0 {
            if exp & 1 == 1 {
                result = result.wrapping_mul(base);
            }
            exp >>= 1;
            base = base.wrapping_mul(base);
        }
        Some(result)
    }

    pub(super) fn unary(&mut self) -> Option<i64> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Option<i64> {
        if self.peek("++") || self.peek("--") {
            return self.pre_increment();
        }
        if self.eat("-") {
            return self.unary().map(i64::wrapping_neg);
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("!") {
            return self.unary().map(|v| i64::from(v == 0));
        }
        if self.eat("~") {
            return self.unary().map(|v| !v);
        }
        self.primary()
    }

    fn primary(&mut self) -> Option<i64> {
        self.steps.set(self.steps.get().checked_sub(1)?);
        self.skip_blanks();
        if self.eat("(") {
            let value = self.comma()?;
            return self.eat(")").then_some(value);
        }
        let start = self.i;
        let word = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'#' | b'@');
        while self.s.get(self.i).is_some_and(word) {
            self.i += 1;
        }
        let token = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        let first = *token.as_bytes().first()?;
        let value = if first.is_ascii_digit() {
            number(token)?
        } else if (first.is_ascii_alphabetic() || first == b'_') && is_name(token) {
            let value = self.variable(token)?;
            if self.peek("++") || self.peek("--") {
                return self.post_increment(token, value);
            }
            value
        } else {
            return None;
        };
        // `x[…]`; an assignment that does not start the expression (`1 + x = 2`, which
        // bash reads its own way); `1++`.
        self.skip_blanks();
        let rest = &self.s[self.i..];
        let assigns = rest.first() == Some(&b'=') && rest.get(1) != Some(&b'=');
        let op_assigns = ["*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|="]
            .iter()
            .any(|op| rest.starts_with(op.as_bytes()));
        if rest.first() == Some(&b'[')
            || assigns
            || op_assigns
            || self.peek("++")
            || self.peek("--")
        {
            return None;
        }
        Some(value)
    }

    pub(super) fn variable(&self, name: &str) -> Option<i64> {
        if self.noeval > 0 {
            return Some(0);
        }
        if let Some((_, value)) = self.changes.iter().rev().find(|(n, _)| n == name) {
            return Some(*value);
        }
        match (self.lookup)(name) {
            None => Some(0),
            Some(Value::Unknown) => None,
            Some(Value::Known(text)) => {
                let changes = self.changes.clone();
                Parser::new(&text, self.lookup, self.depth + 1, self.steps, changes)?.whole()
            }
        }
    }
}
