//! Watch decode benchmark, native: framer + event decoder over ~40 MB of
//! realistic pod events (2–3 KB each) in 64 KiB chunks, beside a full
//! `serde_json::Value` parse per line, and the list decoder (also on shapes a
//! hostile server can split over many chunks). Run:
//! `cargo bench -p kubewasm --bench decode`
use std::hint::black_box;
use std::time::{Duration, Instant};

use kubewasm::rest::WatchEvent;
use kubewasm::testing::{decode_list, EventDecoder, ListDecoder};

include!("support/pods.rs");

const CHUNK: usize = 64 * 1024;

fn report(name: &str, bytes: usize, events: usize, elapsed: Duration) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    println!(
        "{name:<52} {:>8.1} MB/s {:>10.0} events/s ({:.1} ms)",
        bytes as f64 / secs / 1e6,
        events as f64 / secs,
        secs * 1e3
    );
}

fn best_of<F: FnMut() -> usize>(runs: usize, mut f: F) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut out = 0;
    for _ in 0..runs {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn main() {
    let (data, n) = watch_stream(40 * 1024 * 1024);
    println!(
        "input: {} events, {:.1} MB, {:.0} bytes/event",
        n,
        data.len() as f64 / 1e6,
        data.len() as f64 / n as f64
    );

    let (t, count) = best_of(5, || {
        let mut d = EventDecoder::new(16 << 20);
        let mut count = 0;
        for chunk in data.chunks(CHUNK) {
            d.push(chunk);
            while let Some(ev) = d.next_event() {
                match ev {
                    Ok(WatchEvent::Error(_)) | Err(_) => panic!("unexpected error"),
                    Ok(ev) => {
                        if let Some(o) = ev.object() {
                            black_box((o.name(), o.resource_version()));
                        }
                        count += 1;
                    }
                }
            }
        }
        d.finish();
        count
    });
    assert_eq!(count, n);
    report(
        "native: framer + event decoder (metadata)",
        data.len(),
        n,
        t,
    );

    let (t, count) = best_of(3, || {
        let mut count = 0;
        for line in data.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("json");
            black_box(&v["object"]["metadata"]["name"]);
            count += 1;
        }
        count
    });
    assert_eq!(count, n);
    report(
        "native: serde_json::Value per line (reference)",
        data.len(),
        n,
        t,
    );

    let list = list_body(5000);
    let (t, items) = best_of(5, || decode_list(&list).expect("list").items.len());
    assert_eq!(items, 5000);
    report("native: list decoder, 5000 pods", list.len(), items, t);

    // A long number or run of whitespace split over many chunks must be
    // scanned once, not again with every chunk.
    let number = format!(r#"{{"x":1.{},"items":[]}}"#, "0".repeat(10 << 20));
    let spaces = format!(r#"{{"x":1,{}"items":[]}}"#, " ".repeat(64 << 20));
    for (name, body, chunk) in [
        (
            "native: list, a 10 MiB number in 1 KiB chunks",
            number,
            1024,
        ),
        (
            "native: list, 64 MiB of whitespace, 64 KiB chunks",
            spaces,
            CHUNK,
        ),
    ] {
        let t = Instant::now();
        let mut d = ListDecoder::new();
        for c in body.as_bytes().chunks(chunk) {
            d.feed(c.to_vec()).expect("valid");
        }
        assert!(d.finish().expect("valid").items.is_empty());
        report(name, body.len(), 0, t.elapsed());
    }
}
