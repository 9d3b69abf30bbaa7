//! Informer benchmarks, native: `cargo bench -p kubewasm --bench informer`.
//! A scripted lister-watcher feeds pre-decoded events, so this measures the
//! informer alone (queue, store, indexes, processor, listener pumps), not
//! the network or JSON decoding; the end-to-end wasm twin against the sim is
//! tests/wasm_bench_informer.rs.
// The fake executor (`run_until_stalled`) exists only natively.
#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::cell::Cell;
    use std::hint::black_box;
    use std::rc::Rc;
    use std::time::Instant;

    use kubewasm::cache::{Handler, InformerOptions, Notification, SharedIndexInformer};
    use kubewasm::rest::{KubeObject, ObjectList, WatchEvent};
    use kubewasm::testing::{run_until_stalled, FakeClock, ScriptedListerWatcher};

    #[allow(dead_code)]
    #[rustfmt::skip]
    mod pods {
        include!("support/pods.rs");
        pub(crate) fn pod(i: usize, rv: u64) -> String { pod_json(i, rv) }
    }

    fn pod(i: usize, rv: u64) -> KubeObject {
        KubeObject::from_json(pods::pod(i, rv).as_bytes()).expect("pod")
    }

    fn page(rv: u64, items: Vec<KubeObject>, cont: Option<String>, remaining: usize) -> ObjectList {
        ObjectList {
            api_version: "v1".into(),
            kind: "PodList".into(),
            resource_version: rv.to_string(),
            continue_token: cont,
            remaining_item_count: (remaining > 0).then_some(remaining as i64),
            invalid: Vec::new(),
            items,
        }
    }

    /// An informer with one key-reading handler over `lw`; returns the handler's counter.
    fn informer(
        lw: &ScriptedListerWatcher,
        clock: &FakeClock,
    ) -> (SharedIndexInformer, Rc<Cell<u64>>) {
        let seen = Rc::new(Cell::new(0u64));
        let s = seen.clone();
        let h: Handler = Rc::new(move |n: Notification| {
            if let Notification::Add(o, _) | Notification::Update(_, o) = &n {
                black_box(o.name());
            }
            s.set(s.get() + 1);
            None
        });
        let inf = SharedIndexInformer::new(
            Rc::new(lw.clone()),
            clock.shared(),
            InformerOptions::default(),
        );
        inf.add_handler(h, false);
        (inf, seen)
    }

    fn sync(n: usize, page_size: usize) {
        let objs: Vec<KubeObject> = (0..n).map(|i| pod(i, i as u64 + 1)).collect();
        let lw = ScriptedListerWatcher::new();
        let pages = n.div_ceil(page_size);
        for p in 0..pages {
            let items = objs[p * page_size..((p + 1) * page_size).min(n)].to_vec();
            let cont = (p + 1 < pages).then(|| format!("c{p}"));
            lw.push_list(Ok(page(
                n as u64,
                items,
                cont,
                n.saturating_sub((p + 1) * page_size),
            )));
        }
        let clock = FakeClock::new();
        let (inf, seen) = informer(&lw, &clock);
        let t = Instant::now();
        inf.start();
        run_until_stalled();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert!(inf.has_synced());
        assert_eq!(seen.get(), n as u64);
        println!(
            "native informer sync {n} pods paged at {page_size}: {ms:.1} ms ({:.0} objects/s)",
            n as f64 / ms * 1000.0
        );
        inf.stop();
        run_until_stalled();
    }

    fn flood(seed: usize, events: usize) {
        let lw = ScriptedListerWatcher::new();
        let objs: Vec<KubeObject> = (0..seed).map(|i| pod(i, i as u64 + 1)).collect();
        lw.push_list(Ok(page(seed as u64, objs, None, 0)));
        let clock = FakeClock::new();
        let (inf, seen) = informer(&lw, &clock);
        inf.start();
        run_until_stalled();
        let base = seen.get();
        // Pre-decoded MODIFIED events, round robin over the seeded pods.
        let evs: Vec<KubeObject> = (0..events)
            .map(|e| pod(e % seed, (seed + e) as u64 + 1))
            .collect();
        let t = Instant::now();
        for chunk in evs.chunks(1000) {
            for o in chunk {
                lw.send(Ok(WatchEvent::Modified(o.clone())));
            }
            run_until_stalled();
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(seen.get() - base, events as u64);
        println!(
            "native informer {events} MODIFIED over {seed} pods to a key-reading handler: {ms:.0} ms ({:.0} events/s)",
            events as f64 / ms * 1000.0
        );
        inf.stop();
        run_until_stalled();
    }

    pub fn main() {
        sync(50_000, 500);
        flood(10_000, 200_000);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main();
}

#[cfg(target_arch = "wasm32")]
fn main() {}
