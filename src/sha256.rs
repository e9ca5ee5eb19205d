//! SHA-256 as FIPS 180-4 defines it (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3, 6.2), our own
//! (decision 0044): the `sha2` crate picks its backend by running `cpuid` on first use, which
//! costs every process that hashes about 25 us on a virtual machine, and it offers no way to
//! choose the portable backend without build flags that `cargo install` would not pass. What
//! the hook hashes is small (a cache header, one record row), so a plain implementation is as
//! fast in practice. Tested against the standard's vectors and `sha2` (tests/sha256.rs).

/// The first 32 bits of the fractional parts of the cube roots of the first 64 primes
/// (section 4.2.2); derived again from the primes by a test.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The first 32 bits of the fractional parts of the square roots of the first 8 primes
/// (section 5.3.3).
const INITIAL: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const BLOCK: usize = 64;
/// Where a message's length goes in its last block: the block's final 8 bytes.
const LENGTH_AT: usize = BLOCK - 8;

/// A hash being computed: `new`, any number of `update`s, then `finalize`.
#[derive(Clone)]
pub struct Sha256 {
    state: [u32; 8],
    /// The bytes of a block not yet complete; `pending` of them are in use.
    block: [u8; BLOCK],
    pending: usize,
    /// The message's length so far in bytes (its length in bits is this times 8, modulo 2^64).
    length: u64,
}

impl Default for Sha256 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sha256 {
    pub fn new() -> Self {
        Sha256 {
            state: INITIAL,
            block: [0; BLOCK],
            pending: 0,
            length: 0,
        }
    }

    /// The digest of `data` at once.
    pub fn digest(data: impl AsRef<[u8]>) -> [u8; 32] {
        let mut hash = Sha256::new();
        hash.update(data);
        hash.finalize()
    }

    /// Appends `data` to the message.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let mut data = data.as_ref();
        self.length = self.length.wrapping_add(data.len() as u64);
        if self.pending > 0 {
            let take = (BLOCK - self.pending).min(data.len());
            self.block[self.pending..self.pending + take].copy_from_slice(&data[..take]);
            self.pending += take;
            data = &data[take..];
            if self.pending < BLOCK {
                return;
            }
            compress(&mut self.state, &self.block);
            self.pending = 0;
        }
        let mut blocks = data.chunks_exact(BLOCK);
        for block in &mut blocks {
            compress(&mut self.state, block.try_into().expect("a whole block"));
        }
        let rest = blocks.remainder();
        self.block[..rest.len()].copy_from_slice(rest);
        self.pending = rest.len();
    }

    /// The digest of the message (section 5.1.1's padding, then the state's words big-endian).
    pub fn finalize(mut self) -> [u8; 32] {
        let bits = self.length.wrapping_mul(8);
        // A one bit, then zeros until 8 bytes are left in a block, then the length in bits.
        let zeros = (BLOCK + LENGTH_AT - 1 - self.pending) % BLOCK;
        let mut padding = [0u8; BLOCK];
        padding[0] = 0x80;
        self.update(&padding[..1 + zeros]);
        self.update(bits.to_be_bytes());
        debug_assert_eq!(self.pending, 0);
        let mut digest = [0u8; 32];
        for (bytes, word) in digest.chunks_exact_mut(4).zip(self.state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        digest
    }
}

/// One block into the state (section 6.2.2).
fn compress(state: &mut [u32; 8], block: &[u8; BLOCK]) {
    let mut schedule = [0u32; 64];
    for (word, bytes) in schedule.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes(bytes.try_into().expect("four bytes"));
    }
    for t in 16..64 {
        schedule[t] = small_sigma1(schedule[t - 2])
            .wrapping_add(schedule[t - 7])
            .wrapping_add(small_sigma0(schedule[t - 15]))
            .wrapping_add(schedule[t - 16]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (k, w) in K.iter().zip(schedule) {
        let t1 = h
            .wrapping_add(big_sigma1(e))
            .wrapping_add(choose(e, f, g))
            .wrapping_add(*k)
            .wrapping_add(w);
        let t2 = big_sigma0(a).wrapping_add(majority(a, b, c));
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (word, add) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *word = word.wrapping_add(add);
    }
}

// The functions of section 4.1.2.

fn choose(x: u32, y: u32, z: u32) -> u32 {
    (x & y) ^ (!x & z)
}

fn majority(x: u32, y: u32, z: u32) -> u32 {
    (x & y) ^ (x & z) ^ (y & z)
}

fn big_sigma0(x: u32) -> u32 {
    x.rotate_right(2) ^ x.rotate_right(13) ^ x.rotate_right(22)
}

fn big_sigma1(x: u32) -> u32 {
    x.rotate_right(6) ^ x.rotate_right(11) ^ x.rotate_right(25)
}

fn small_sigma0(x: u32) -> u32 {
    x.rotate_right(7) ^ x.rotate_right(18) ^ (x >> 3)
}

fn small_sigma1(x: u32) -> u32 {
    x.rotate_right(17) ^ x.rotate_right(19) ^ (x >> 10)
}

#[cfg(test)]
mod tests {
    /// The first `n` primes.
    fn primes(n: usize) -> Vec<u128> {
        let mut found = Vec::new();
        let mut candidate = 2u128;
        while found.len() < n {
            if found.iter().all(|p| !candidate.is_multiple_of(*p)) {
                found.push(candidate);
            }
            candidate += 1;
        }
        found
    }

    /// The largest `r` with `r^power <= n`, in integers: exact where floating point is not.
    fn integer_root(n: u128, power: u32) -> u128 {
        let (mut low, mut high) = (0u128, 1u128 << (128 / power));
        while low < high {
            let mid = (low + high).div_ceil(2);
            if mid.checked_pow(power).is_some_and(|m| m <= n) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        low
    }

    /// The first 32 bits of the fractional part of the `power`th root of `p`: the root of
    /// `p * 2^(32 * power)`, whose low 32 bits are those.
    fn fraction_bits(p: u128, power: u32) -> u32 {
        integer_root(p << (32 * power), power) as u32
    }

    #[test]
    fn the_constants_are_the_roots_of_the_primes() {
        let primes = primes(64);
        let cube: Vec<u32> = primes.iter().map(|&p| fraction_bits(p, 3)).collect();
        assert_eq!(cube, super::K);
        let square: Vec<u32> = primes[..8].iter().map(|&p| fraction_bits(p, 2)).collect();
        assert_eq!(square, super::INITIAL);
    }
}
