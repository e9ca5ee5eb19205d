//! Where an interpreter's string literal goes: into a call that only prints or logs it
//! (`print('ssh web')`, `console.log(…)`, perl's `print "…"`), which runs nothing, or
//! anywhere else, which may run it (decision 0054). What cannot be told is not printed:
//! a print to a file handle (`print $fh "…"`, `print(…, file=p.stdin)`) or into a pipe
//! (awk's `print "…" | "sh"`) may feed a program, so it is not a print here.

/// An open call or a statement the scanner is inside, with the print it belongs to.
#[derive(Clone, Copy)]
enum Frame {
    /// `name(`: the print `name` is, if it only prints its arguments.
    Call(Option<usize>),
    /// A statement that prints without parentheses (perl's `print "…"`, awk's `print`): it
    /// ends at `;`, a line's end, `}`, or a pipe or redirection.
    Statement(Option<usize>),
}

/// Follows the code outside its literals, one character at a time.
pub(crate) struct Sinks<'r> {
    prints: &'r [String],
    word: String,
    last_word: String,
    frames: Vec<Frame>,
    /// Calls opened past `MAX_FRAMES`, not followed: what is inside them may run.
    overflow: usize,
    /// Per print met: whether it still only prints (a pipe or file handle later says not).
    prints_only: Vec<bool>,
    /// A print statement has just begun: what comes first says whether it names a handle.
    fresh_statement: bool,
}

/// Frames deeper than this are not followed: what is inside counts as code.
const MAX_FRAMES: usize = 256;

impl<'r> Sinks<'r> {
    pub(crate) fn new(prints: &'r [String]) -> Self {
        Sinks {
            prints,
            word: String::new(),
            last_word: String::new(),
            frames: Vec::new(),
            overflow: 0,
            prints_only: Vec::new(),
            fresh_statement: false,
        }
    }

    /// A character outside any literal.
    pub(crate) fn other(&mut self, c: char) {
        if std::mem::take(&mut self.fresh_statement) && !c.is_whitespace() && c != '(' {
            // `print $fh "…"`, `print STDERR "…"`, `print {$out} …`: a handle, or a value
            // that is not a literal: what follows is not known to be only printed.
            self.spoil_statement();
        }
        if c.is_alphanumeric() || matches!(c, '_' | '.' | '$' | ':') {
            self.word.push(c);
            return;
        }
        self.end_word();
        match c {
            '(' => {
                let callee = std::mem::take(&mut self.last_word);
                // `print(("a"))`: a bare parenthesis is its enclosing call's.
                let print = if callee.is_empty() {
                    self.current()
                } else if self.is_print(&callee) {
                    self.new_print()
                } else {
                    None
                };
                self.push(Frame::Call(print));
            }
            ')' if self.overflow > 0 => self.overflow -= 1,
            ')' => {
                while let Some(frame) = self.frames.pop() {
                    if matches!(frame, Frame::Call(_)) {
                        break;
                    }
                }
                self.last_word.clear();
            }
            // `print('…', file=p.stdin)`: printed into something else.
            '=' if self.last_word == "file" => {
                if let Some(Frame::Call(Some(id))) = self.frames.last() {
                    self.prints_only[*id] = false;
                }
                self.last_word.clear();
            }
            ';' | '\n' | '}' | '|' | '>' => {
                if c == '|' {
                    self.spoil_statement();
                }
                while matches!(self.frames.last(), Some(Frame::Statement(_))) {
                    self.frames.pop();
                }
                self.last_word.clear();
            }
            c if c.is_whitespace() => {
                if self.is_print(&self.last_word) {
                    self.last_word.clear();
                    let print = self.new_print();
                    self.push(Frame::Statement(print));
                    self.fresh_statement = true;
                }
            }
            _ => self.last_word.clear(),
        }
    }

    /// At a literal's opening quote: the print it is given to, if any.
    pub(crate) fn literal(&mut self) -> Option<usize> {
        self.fresh_statement = false;
        self.end_word();
        self.last_word.clear();
        self.current()
    }

    /// Whether the print a literal was given to only prints, now the code is read whole.
    pub(crate) fn only_printed(&self, print: Option<usize>) -> bool {
        print.is_some_and(|id| self.prints_only.get(id).copied().unwrap_or(false))
    }

    fn current(&self) -> Option<usize> {
        if self.overflow > 0 {
            return None;
        }
        match self.frames.last() {
            Some(Frame::Call(print) | Frame::Statement(print)) => *print,
            None => None,
        }
    }

    fn new_print(&mut self) -> Option<usize> {
        self.prints_only.push(true);
        Some(self.prints_only.len() - 1)
    }

    fn spoil_statement(&mut self) {
        if let Some(Frame::Statement(Some(id))) = self.frames.last() {
            self.prints_only[*id] = false;
        }
    }

    fn is_print(&self, callee: &str) -> bool {
        !callee.is_empty() && self.prints.iter().any(|p| p == callee)
    }

    fn end_word(&mut self) {
        if !self.word.is_empty() {
            self.last_word = std::mem::take(&mut self.word);
        }
    }

    fn push(&mut self, frame: Frame) {
        if self.frames.len() < MAX_FRAMES {
            self.frames.push(frame);
        } else if matches!(frame, Frame::Call(_)) {
            self.overflow += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::interpreter::literals_that_may_run;

    fn may_run(code: &str, prints: &[&str], backticks_run: bool) -> Vec<String> {
        let prints: Vec<String> = prints.iter().map(|p| p.to_string()).collect();
        let runs: Vec<String> = ["os.system", "execSync"]
            .into_iter()
            .chain(backticks_run.then_some("`"))
            .map(String::from)
            .collect();
        literals_that_may_run(code, &[], &prints, &runs)
    }

    #[test]
    fn a_printed_literal_that_interpolates_code_may_run() {
        let printed = may_run("print(f\"{os.system('ssh web')}\")", &["print"], false);
        // The literal, then the literals inside it.
        assert_eq!(printed, ["{os.system('ssh web')}", "ssh web"]);
        let template = may_run("console.log(`${x('ssh web')}`)", &["console.log"], false);
        assert_eq!(template, ["${x('ssh web')}", "ssh web"]);
    }

    #[test]
    fn a_literal_only_printed_is_data() {
        let python = ["print", "logging.info"];
        assert_eq!(
            may_run("print('ssh web'); os.system('make')", &python, false),
            ["make"]
        );
        assert_eq!(
            may_run("logging.info('ssh ' + 'web')", &python, false),
            Vec::<String>::new()
        );
        // Nested: the innermost call decides.
        assert_eq!(
            may_run("print(os.popen('ssh web').read())", &python, false),
            ["ssh web"]
        );
        // Assigned, then printed and run: not known to be only printed.
        assert_eq!(
            may_run("c = 'ssh web'; print(c); os.system(c)", &python, false),
            ["ssh web"]
        );
    }

    #[test]
    fn a_print_into_a_handle_or_pipe_may_run() {
        let python = ["print"];
        assert_eq!(
            may_run("print('ssh web', file=p.stdin)", &python, false),
            ["ssh web"]
        );
        let perl = ["print"];
        assert_eq!(may_run("print $fh \"ssh web\"", &perl, true), ["ssh web"]);
        assert_eq!(
            may_run("print \"ssh web\"", &perl, true),
            Vec::<String>::new()
        );
        assert_eq!(may_run("print `ssh web`", &perl, true), ["ssh web"]);
        let awk = ["print"];
        assert_eq!(
            may_run("BEGIN { print \"ssh web\" | \"sh\" }", &awk, false),
            ["ssh web", "sh"]
        );
    }

    #[test]
    fn calls_too_deep_to_follow_may_run() {
        let code = format!("print({}'ssh web'{})", "(".repeat(300), ")".repeat(300));
        assert_eq!(may_run(&code, &["print"], false), ["ssh web"]);
    }
}
