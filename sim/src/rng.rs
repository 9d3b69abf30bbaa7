//! A small deterministic generator (SplitMix64): seeding, churn and chunk
//! splitting are reproducible for a given seed.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-enough in `0..n` (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// An index into a slice of length `n` (0 when empty).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// A random element of a non-empty slice (the first when empty is impossible).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.index(items.len()))
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// `n` lowercase hex digits.
    pub fn hex(&mut self, n: usize) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        (0..n)
            .map(|_| char::from(DIGITS[(self.next_u64() & 15) as usize]))
            .collect()
    }

    /// `n` characters of the alphabet Kubernetes uses for generated names.
    pub fn name_suffix(&mut self, n: usize) -> String {
        const ALPHA: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| char::from(ALPHA[self.index(ALPHA.len())]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Rng(42), Rng(42));
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng(1).next_u64(), Rng(2).next_u64());
        assert_eq!(Rng(3).below(0), 0);
        assert!(Rng(3).below(7) < 7);
        assert_eq!(Rng(9).hex(12).len(), 12);
    }
}
