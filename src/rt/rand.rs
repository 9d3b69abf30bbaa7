use std::cell::Cell;

/// A small seedable pseudo-random generator (SplitMix64) for backoff jitter and
/// randomized timeouts. Not for anything security-related.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator with a fixed seed (deterministic sequences in tests).
    pub fn with_seed(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

thread_local! {
    static THREAD_RNG: Cell<Option<u64>> = const { Cell::new(None) };
}

fn entropy_seed() -> u64 {
    #[cfg(target_arch = "wasm32")]
    {
        (js_sys::Math::random() * (u64::MAX as f64)) as u64 ^ (js_sys::Date::now() as u64)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x6b75_6265);
        h.finish()
    }
}

/// Reseed the thread-local generator behind the crate's jitter (tests).
#[cfg(any(test, feature = "testing"))]
pub fn seed_thread_rng(seed: u64) {
    THREAD_RNG.with(|c| c.set(Some(seed)));
}

/// A uniform float in `[0, 1)` from this thread's generator.
pub fn random_f64() -> f64 {
    THREAD_RNG.with(|c| {
        let mut rng = Rng::with_seed(c.get().unwrap_or_else(entropy_seed));
        let v = rng.next_f64();
        c.set(Some(rng.state));
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_sequences_repeat_and_stay_in_range() {
        let mut a = Rng::with_seed(42);
        let mut b = Rng::with_seed(42);
        for _ in 0..1000 {
            let x = a.next_f64();
            assert_eq!(x, b.next_f64());
            assert!((0.0..1.0).contains(&x));
        }
        seed_thread_rng(7);
        let first = random_f64();
        seed_thread_rng(7);
        assert_eq!(first, random_f64());
    }
}
