//! The cache's checksums: against damage (a write cut short, a block of zeros, a flipped bit),
//! not against a hostile writer, whom the cache's protected directory keeps out (decisions
//! 0006 and 0049). A refusal verifies twenty-odd buckets and the header; SHA-256 spent about
//! 230k instructions on that (12% of a refusal's), this a small fraction of it.
//!
//! The input is taken in 64-bit words, each mixed into the state by a step that is a bijection
//! of the state for a given word and injective in the word for a given state: a change
//! confined to one word always changes the result; other changes escape with odds near 2⁻⁶⁴.

/// An odd multiplier with its bits spread (from the fractional part of the golden ratio).
const MUL: u64 = 0x9e37_79b9_7f4a_7c15;
const START: u64 = 0x243f_6a88_85a3_08d3;

/// A running checksum: words and byte strings in, 8 bytes out.
#[derive(Clone, Copy)]
pub(crate) struct Checksum(u64);

impl Checksum {
    pub(crate) fn new() -> Checksum {
        Checksum(START)
    }

    pub(crate) fn word(self, w: u64) -> Checksum {
        let h = (self.0 ^ w).wrapping_mul(MUL);
        // The product carries low bits upward only; the shift brings the high ones back down.
        Checksum(h ^ (h >> 32))
    }

    /// `bytes` with their length first, so zeros added or cut at the end still count.
    pub(crate) fn bytes(self, bytes: &[u8]) -> Checksum {
        let mut sum = self.word(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            sum = sum.word(u64::from_le_bytes(w.try_into().expect("eight bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            sum = sum.word(u64::from_le_bytes(last));
        }
        sum
    }

    pub(crate) fn finish(self) -> [u8; 8] {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(MUL);
        h ^= h >> 29;
        h.to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(bytes: &[u8]) -> [u8; 8] {
        Checksum::new().bytes(bytes).finish()
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0, 1, 7, 8, 9, 63, 64, 65, 300] {
            let base = sum(&data[..len]);
            for byte in 0..len {
                for bit in 0..8 {
                    let mut bad = data[..len].to_vec();
                    bad[byte] ^= 1 << bit;
                    assert_ne!(sum(&bad), base, "len {len}, byte {byte}, bit {bit}");
                }
            }
        }
    }

    #[test]
    fn zeros_added_or_cut_at_the_end_are_caught() {
        let data = b"machine m0001\0\0";
        let base = sum(data);
        assert_ne!(sum(&data[..data.len() - 1]), base);
        assert_ne!(sum(&[&data[..], &[0]].concat()), base);
        assert_ne!(sum(&[0u8; 8]), sum(&[0u8; 16]));
        assert_ne!(sum(&[]), sum(&[0]));
    }

    #[test]
    fn the_words_before_the_bytes_count() {
        let a = Checksum::new().word(1).word(2).bytes(b"x").finish();
        let b = Checksum::new().word(2).word(1).bytes(b"x").finish();
        let c = Checksum::new().word(1).word(3).bytes(b"x").finish();
        assert_ne!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn the_value_is_fixed_across_builds() {
        // Other processes and builds read the same file: the function must not drift.
        assert_eq!(sum(b"mesh-guard"), FIXED);
    }

    // What this function gave when the format (5) was fixed.
    const FIXED: [u8; 8] = [207, 233, 41, 152, 230, 170, 95, 61];
}
