//! Watch decode benchmark in wasm (Node), beside a plain JS baseline measured
//! in the same run. Run:
//! `wasm-pack test --node --release --features bench --test wasm_bench_decode -- --nocapture`
//!
//! Input: ~40 MB of realistic pod watch events (2–3 KB each), in 64 KiB
//! chunks as a fetch body delivers them. Paths measured:
//! * kubewasm: each chunk copied from a JS `Uint8Array` into wasm (as the
//!   fetch transport does), then framer + event decoder (metadata parsed,
//!   raw bytes kept);
//! * the same without the JS → wasm copy (decoder only);
//! * JS baseline: streaming `TextDecoder` + split lines + `JSON.parse` per
//!   line (what JS clients do);
//! * reference: `serde_json::Value` per line in wasm.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use std::hint::black_box;
use std::time::Duration;

use kubewasm::rest::WatchEvent;
use kubewasm::rt::{real_clock, SharedClock};
use kubewasm::testing::{decode_list, EventDecoder};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

include!("../benches/support/pods.rs");

const CHUNK: usize = 64 * 1024;
const RUNS: usize = 5;

fn report(name: &str, bytes: usize, events: usize, elapsed: Duration) {
    let secs = elapsed.as_secs_f64().max(1e-9);
    console_log!(
        "{name:<60} {:>8.1} MB/s {:>10.0} events/s ({:.1} ms)",
        bytes as f64 / secs / 1e6,
        events as f64 / secs,
        secs * 1e3
    );
}

fn best_of(clock: &SharedClock, mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut out = 0;
    for _ in 0..RUNS {
        let t = clock.now();
        out = f();
        best = best.min(clock.now() - t);
    }
    (best, out)
}

fn decode_chunk(d: &mut EventDecoder, chunk: &[u8]) -> usize {
    d.push(chunk);
    let mut count = 0;
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
    count
}

#[wasm_bindgen_test]
fn bench_watch_decode() {
    let clock = real_clock();
    let (data, n) = watch_stream(40 * 1024 * 1024);
    console_log!(
        "input: {} events, {:.1} MB, {:.0} bytes/event, {} KiB chunks",
        n,
        data.len() as f64 / 1e6,
        data.len() as f64 / n as f64,
        CHUNK / 1024
    );

    // The chunks as JS Uint8Arrays, as a fetch body reader yields them.
    let js_chunks = js_sys::Array::new();
    for c in data.chunks(CHUNK) {
        js_chunks.push(&js_sys::Uint8Array::from(c));
    }

    let (t, count) = best_of(&clock, || {
        let mut d = EventDecoder::new(16 << 20);
        let mut count = 0;
        for c in js_chunks.iter() {
            let bytes = js_sys::Uint8Array::new(&c).to_vec();
            count += decode_chunk(&mut d, &bytes);
        }
        d.finish();
        count
    });
    assert_eq!(count, n);
    report(
        "kubewasm: JS chunk copy + framer + event decoder",
        data.len(),
        n,
        t,
    );

    let (t, count) = best_of(&clock, || {
        let mut d = EventDecoder::new(16 << 20);
        let mut count = 0;
        for c in data.chunks(CHUNK) {
            count += decode_chunk(&mut d, c);
        }
        d.finish();
        count
    });
    assert_eq!(count, n);
    report(
        "kubewasm: framer + event decoder (no copy)",
        data.len(),
        n,
        t,
    );

    // Plain JS, timed inside JS so the call overhead is not counted.
    let baseline = js_sys::Function::new_with_args(
        "chunks",
        r#"
        let best = Infinity, count = 0;
        for (let run = 0; run < 5; run++) {
          const t0 = performance.now();
          const dec = new TextDecoder();
          let carry = '', n = 0;
          for (const c of chunks) {
            const text = carry + dec.decode(c, { stream: true });
            const lines = text.split('\n');
            carry = lines.pop();
            for (const line of lines) {
              if (line.length === 0) continue;
              const ev = JSON.parse(line);
              if (ev.object.metadata.resourceVersion === undefined) throw new Error('bad');
              n++;
            }
          }
          if (carry.length) { JSON.parse(carry); n++; }
          best = Math.min(best, performance.now() - t0);
          count = n;
        }
        return [best, count];
        "#,
    );
    let out = baseline
        .call1(&JsValue::NULL, &js_chunks)
        .expect("baseline ran");
    let out = js_sys::Array::from(&out);
    let ms = out.get(0).as_f64().unwrap_or(f64::NAN);
    let count = out.get(1).as_f64().unwrap_or(0.0) as usize;
    assert_eq!(count, n);
    report(
        "JS baseline: TextDecoder + split + JSON.parse per line",
        data.len(),
        n,
        Duration::from_secs_f64(ms / 1e3),
    );

    let (t, count) = best_of(&clock, || {
        let mut count = 0;
        for line in data.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let v: serde_json::Value = serde_json::from_slice(line).expect("json");
            black_box(&v["object"]["metadata"]["name"]);
            count += 1;
        }
        count
    });
    assert_eq!(count, n);
    report("reference: serde_json::Value per line", data.len(), n, t);
}

#[wasm_bindgen_test]
fn bench_list_decode() {
    let clock = real_clock();
    let list = list_body(5000);
    let (t, items) = best_of(&clock, || decode_list(&list).expect("list").items.len());
    assert_eq!(items, 5000);
    report("kubewasm: list decoder, 5000 pods", list.len(), items, t);
}
