//! Assignments (`x = e`, `x op= e`) and `++`/`--`, as bash's expr.c applies them: the
//! variable's value is read before the right side, the change is recorded for later reads
//! and for the caller, and nothing changes on a side bash does not evaluate.

use super::arith::Parser;
use super::arith_ops::apply;

/// Longest first, so `<<=` is not read as `<`.
const ASSIGNMENTS: [&str; 11] = [
    "<<=", ">>=", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "=",
];

impl Parser<'_> {
    /// `name op= expression` (right to left), or else a conditional expression.
    pub(super) fn assign(&mut self) -> Option<i64> {
        self.skip_blanks();
        let start = self.i;
        let name_len = self.s[start..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        let name = std::str::from_utf8(&self.s[start..start + name_len]).ok()?;
        if name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            self.i = start + name_len;
            self.skip_blanks();
            let rest = &self.s[self.i..];
            let op = ASSIGNMENTS.iter().find(|op| {
                rest.starts_with(op.as_bytes()) && !(**op == "=" && rest.get(1) == Some(&b'='))
            });
            if let Some(op) = op {
                self.i += op.len();
                return self.assign_to(name, op);
            }
        }
        self.i = start;
        self.ternary()
    }

    fn assign_to(&mut self, name: &str, op: &str) -> Option<i64> {
        // bash reads the variable (as an expression) even for `=`: an unknown or invalid
        // value is unknown here too.
        let current = self.variable(name)?;
        let right = self.assign()?;
        let value = match op.strip_suffix('=').filter(|o| !o.is_empty()) {
            Some(binary) => apply(binary, current, right, self.noeval > 0)?,
            None => right,
        };
        self.set(name, value)?;
        Some(value)
    }

    /// `++x`, `--x`: the new value.
    pub(super) fn pre_increment(&mut self) -> Option<i64> {
        let step = if self.eat_exact("++") {
            1
        } else {
            self.eat_exact("--").then_some(-1)?
        };
        self.skip_blanks();
        let start = self.i;
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.i += 1;
        }
        let name = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return None; // `++5`, `--(x)`: bash's reading is not worked out
        }
        let value = self.variable(name)?.wrapping_add(step);
        self.set(name, value)?;
        Some(value)
    }

    /// `x++`, `x--` after the name was read as `value`: the old value.
    pub(super) fn post_increment(&mut self, name: &str, value: i64) -> Option<i64> {
        let step = if self.eat_exact("++") {
            1
        } else {
            self.eat_exact("--").then_some(-1)?
        };
        self.set(name, value.wrapping_add(step))?;
        Some(value)
    }

    fn eat_exact(&mut self, op: &str) -> bool {
        if self.peek(op) {
            self.i += op.len();
            return true;
        }
        false
    }

    fn set(&mut self, name: &str, value: i64) -> Option<()> {
        if self.noeval > 0 {
            return Some(());
        }
        if !self.may_assign() {
            return None;
        }
        self.changes.push((name.to_string(), value));
        Some(())
    }
}
