//! `(( … ))` and `for (( … ))`: the commands their `$( )` run, and the variables they set.

use super::*;
use crate::bash_eval::arith;
use shuck_ast::{ArithmeticExpr, ArithmeticExprNode, ArithmeticLvalue, ArithmeticUnaryOp};

impl Walker<'_> {
    /// One arithmetic expression of a command: its substitutions walked (they run), its
    /// assignments applied exactly when the text is plain, unknown otherwise.
    pub(crate) fn arith_command(
        &mut self,
        span: Option<shuck_ast::Span>,
        expr: Option<&ArithmeticExprNode>,
    ) {
        let Some(span) = span else { return };
        let text = span.slice(self.src).to_string();
        let Some(expr) = expr else {
            // Not parsed: what it runs cannot be seen.
            if text.contains("$(") || text.contains('`') {
                self.incomplete = Some("an arithmetic expression could not be read".into());
            }
            return;
        };
        let mut targets = Vec::new();
        self.arith_node(expr, &mut targets);
        let plain = !text.contains(['$', '`', '"', '\'', '[']);
        let outcome = plain
            .then(|| arith::evaluate(&text, &|n| self.lookup(n)))
            .flatten();
        match outcome {
            Some(outcome) => {
                for (name, value) in outcome.assigned {
                    // In a loop it runs again on its own result: `i++` may be any count.
                    let again = (self.loops > 0).then(|| UNKNOWN.to_string());
                    self.assign(name, std::iter::once(value.to_string()).chain(again));
                }
            }
            None => {
                for name in targets {
                    self.assign(name, [UNKNOWN.to_string()]);
                }
            }
        }
    }

    fn arith_node(&mut self, node: &ArithmeticExprNode, targets: &mut Vec<String>) {
        match &node.kind {
            ArithmeticExpr::Number(_) | ArithmeticExpr::Variable(_) => {}
            ArithmeticExpr::Indexed { index, .. } => self.arith_node(index, targets),
            ArithmeticExpr::ShellWord(word) => {
                self.fields(word);
            }
            ArithmeticExpr::Parenthesized { expression } => self.arith_node(expression, targets),
            ArithmeticExpr::Unary { op, expr } => {
                if matches!(
                    op,
                    ArithmeticUnaryOp::PreIncrement | ArithmeticUnaryOp::PreDecrement
                ) {
                    lvalue_name(expr, targets);
                }
                self.arith_node(expr, targets);
            }
            ArithmeticExpr::Postfix { expr, .. } => {
                lvalue_name(expr, targets);
                self.arith_node(expr, targets);
            }
            ArithmeticExpr::Binary { left, right, .. } => {
                self.arith_node(left, targets);
                self.arith_node(right, targets);
            }
            ArithmeticExpr::Conditional {
                condition,
                then_expr,
                else_expr,
            } => {
                self.arith_node(condition, targets);
                self.arith_node(then_expr, targets);
                self.arith_node(else_expr, targets);
            }
            ArithmeticExpr::Assignment { target, value, .. } => {
                match target {
                    ArithmeticLvalue::Variable(name) => targets.push(name.as_str().to_string()),
                    ArithmeticLvalue::Indexed { name, index } => {
                        targets.push(name.as_str().to_string());
                        self.arith_node(index, targets);
                    }
                }
                self.arith_node(value, targets);
            }
        }
    }
}

fn lvalue_name(node: &ArithmeticExprNode, targets: &mut Vec<String>) {
    if let ArithmeticExpr::Variable(name) = &node.kind {
        targets.push(name.as_str().to_string());
    }
}
