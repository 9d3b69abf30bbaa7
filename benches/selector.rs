//! Label and field selector parsing by input length: the cost must grow
//! linearly, so the longest accepted selector (64 KiB) stays cheap. Run:
//! `cargo bench -p kubewasm --bench selector`
use std::hint::black_box;
use std::time::{Duration, Instant};

use kubewasm::cache::{FieldSelector, LabelSelector};

/// `piece(i)` joined by commas up to about `bytes` bytes.
fn selector(bytes: usize, piece: impl Fn(usize) -> String) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut i = 0;
    while s.len() < bytes {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&piece(i));
        i += 1;
    }
    s.truncate(bytes);
    // Cut on a piece boundary so the selector stays valid.
    if let Some(end) = s.rfind(',') {
        s.truncate(end);
    }
    s
}

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    for kib in [4, 16, 32, 64] {
        let label = selector(kib * 1024, |i| {
            format!("app.kubernetes.io/k{i} in (v{i},w)")
        });
        let field = selector(kib * 1024, |i| format!("metadata.name!=pod-{i}"));
        let t = best_of(5, || {
            black_box(LabelSelector::parse(black_box(&label)).expect("valid"));
        });
        println!(
            "label selector, {kib:>2} KiB ({:>5} requirements): {:>9.3} ms",
            label.matches(',').count() + 1,
            t.as_secs_f64() * 1e3
        );
        let t = best_of(5, || {
            black_box(FieldSelector::parse(black_box(&field)).expect("valid"));
        });
        println!(
            "field selector, {kib:>2} KiB ({:>5} requirements): {:>9.3} ms",
            field.matches(',').count() + 1,
            t.as_secs_f64() * 1e3
        );
    }
}
