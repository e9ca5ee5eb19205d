//! A program's arguments read every way its grammar allows: an option the grammar does
//! not know, or one whose value is optional, may take the next word or not (decision 0053).

use crate::argv;
use crate::decide::{Context, Guard, Walk};
use crate::rules::{Program, Role};

impl Guard<'_> {
    /// A program's arguments, read as its grammar reads them. Where an option's reading
    /// is not certain (one an exact grammar does not know, or one whose value is optional),
    /// every reading is taken: the one where each is a flag decides as before, the others
    /// (the option takes the next word) are speculative, refused only where a mesh name is
    /// the target there (decision 0053).
    pub(in crate::decide) fn program_args(
        &self,
        spec: &Program,
        parent: Option<&Program>,
        args: &[String],
        cx: Context,
        walk: &mut Walk,
    ) {
        let start = walk.candidates.len();
        let scanned = argv::scan(&spec.syntax, args);
        let ambiguous = argv::ambiguous(&spec.syntax, &scanned);
        self.reading(spec, parent, scanned, cx.clone(), walk);
        for valued in argv::readings(&ambiguous) {
            let scanned = argv::scan_as(&spec.syntax, args, &valued);
            walk.speculative += 1;
            self.reading(spec, parent, scanned, cx.clone(), walk);
            walk.speculative -= 1;
        }
        // `ssh -J bastion render cmd`: the destination is the target, the jump is reached
        // on the way; a refusal names the destination first.
        walk.candidates[start..].sort_by_key(|c| c.role == Role::Jump);
    }
}
