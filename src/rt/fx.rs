//! A small, fast, non-cryptographic hasher for the cache's internal maps.
//!
//! std's SipHash resists hash flooding but costs more per lookup than the
//! rest of a store update. The keys hashed here are object keys and index
//! values that come from the API server the client already trusts, and slot
//! ids are plain integers, so a multiply-rotate hash (the scheme rustc uses
//! internally) is the better trade. Written here rather than pulled in as a
//! dependency: it is a dozen lines and keeps the wasm module small.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Odd multiplier with well-spread bits (the 64-bit Fx constant).
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Hasher state: one word, folded with each input word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Fixed-size words: `copy_from_slice` of a runtime-length slice stays
        // an out-of-line call in the size-optimized wasm build.
        let (words, rest) = bytes.as_chunks::<8>();
        for w in words {
            self.add(u64::from_le_bytes(*w));
        }
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            for (d, s) in w.iter_mut().zip(rest) {
                *d = *s;
            }
            self.add(u64::from_le_bytes(w));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The high bits of a multiply are the well-mixed ones; hashbrown
        // takes its control byte from the top 7 bits and its bucket from the
        // low bits, so fold the high half down to serve both.
        self.hash ^ (self.hash >> 32)
    }
}

/// `BuildHasher` for [`FxHasher`].
pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
/// A `HashMap` with [`FxHasher`].
pub(crate) type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
/// A `HashSet` with [`FxHasher`].
pub(crate) type FxHashSet<K> = HashSet<K, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_inputs_hash_equal_and_nearby_ids_spread() {
        let h = |s: &str| {
            let mut x = FxHasher::default();
            x.write(s.as_bytes());
            x.finish()
        };
        assert_eq!(h("ns-01/pod-1"), h("ns-01/pod-1"));
        assert_ne!(h("ns-01/pod-1"), h("ns-01/pod-2"));
        assert_ne!(h("abcdefgh"), h("abcdefghi"));
        let mut set: FxHashSet<u32> = FxHashSet::default();
        set.extend(0..10_000);
        assert_eq!(set.len(), 10_000);
        assert!((0..10_000).all(|i| set.contains(&i)));
    }
}
