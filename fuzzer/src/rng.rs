//! A small deterministic PRNG (SplitMix64), so that a seed replays the same cases on any
//! machine and with any dependency versions.

/// SplitMix64: 64 bits of state, statistically fine for test inputs, trivially portable.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The generator of one stream of one case: `seed`, the kernel's name, the case index
    /// and a tag (`"shape"`, `"tensors"`, ...) mixed together, so that each case replays
    /// on its own whatever the number of cases.
    pub fn for_case(seed: u64, kernel: &str, case: usize, tag: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in kernel.bytes().chain([0]).chain(tag.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let mut r = Rng(seed ^ h);
        r.0 ^= r.next_u64().wrapping_add(case as u64);
        r.next_u64();
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        // hi - lo as an unsigned difference: it fits in u64 even across i64's whole range.
        let span = hi.wrapping_sub(lo) as u64;
        match span.checked_add(1) {
            Some(n) => lo.wrapping_add(self.below(n) as i64),
            None => self.next_u64() as i64,
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform in `1..=hi`: small values as likely per octave as large ones.
    pub fn log_uniform(&mut self, hi: i64) -> i64 {
        if hi <= 1 {
            return 1;
        }
        let bits = 64 - (hi as u64).leading_zeros() as i64;
        let b = self.range(0, bits);
        let top = (1i64 << b.min(62)).min(hi);
        self.range((top / 2).max(1), top)
    }

    /// One of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A random permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            p.swap(i, j);
        }
        p
    }
}

/// Elements drawn at random per buffer, and entries per index tensor: past it they repeat
/// (`tensors::random_bytes`, `values::write_entries`), so large cases stay quick to make.
pub const TILE: usize = 1 << 20;
