//! Growing the heap in large steps.
//!
//! In wasm, the allocator grows linear memory 64 KiB at a time, and every
//! `memory.grow` costs the host far more than the bytes it adds (a new
//! ArrayBuffer, invalidated views, external-memory accounting that can start
//! a garbage collection). Syncing 50,000 pods grew memory ~3,000 times and
//! spent about half its time there (BENCHMARKS.md). Allocating one block of
//! the size about to be needed and freeing it at once leaves that space with
//! the allocator, so what follows fits without growing step by step.

/// Make room for about `bytes` of allocations: one allocation of that size,
/// freed at once. Best effort: nothing happens when it cannot be had (the
/// work that follows then grows the heap as usual). Natively a no-op.
pub fn reserve_heap(bytes: usize) {
    #[cfg(target_arch = "wasm32")]
    {
        let mut block: Vec<u8> = Vec::new();
        // A failure (no memory to grow into) is fine: it is only a hint.
        let _ = block.try_reserve_exact(bytes);
        std::hint::black_box(&block);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = bytes;
}
