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

/// Runs of this many indices are insertion-sorted before merging.
const RUN: usize = 16;

/// The one sort: indices by a dynamic comparator, a stable bottom-up merge
/// sort over insertion-sorted runs. Written out rather than std's (whose one
/// `u32` instance, with its sorting networks, is about 10 KB of wasm): the
/// crate sorts label sets of a few entries and lists of up to thousands.
#[inline(never)]
fn sort_indices(perm: &mut [u32], cmp: &mut dyn FnMut(u32, u32) -> Ordering) {
    let less = |cmp: &mut dyn FnMut(u32, u32) -> Ordering, a: u32, b: u32| cmp(a, b).is_lt();
    for run in perm.chunks_mut(RUN) {
        for i in 1..run.len() {
            let mut j = i;
            while j > 0 && less(cmp, run[j], run[j - 1]) {
                run.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let n = perm.len();
    if n <= RUN {
        return;
    }
    let mut buf = vec![0u32; n];
    let mut width = RUN;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            // Ties take the left run's index first: stable.
            while i < mid && j < end {
                if less(cmp, perm[j], perm[i]) {
                    buf[k] = perm[j];
                    j += 1;
                } else {
                    buf[k] = perm[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&perm[i..mid]);
            k += mid - i;
            buf[k..end].copy_from_slice(&perm[j..end]);
        }
        perm.copy_from_slice(&buf);
        width *= 2;
    }
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
        // Around the stack buffer, the insertion-sorted runs and the merge
        // widths (an odd tail run included).
        for n in [0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 64, 500, 1000, 4097] {
            // Few distinct keys, so stability is exercised.
            let mut v: Vec<(u64, usize)> = (0..n).map(|i| (r.next_u64() % 5, i)).collect();
            let mut want = v.clone();
            want.sort_by_key(|e| e.0);
            sort_by(&mut v, |a, b| a.0.cmp(&b.0));
            assert_eq!(v, want, "n = {n}");
            // Distinct keys in reverse order.
            let mut v: Vec<usize> = (0..n).rev().collect();
            sort(&mut v);
            assert!(v.iter().copied().eq(0..n), "reversed, n = {n}");
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
