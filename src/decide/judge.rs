//! With the catalog: each candidate target resolved, the first that reaches the mesh refused.

use super::walk::flow;
use super::{
    Broken, Candidate, Decision, Guard, MAX_SOURCE_BYTES, PassReason, Refusal, Walk, Why, target,
};
use crate::catalog::{Catalog, MeshObject};
use crate::rule::Rule;
use crate::shell::UNKNOWN;

/// A decision and, for a refusal, the targets its walk found: a scoped override counts
/// them (decision 0015) without walking the command a second time.
#[derive(Debug)]
#[must_use]
pub struct Judged {
    pub decision: Decision,
    pub reached: Reached,
}

/// The places a refused command's walk named a target, resolved only when a scoped override
/// asks (`targets`): a refusal without one pays nothing for them.
#[derive(Debug, Default)]
pub struct Reached(Vec<Candidate>);

impl Guard<'_> {
    /// The decision, and for a refusal the targets the same walk found.
    pub fn judged(&self, source: &str) -> Judged {
        if source.len() > MAX_SOURCE_BYTES {
            return too_long(source);
        }
        // This frame stays on the stack under the whole walk, the deepest the hook goes:
        // what follows the walk is in `concluded`, so its locals are not in it.
        let mut walk = self.walk_command(source);
        self.concluded(source, &mut walk)
    }

    /// The decision once the walk is done: its refusal, its limits, a quick pass, or the
    /// candidates judged against the catalog.
    #[inline(never)]
    fn concluded(&self, source: &str, walk: &mut Walk) -> Judged {
        let refused = |refusal, reached| Judged {
            decision: Decision::Refuse(refusal),
            reached,
        };
        if let Some(refusal) = walk.refusal.take() {
            return refused(refusal, Reached(std::mem::take(&mut walk.candidates)));
        }
        if let Some(why) = walk.incomplete.take() {
            let refusal = Refusal::plain(Rule::Unverifiable, source, Why::Incomplete(why));
            return refused(refusal, Reached(std::mem::take(&mut walk.candidates)));
        }
        if self.quick_pass(walk) {
            return Judged {
                decision: Decision::Pass(PassReason::NotMesh),
                reached: Reached::default(),
            };
        }
        let catalog = match self.catalog.get() {
            Ok(catalog) => catalog,
            Err(errors) => {
                let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
                let refusal = Refusal::plain(
                    Rule::FailClosed,
                    source,
                    Why::Broken(Broken::Catalog(first)),
                );
                return refused(refusal, Reached(std::mem::take(&mut walk.candidates)));
            }
        };
        let decision = self.judge(catalog, source, walk);
        let reached = match decision {
            Decision::Refuse(_) => Reached(std::mem::take(&mut walk.candidates)),
            Decision::Pass(_) => Reached::default(),
        };
        Judged { decision, reached }
    }
}

/// Longer than the guard reads: refused unread.
#[cold]
#[inline(never)]
fn too_long(source: &str) -> Judged {
    let refusal = Refusal::plain(
        Rule::Unverifiable,
        &source[..source.floor_char_boundary(80)],
        Why::TooLong {
            kib: MAX_SOURCE_BYTES / 1024,
        },
    );
    Judged {
        decision: Decision::Refuse(refusal),
        reached: Reached::default(),
    }
}

impl Reached {
    /// Every mesh object the command reaches, each as the refusal it would meet. A scoped
    /// override (decision 0015) must cover all of them, not only the first that `decide`
    /// reports: `ssh atlas; ssh orion` under `machine:atlas` is not covered. They are the
    /// decision's own walk's, files it read included.
    pub fn targets(&self, catalog: &Catalog) -> Vec<Refusal> {
        self.0
            .iter()
            .filter_map(
                |c| match target::resolve(catalog, c.role, &c.value, c.user.as_deref()) {
                    target::Resolved::Mesh {
                        object,
                        rule,
                        machine,
                    } => Some(Refusal {
                        reaches: object.describe(),
                        target: object.name().to_string(),
                        object: Some(object),
                        machine,
                        ..Refusal::plain(rule, "", Why::Reaches)
                    }),
                    _ => None,
                },
            )
            .collect()
    }
}

impl Guard<'_> {
    /// The mesh's own command-line programs: the program word of each seat verb's and
    /// module tool's usage (`mesh`), as the usage writes it, unless the rules know it as a
    /// program that reaches machines or runs others (a catalog cannot sanction `ssh`).
    fn mesh_programs(&self, catalog: &Catalog) -> Vec<String> {
        let mut programs: Vec<String> = Vec::new();
        for tool in catalog.tools() {
            let Some(word) = tool.usage.split_whitespace().next() else {
                continue;
            };
            let name = crate::argv::base_name(word);
            let known = self.rules.program(name).is_some()
                || self.rules.wrapper(name).is_some()
                || self.rules.shell(name).is_some()
                || self.rules.interpreter(name).is_some();
            if !known && !programs.iter().any(|p| p == word) {
                programs.push(word.to_string());
            }
        }
        programs
    }

    /// With the catalog: the first candidate that reaches the mesh is refused.
    pub(super) fn judge(&self, catalog: &Catalog, source: &str, walk: &mut Walk) -> Decision {
        // A route's selection (`docker context use X`, `export DOCKER_HOST=…`) is refused
        // after the commands that use it, and a jump host after the destination: theirs is
        // the work a mesh tool replaces, on the machine it runs on.
        walk.candidates.sort_by_key(|c| (c.route, is_hop(c)));
        let mut forge = None;
        let mut unknown = None;
        // A refusal in report-only mode: the walk goes on, for any that is enforced.
        let mut reported = None;
        let mut mesh_cli: Option<Vec<String>> = None;
        for c in &walk.candidates {
            // The mesh's own CLI is the sanctioned path: what its arguments would run is
            // the mesh's to run (`mesh exec api -- 'journalctl -u x'`).
            if c.speculative
                && !c.runners.is_empty()
                && c.runners.iter().any(|r| {
                    mesh_cli
                        .get_or_insert_with(|| self.mesh_programs(catalog))
                        .contains(r)
                })
            {
                continue;
            }
            match target::resolve(catalog, c.role, &c.value, c.user.as_deref()) {
                target::Resolved::Nothing => {}
                // Words that were only a program's arguments count only as far as they
                // reach the mesh.
                target::Resolved::Unknown | target::Resolved::Forge(_) if c.speculative => {}
                target::Resolved::Unknown => {
                    unknown.get_or_insert(c);
                }
                target::Resolved::Forge(account) => forge = Some(account),
                target::Resolved::Mesh {
                    object,
                    rule,
                    machine,
                } => {
                    // Found among the arguments of a program the rules do not know: say so.
                    let why = match c.runners.first() {
                        Some(runner) if c.speculative => {
                            Why::ArgumentOf(crate::argv::base_name(runner).to_string())
                        }
                        _ => Why::Reaches,
                    };
                    let refusal = candidate_refusal(c, object, rule, why, None);
                    // A jump to elsewhere is its own shape: no mesh tool runs there.
                    let hop = passes_through(c, &walk.candidates);
                    let shape = if hop {
                        format!("{} -J <machine>", refusal.shape)
                    } else {
                        refusal.shape.clone()
                    };
                    let refusal = Refusal {
                        machine,
                        hop,
                        shape,
                        ..refusal
                    };
                    if let Some(enforced) = enforced(catalog, refusal, &mut reported) {
                        return enforced;
                    }
                }
            }
        }
        // What could not be known matters only where the command names the mesh; the
        // words are looked up (one catalog probe each) only when something is unknown.
        let why = if let Some(words) = walk.unknown_programs.first() {
            let program = words
                .first()
                .map_or(String::new(), |w| w.replace(UNKNOWN, "…"));
            Some((words.clone(), Why::UnknownProgram(program)))
        } else if let Some((words, what)) = walk.unknown_code.first() {
            Some((words.clone(), Why::UnknownCode(what.clone())))
        } else if let Some(c) = unknown {
            // Only a word that could be this target and flows into it counts.
            let words = flow::own_words(c).iter().chain(&walk.flows);
            let object = words
                .flat_map(|w| flow::target_pieces(w))
                .find_map(|piece| catalog.object(piece));
            let Some(object) = object else {
                return self.judge_rest(catalog, source, walk, forge, reported);
            };
            let value = crate::shell::quote::shown(&c.value, &c.command_written, false);
            let kind = c.role.placeholder();
            // The shape is known: the refusal can still name the tool for it, "if the
            // target is a mesh machine".
            let refusal = Refusal {
                over: String::new(),
                ..candidate_refusal(
                    c,
                    object,
                    Rule::Unverifiable,
                    Why::UnknownTarget(value.clone()),
                    Some((value, kind.to_string())),
                )
            };
            if let Some(enforced) = enforced(catalog, refusal, &mut reported) {
                return enforced;
            }
            // Only reported: what could not be parsed is still looked at.
            walk.unparsable
                .first()
                .map(|text| (vec![text.clone()], Why::Unparsable))
        } else {
            walk.unparsable
                .first()
                .map(|text| (vec![text.clone()], Why::Unparsable))
        };
        if let Some((command, why)) = why
            && let Some(object) = walk
                .words
                .iter()
                .find_map(|w| names_mesh_object(catalog, w))
        {
            let verbatim = command.len() == 1;
            let refusal = Refusal {
                reaches: object.describe(),
                target: object.name().to_string(),
                object: Some(object),
                command,
                why,
                verbatim,
                ..Refusal::plain(Rule::Unverifiable, source, Why::Reaches)
            };
            if let Some(enforced) = enforced(catalog, refusal, &mut reported) {
                return enforced;
            }
        }
        self.judge_rest(catalog, source, walk, forge, reported)
    }

    /// After the candidates and what could not be known: unparsable text, the forge, and
    /// what was refused only in report-only mode.
    fn judge_rest(
        &self,
        catalog: &Catalog,
        source: &str,
        walk: &Walk,
        forge: Option<String>,
        mut reported: Option<Refusal>,
    ) -> Decision {
        if walk
            .unparsable
            .iter()
            .any(|text| self.mentions_guarded_program(text))
        {
            let refusal = Refusal::plain(Rule::Unverifiable, source, Why::UnparsableGuarded);
            if let Some(enforced) = enforced(catalog, refusal, &mut reported) {
                return enforced;
            }
        }
        match (reported, forge) {
            (Some(refusal), _) => Decision::Pass(PassReason::Reported(Box::new(refusal))),
            (None, Some(account)) => Decision::Pass(PassReason::ForgeAccount { account }),
            (None, None) => Decision::Pass(PassReason::NotMesh),
        }
    }
}

impl Decision {
    /// The refusal the catalog and rules make, enforced or only reported.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Decision::Refuse(refusal) => Some(refusal),
            Decision::Pass(PassReason::Reported(refusal)) => Some(refusal),
            Decision::Pass(_) => None,
        }
    }
}

impl Refusal {
    /// Its mode in `catalog` and the setting that decided (decision 0060): a machine's
    /// refusal reaches, besides the modules on the machine, those its command names.
    pub fn mode(&self, catalog: &Catalog) -> crate::catalog::Decided {
        let words: Vec<String> = match self.object {
            Some(MeshObject::Machine(_)) if !catalog.modes().all_enforced() => self
                .command
                .iter()
                .chain(&self.inner)
                .chain(self.runs.iter().flatten())
                .chain(&self.operands)
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        catalog.mode_naming(self.rule, self.object.as_ref(), &words)
    }
}

/// The refusal, when the catalog enforces its rule where it reaches; else kept as the first
/// one reported (decision 0060), and the walk goes on.
fn enforced(
    catalog: &Catalog,
    refusal: Refusal,
    reported: &mut Option<Refusal>,
) -> Option<Decision> {
    match refusal.mode(catalog).mode {
        crate::catalog::Mode::Enforce => Some(Decision::Refuse(refusal)),
        crate::catalog::Mode::Report => {
            reported.get_or_insert(refusal);
            None
        }
    }
}

/// A host a connection may only pass through on its way: `-J bastion`, `-o ProxyJump=…`,
/// or a jump ssh's configuration adds (a route host of role `host`, `ssh_route.rs`).
fn is_hop(c: &super::Candidate) -> bool {
    use crate::rules::Role;
    c.role == Role::Jump
        || (c.route && c.role == Role::Host)
        || (c.role == Role::SshOption
            && target::ssh_option(&c.value).is_some_and(|(key, _)| key == "proxyjump"))
}

/// A hop of a command that names its destination too (`ssh -J atlas elsewhere`; dbclient's
/// `atlas` alone is its destination): what the command runs, it runs elsewhere.
fn passes_through(c: &super::Candidate, all: &[super::Candidate]) -> bool {
    use crate::rules::Role;
    is_hop(c)
        && all.iter().any(|d| {
            !is_hop(d) && d.command == c.command && matches!(d.role, Role::Host | Role::HostPath)
        })
}

/// The refusal of a candidate whose target is (or is named with) `object`: the command as
/// the candidate saw it, and what it carries for ranking and filling.
fn candidate_refusal(
    c: &super::Candidate,
    object: MeshObject,
    rule: Rule,
    why: Why,
    unknown: Option<(String, String)>,
) -> Refusal {
    Refusal {
        command: c.command.clone(),
        reaches: object.describe(),
        over: c.over.clone(),
        target: object.name().to_string(),
        object: Some(object),
        shape: c.shape.trim().to_string(),
        inner: c.carried.inner.clone(),
        runs: c.carried.runs.clone(),
        family: c.carried.family.clone(),
        equivalent: c.carried.equivalent.clone(),
        operands: c.carried.operands.clone(),
        written: c.command_written.clone(),
        verbatim: false,
        unknown,
        read_from: c.read_from.clone(),
        ..Refusal::plain(rule, "", why)
    }
}

/// Whether a word, or a piece of it between separators, names something of the mesh.
pub(super) fn names_mesh_object(catalog: &Catalog, word: &str) -> Option<MeshObject> {
    word.split(|c: char| {
        c == UNKNOWN
            || c.is_whitespace()
            || matches!(
                c,
                '@' | ':' | '/' | '=' | ',' | '\'' | '"' | ';' | '(' | ')'
            )
    })
    .filter(|piece| !piece.is_empty())
    .find_map(|piece| catalog.object(piece))
}
