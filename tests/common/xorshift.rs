//! The property tests' generator: a fixed-seed xorshift, so a failure names an input that
//! reproduces. Included by path, so a test that needs only it does not build `common`.

pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (0, which would only ever give 0, is taken as 1).
    pub fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
