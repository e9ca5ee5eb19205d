//! Arithmetic as bash's expr.c evaluates `$(( … ))`, offsets and lengths: 64-bit signed
//! integers that wrap, bash's precedence (unary minus binds tighter than `**`), `base#n`,
//! `0x`/octal literals, variables whose values are expressions in turn. An error bash
//! reports (division by zero, a negative exponent, a bad digit) is unknown, and so are
//! assignments and `++`/`--`, which change variables the walk tracks elsewhere.

use std::cell::Cell;

use super::Value;
use super::arith_ops::{LEVELS, apply, is_name, number};

/// How deep variables may refer to expressions that name variables.
const MAX_DEPTH: usize = 32;
/// How deep parentheses, unary operators, `**` and `?:` may nest in one expression.
const MAX_NESTING: usize = 256;
/// Operands read in all, variables' expressions included: `a=b+b`, `b=c+c`, … would
/// otherwise cost 2³² steps. Past it the value is unknown, not slow.
const MAX_STEPS: usize = 100_000;

/// A variable's value as the walk knows it: `None` when the variable is unset.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<Value>;

/// The expression's value in decimal, as `$(( … ))` prints it.
pub fn eval(expr: &str, lookup: Lookup) -> Value {
    match eval_int(expr, lookup) {
        Some(n) => Value::Known(n.to_string()),
        None => Value::Unknown,
    }
}

/// The expression's value, `None` when it is unknown.
pub fn eval_int(expr: &str, lookup: Lookup) -> Option<i64> {
    eval_at(expr, lookup, 0, &Cell::new(MAX_STEPS))
}

fn eval_at(expr: &str, lookup: Lookup, depth: usize, steps: &Cell<usize>) -> Option<i64> {
    if depth > MAX_DEPTH || expr.contains('\0') {
        return None;
    }
    let mut p = Parser {
        s: expr.as_bytes(),
        i: 0,
        lookup,
        depth,
        noeval: 0,
        nesting: 0,
        steps,
    };
    p.skip_blanks();
    if p.i == p.s.len() {
        return Some(0);
    }
    let value = p.comma()?;
    p.skip_blanks();
    (p.i == p.s.len()).then_some(value)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    lookup: Lookup<'a>,
    depth: usize,
    /// Inside the side of `&&`, `||` or `?:` that bash does not evaluate: errors there
    /// do not count.
    noeval: usize,
    nesting: usize,
    /// What remains of [`MAX_STEPS`], shared with the variables' expressions.
    steps: &'a Cell<usize>,
}

impl Parser<'_> {
    fn skip_blanks(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n'))
        {
            self.i += 1;
        }
    }

    fn peek(&mut self, op: &str) -> bool {
        self.skip_blanks();
        self.s[self.i..].starts_with(op.as_bytes())
    }

    /// The operator at this point, if it is `op` and not the start of a longer one.
    fn eat(&mut self, op: &str) -> bool {
        if !self.peek(op) {
            return false;
        }
        let next = self.s.get(self.i + op.len()).copied();
        let longer = match op {
            "|" => matches!(next, Some(b'|' | b'=')),
            "&" => matches!(next, Some(b'&' | b'=')),
            "<" => matches!(next, Some(b'<' | b'=')),
            ">" => matches!(next, Some(b'>' | b'=')),
            "*" => matches!(next, Some(b'*' | b'=')),
            "+" => matches!(next, Some(b'+' | b'=')),
            "-" => matches!(next, Some(b'-' | b'=')),
            "<<" | ">>" | "/" | "%" | "^" | "**" => next == Some(b'='),
            "!" => next == Some(b'='),
            _ => false,
        };
        if longer {
            return false;
        }
        self.i += op.len();
        true
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
        let mut value = self.ternary()?;
        while self.eat(",") {
            value = self.ternary()?;
        }
        Some(value)
    }

    fn ternary(&mut self) -> Option<i64> {
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

    fn unary(&mut self) -> Option<i64> {
        self.nested(Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Option<i64> {
        if self.peek("++") || self.peek("--") {
            return None;
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
            self.variable(token)?
        } else {
            return None;
        };
        // `x[…]`, `x = …`, `x += …`, `x++`: arrays and changes are not worked out here.
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

    fn variable(&self, name: &str) -> Option<i64> {
        if self.noeval > 0 {
            return Some(0);
        }
        match (self.lookup)(name) {
            None => Some(0),
            Some(Value::Unknown) => None,
            Some(Value::Known(text)) => eval_at(&text, self.lookup, self.depth + 1, self.steps),
        }
    }
}
