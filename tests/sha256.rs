//! Our SHA-256 (src/sha256.rs, decision 0044) against the standard's own examples and against
//! the `sha2` crate it replaced: every short length, and long messages fed in random pieces.

use mesh_guard::sha256::Sha256;
use sha2::Digest as _;

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_nist_examples_hash_to_their_published_digests() {
    let million_a = vec![b'a'; 1_000_000];
    let examples: [(&[u8], &str); 5] = [
        (
            b"",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
        (
            b"abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
        (
            b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
        ),
        (
            &million_a,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
        ),
    ];
    for (message, digest) in examples {
        assert_eq!(
            hex(&Sha256::digest(message)),
            digest,
            "{} bytes",
            message.len()
        );
    }
    // The million a's in pieces that straddle the blocks, as the standard's own test feeds them.
    let mut hash = Sha256::new();
    for piece in million_a.chunks(1000) {
        hash.update(piece);
    }
    assert_eq!(
        hex(&hash.finalize()),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
}

/// A fixed pseudo-random sequence (xorshift): the same cases on every run.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn every_length_to_300_bytes_hashes_as_sha2_does() {
    // Every place the padding can fall: the one bit and the length in the same block or the
    // next, up to several whole blocks.
    let mut random = Xorshift(0x9e37_79b9_7f4a_7c15);
    for len in 0..=300 {
        let message = random.bytes(len);
        assert_eq!(
            Sha256::digest(&message)[..],
            sha2::Sha256::digest(&message)[..],
            "{len} bytes"
        );
    }
}

#[test]
fn a_message_in_random_pieces_hashes_as_it_does_whole() {
    let mut random = Xorshift(0x2545_f491_4f6c_dd1d);
    for _ in 0..300 {
        let len = random.below(1500);
        let message = random.bytes(len);
        let mut ours = Sha256::new();
        let mut at = 0;
        while at < message.len() {
            // Empty pieces too: an update of nothing changes nothing.
            let piece = random.below(message.len() - at + 1).min(random.below(200));
            ours.update(&message[at..at + piece]);
            at += piece;
        }
        assert_eq!(
            ours.finalize()[..],
            sha2::Sha256::digest(&message)[..],
            "{} bytes",
            message.len()
        );
    }
}
