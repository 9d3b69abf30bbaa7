//! One sort for the whole crate. Every `slice::sort*` call is a separate copy
//! of std's sort (several KB of wasm each) per element type and comparator;
//! [`sort_by`] instead sorts `u32` indices through one non-generic function
//! and moves the elements into place, so the module carries a single copy.

use std::cmp::Ordering;

/// Up to this many elements the indices live on the stack.
const STACK: usize = 32;

/// Sorts `v` by `cmp`, stably (equal elements keep their order), in
/// O(n log n) comparisons (n − 1 when it is already sorted). Slices longer than `u32::MAX` are left unsorted,
/// which no caller can reach (the crate's collections are far smaller).
pub(crate) fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let n = v.len();
    // Already in order (labels as servers send them, say): nothing to do.
    if n < 2 || u32::try_from(n).is_err() || v.is_sorted_by(|a, b| cmp(a, b).is_le()) {
        return;
    }
    let mut stack = [0u32; STACK];
    let mut heap = Vec::new();
    let perm: &mut [u32] = if n <= STACK {
        &mut stack[..n]
    } else {
        heap.resize(n, 0);
        &mut heap
    };
    for (i, p) in (0u32..).zip(perm.iter_mut()) {
        *p = i;
    }
    {
        let v: &[T] = v;
        sort_indices(perm, &mut |a, b| cmp(&v[a as usize], &v[b as usize]));
    }
    apply(v, perm);
}

/// Sorts `v` in its natural order (stably).
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp)
}

/// The one instance of std's sort: indices by a dynamic comparator, ties
/// broken by index so the (unstable, allocation-free) sort is stable.
#[inline(never)]
fn sort_indices(perm: &mut [u32], cmp: &mut dyn FnMut(u32, u32) -> Ordering) {
    perm.sort_unstable_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
}

/// Puts `v[perm[i]]` at `i` for every `i`, following each cycle of the
/// permutation once (`perm` is used up as the visited marks).
fn apply<T>(v: &mut [T], perm: &mut [u32]) {
    for start in 0..perm.len() {
        let mut cur = start;
        loop {
            let next = perm[cur] as usize;
            perm[cur] = cur as u32;
            if next == start {
                break;
            }
            v.swap(cur, next);
            cur = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_stably_at_every_length_around_the_stack_buffer() {
        let mut r = crate::rt::Rng::with_seed(7);
        for n in [0, 1, 2, 3, 17, 31, 32, 33, 64, 500] {
            // Few distinct keys, so stability is exercised.
            let mut v: Vec<(u64, usize)> = (0..n).map(|i| (r.next_u64() % 5, i)).collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            sort_by(&mut v, |a, b| a.0.cmp(&b.0));
            assert_eq!(v, want, "n = {n}");
        }
    }

    #[test]
    fn natural_order_and_owned_elements() {
        let mut v: Vec<String> = ["b", "a", "c", "a"].iter().map(|s| s.to_string()).collect();
        sort(&mut v);
        assert_eq!(v, ["a", "a", "b", "c"]);
        let mut r = vec![3, 1, 2];
        sort_by(&mut r, |a, b| b.cmp(a));
        assert_eq!(r, [3, 2, 1]);
    }
}
