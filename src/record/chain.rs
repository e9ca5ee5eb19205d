//! The record's hash chain: how a row is hashed, and how a walk over the stored links finds the
//! first row that was edited, deleted or inserted. Pure: no SQLite here.
//!
//! See docs/decisions/0004-record-hash-chain.md.

use std::fmt;

use crate::sha256::Sha256;

mod walk;
#[cfg(test)]
pub(crate) use walk::walk;
pub(crate) use walk::{Around, Walk};

/// The `prev_hash` of the first row.
pub(crate) const GENESIS: [u8; 32] = [0; 32];

/// The row encoding written by this version. Format 1 rows (schema 1) have no `shape`.
pub(crate) const FORMAT_CURRENT: i64 = 4;

/// Separates this hash from any other SHA-256 over similar bytes, and names the encoding.
const DOMAIN: &[u8] = b"mesh-guard/record/row";

/// The hashed fields of one row, borrowed from wherever they were read.
pub(crate) struct Fields<'a> {
    pub id: i64,
    pub time_ms: i64,
    pub kind: &'a str,
    pub agent: &'a str,
    pub session_id: &'a str,
    pub tool_use_id: &'a str,
    pub cwd: &'a str,
    pub user: &'a str,
    pub host: &'a str,
    pub command: &'a str,
    pub rule: &'a str,
    pub target: &'a str,
    pub tools: &'a [String],
    pub shape: &'a str,
    pub reason: &'a str,
    pub scope: &'a str,
    pub signer: &'a str,
    pub grant_expires: &'a str,
}

/// The hash of a row in `format`, or `None` when no row of that format could hold these fields
/// (an unknown format, or a format-1 row that has a shape), which verification treats as an edit.
/// Hashed with our SHA-256, which asks the CPU nothing (decision 0044).
pub(crate) fn row_hash(format: i64, prev: &[u8], f: &Fields<'_>) -> Option<[u8; 32]> {
    let mut encoded = Vec::new();
    row_encoding(format, prev, f, &mut encoded)?;
    Some(Sha256::digest(&encoded))
}

/// The bytes a row in `format` is hashed as, into `out` (emptied first), or `None` as for
/// [`row_hash`]. Gathered whole and hashed in one call: `audit verify` hashes every row of the
/// record with `sha2`'s SHA instructions (decision 0062), and forty small updates a row cost
/// more than the compression they feed. Both hashes give the same digest.
pub(crate) fn row_encoding(
    format: i64,
    prev: &[u8],
    f: &Fields<'_>,
    out: &mut Vec<u8>,
) -> Option<()> {
    out.clear();
    match format {
        1 if !f.shape.is_empty() => return None,
        // Rows from before the scope column cannot have one.
        1 | 2 if !f.scope.is_empty() => return None,
        // Rows from before the grant's columns cannot have them.
        1..=3 if !f.signer.is_empty() || !f.grant_expires.is_empty() => return None,
        1..=4 => {}
        _ => return None,
    }
    let h = out;
    // Every variable-length field carries its length, so no two different rows share an encoding
    // (without it, "ab"+"c" and "a"+"bc" would hash alike).
    bytes(h, prev);
    bytes(h, DOMAIN);
    int(h, format);
    int(h, f.id);
    int(h, f.time_ms);
    for s in [
        f.kind,
        f.agent,
        f.session_id,
        f.tool_use_id,
        f.cwd,
        f.user,
        f.host,
        f.command,
        f.rule,
        f.target,
    ] {
        bytes(h, s.as_bytes());
    }
    int(h, i64::try_from(f.tools.len()).unwrap_or(i64::MAX));
    for t in f.tools {
        bytes(h, t.as_bytes());
    }
    if format >= 2 {
        bytes(h, f.shape.as_bytes());
    }
    bytes(h, f.reason.as_bytes());
    if format >= 3 {
        bytes(h, f.scope.as_bytes());
    }
    if format >= 4 {
        bytes(h, f.signer.as_bytes());
        bytes(h, f.grant_expires.as_bytes());
    }
    Some(())
}

fn int(h: &mut Vec<u8>, v: i64) {
    h.extend_from_slice(&v.to_be_bytes());
}

fn bytes(h: &mut Vec<u8>, b: &[u8]) {
    h.extend_from_slice(&(b.len() as u64).to_be_bytes());
    h.extend_from_slice(b);
}

/// Lower-case hex, for showing a hash to an operator.
pub(crate) fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    hex_into(b, &mut s);
    s
}

/// [`hex`] appended to `out`.
pub(crate) fn hex_into(b: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    // A block at a time on the stack, then appended whole: a `push` per digit checked the
    // room and encoded a char each time (3% of a view that prints a million hashes).
    for block in b.chunks(32) {
        let mut text = [0u8; 64];
        for (pair, &x) in text.chunks_exact_mut(2).zip(block) {
            pair[0] = DIGITS[usize::from(x >> 4)];
            pair[1] = DIGITS[usize::from(x & 0xf)];
        }
        out.push_str(std::str::from_utf8(&text[..block.len() * 2]).unwrap_or_default());
    }
}

/// What `audit verify` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Every row hashes to its stored hash and links to the row before it.
    Intact { rows: u64 },
    /// `id` is the first row where the chain breaks, and `breach` says how.
    Broken { id: i64, breach: Breach },
}

/// How the chain was broken at the named row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// The row's content (or its stored hashes) no longer matches what was written.
    Edited,
    /// One or more rows right before this one were deleted.
    DeletedBefore,
    /// This row (and maybe some after it) was not written by the chain: it was put in later.
    Inserted,
    /// The newest rows were deleted; the id named is the first missing one.
    DeletedAtEnd,
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Breach::Edited => "edited",
            Breach::DeletedBefore => "rows deleted before it",
            Breach::Inserted => "inserted",
            Breach::DeletedAtEnd => "rows deleted from here to the end",
        })
    }
}

impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verification::Intact { rows } => write!(f, "intact: {rows} rows"),
            Verification::Broken { id, breach } => write!(f, "broken at row {id}: {breach}"),
        }
    }
}

/// One stored row as the walk sees it: its id, its stored links, and whether its content still
/// hashes to its stored hash.
#[derive(Clone)]
pub(crate) struct Link {
    pub id: i64,
    pub prev: StoredHash,
    pub hash: StoredHash,
    pub sound: bool,
    /// A checkpoint left by `audit prune`: it carries the pruned chain's head hash and may only
    /// start the chain.
    pub checkpoint: bool,
}

/// A stored hash as the walk holds it: the 32 bytes of every hash the chain writes, kept inline
/// (a walk over a million rows allocates nothing for them, and the thread that reads them
/// need not free what another made), or any other bytes, which only tampering stores.
#[derive(Debug, Clone)]
pub(crate) enum StoredHash {
    Sha256([u8; 32]),
    Other(Vec<u8>),
}

impl StoredHash {
    pub(crate) fn of(bytes: &[u8]) -> StoredHash {
        match bytes.try_into() {
            Ok(hash) => StoredHash::Sha256(hash),
            Err(_) => StoredHash::Other(bytes.to_vec()),
        }
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            StoredHash::Sha256(hash) => hash,
            StoredHash::Other(bytes) => bytes,
        }
    }
}

fn broken(id: i64, breach: Breach) -> Verification {
    Verification::Broken { id, breach }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lower_case_digits_a_byte_across_blocks() {
        let bytes: Vec<u8> = (0..=255).collect();
        let mut text = "kept:".to_string();
        hex_into(&bytes, &mut text);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(text, format!("kept:{expected}"));
        for n in [0, 1, 31, 32, 33, 64, 65] {
            assert_eq!(hex(&bytes[..n]), expected[..2 * n]);
        }
    }

    fn fields(id: i64, command: &str) -> Fields<'_> {
        Fields {
            id,
            time_ms: 1,
            kind: "refusal",
            agent: "claude",
            session_id: "s",
            tool_use_id: "t",
            cwd: "/",
            user: "u",
            host: "h",
            command,
            rule: "r",
            target: "atlas",
            tools: &[],
            shape: "",
            reason: "",
            scope: "",
            signer: "",
            grant_expires: "",
        }
    }

    /// A sound chain of `n` rows with ids 1..=n.
    fn chain(n: i64) -> Vec<Link> {
        let mut prev = GENESIS.to_vec();
        let mut out = Vec::new();
        for id in 1..=n {
            let hash = row_hash(2, &prev, &fields(id, "ssh atlas"))
                .unwrap()
                .to_vec();
            out.push(Link {
                id,
                prev: StoredHash::of(&prev),
                hash: StoredHash::of(&hash),
                sound: true,
                checkpoint: false,
            });
            prev = hash;
        }
        out
    }

    #[test]
    fn length_prefixes_keep_neighbouring_fields_apart() {
        let mut a = fields(1, "ab");
        a.rule = "c";
        let mut b = fields(1, "a");
        b.rule = "bc";
        assert_ne!(row_hash(2, &GENESIS, &a), row_hash(2, &GENESIS, &b));
    }

    #[test]
    fn tools_boundaries_are_part_of_the_hash() {
        let one = ["a b".to_string()];
        let two = ["a".to_string(), "b".to_string()];
        let mut a = fields(1, "x");
        a.tools = &one;
        let mut b = fields(1, "x");
        b.tools = &two;
        assert_ne!(row_hash(2, &GENESIS, &a), row_hash(2, &GENESIS, &b));
    }

    #[test]
    fn format_one_cannot_hold_a_shape() {
        let mut f = fields(1, "x");
        assert!(row_hash(1, &GENESIS, &f).is_some());
        f.shape = "docker inspect <container>";
        assert!(row_hash(1, &GENESIS, &f).is_none());
        assert!(row_hash(5, &GENESIS, &fields(1, "x")).is_none());
    }

    #[test]
    fn only_format_three_holds_a_scope_and_hashes_it() {
        let mut f = fields(1, "x");
        f.scope = "machine:atlas";
        assert!(row_hash(2, &GENESIS, &f).is_none());
        let mut g = fields(1, "x");
        g.scope = "machine:orion";
        assert_ne!(row_hash(3, &GENESIS, &f), row_hash(3, &GENESIS, &g));
        assert!(row_hash(3, &GENESIS, &f).is_some());
    }

    #[test]
    fn only_format_four_holds_a_grants_signer_and_expiry_and_hashes_them() {
        let mut f = fields(1, "x");
        f.signer = "SHA256:abc";
        f.grant_expires = "2026-12-06T02:00:00Z";
        assert!(row_hash(3, &GENESIS, &f).is_none());
        let mut g = fields(1, "x");
        g.signer = "SHA256:abd";
        g.grant_expires = f.grant_expires;
        let mut later = fields(1, "x");
        later.signer = f.signer;
        later.grant_expires = "2026-12-07T02:00:00Z";
        assert_ne!(row_hash(4, &GENESIS, &f), row_hash(4, &GENESIS, &g));
        assert_ne!(row_hash(4, &GENESIS, &f), row_hash(4, &GENESIS, &later));
        assert!(row_hash(4, &GENESIS, &f).is_some());
    }

    #[test]
    fn intact_and_empty_chains() {
        assert_eq!(walk(&chain(5), 5), Verification::Intact { rows: 5 });
        assert_eq!(walk(&[], 0), Verification::Intact { rows: 0 });
    }

    #[test]
    fn deleting_the_newest_rows_shows_through_the_highest_id() {
        let mut c = chain(5);
        c.truncate(3);
        assert_eq!(walk(&c, 5), broken(4, Breach::DeletedAtEnd));
        assert_eq!(walk(&[], 2), broken(1, Breach::DeletedAtEnd));
    }

    #[test]
    fn deleting_the_first_row_names_the_second() {
        let mut c = chain(3);
        c.remove(0);
        assert_eq!(walk(&c, 3), broken(2, Breach::DeletedBefore));
    }

    #[test]
    fn an_inserted_row_with_a_correct_hash_is_still_named() {
        // Rows 1..=3; a forger renumbers 3 to 4 and puts a well-formed row 3 after row 2.
        let mut c = chain(3);
        let forged_hash = row_hash(2, c[1].hash.as_slice(), &fields(3, "ls")).unwrap();
        let forged = Link {
            id: 3,
            prev: c[1].hash.clone(),
            hash: StoredHash::of(&forged_hash),
            sound: true,
            checkpoint: false,
        };
        c[2].id = 4;
        c[2].sound = false;
        c.insert(2, forged);
        assert_eq!(walk(&c, 4), broken(3, Breach::Inserted));
    }

    #[test]
    fn an_id_edit_is_an_edit_not_a_deletion() {
        let mut c = chain(3);
        c[2].id = 7;
        c[2].sound = false;
        assert_eq!(walk(&c, 7), broken(7, Breach::Edited));
    }

    #[test]
    fn a_checkpoint_may_only_start_the_chain() {
        let mut c = chain(4);
        c.drain(..1);
        c[0].checkpoint = true;
        c[0].sound = false;
        assert_eq!(walk(&c, 4), Verification::Intact { rows: 3 });
        let mut d = chain(4);
        d[2].checkpoint = true;
        assert_eq!(walk(&d, 4), broken(3, Breach::Inserted));
    }

    #[test]
    fn a_rehashed_edit_names_the_edited_row() {
        let mut c = chain(4);
        c[1].hash = StoredHash::of(&[7; 32]);
        assert_eq!(walk(&c, 4), broken(2, Breach::Edited));
    }
}
