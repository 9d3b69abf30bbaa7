// Cache benchmarks shared by benches/cache.rs (native) and
// tests/wasm_bench_cache.rs (wasm in Node) through `include!`. `now_ms` is the
// platform clock, `out` prints one result line.

use kubewasm::cache::{DeltaFifo, DeltaFifoOptions, Indexer, InformerQueue, KnownObjects, LabelSelector, Lister, QueueKind, RealFifo};
use kubewasm::rest::KubeObject;

/// Pod `i` in one of 50 namespaces (1,000 pods each at 50,000).
fn bench_pod(i: usize, rv: u64) -> KubeObject {
    let ns5 = ["default", "kube-system", "payments", "frontend", "data"][i % 5];
    let json = pod_json(i, rv).replacen(&format!("\"namespace\":\"{ns5}\""), &format!("\"namespace\":\"ns-{:02}\"", i % 50), 1);
    match KubeObject::from_json_vec(json.into_bytes()) {
        Ok(o) => o,
        Err(e) => panic!("bench pod: {e}"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn run_cache_benches(now_ms: &dyn Fn() -> f64, out: &dyn Fn(String)) {
    const PODS: usize = 50_000;
    const UPDATES: usize = 1_000_000;
    let pods: Vec<KubeObject> = (0..PODS).map(|i| bench_pod(i, 1)).collect();
    let json_bytes: usize = pods.iter().map(|p| p.raw().len()).sum();
    // A second version of every pod to alternate between (same labels, new RV).
    let pods2: Vec<KubeObject> = (0..PODS).map(|i| bench_pod(i, 2)).collect();

    let ix = Indexer::with_namespace_index();
    let _ = ix.add_label_index("app");
    let _ = ix.add_label_index("pod-template-hash");
    for p in &pods {
        let _ = ix.add(p.clone());
    }
    let heap: usize = pods.iter().map(|p| p.approx_heap_bytes()).sum();
    out(format!(
        "cached pods: {PODS}, mean JSON {:.0} B, mean object heap {:.0} B ({:.2}x JSON)",
        json_bytes as f64 / PODS as f64,
        heap as f64 / PODS as f64,
        heap as f64 / json_bytes as f64
    ));

    let t = now_ms();
    for u in 0..UPDATES {
        let i = (u * 7919) % PODS;
        let p = if (u / PODS).is_multiple_of(2) { &pods2[i] } else { &pods[i] };
        let _ = ix.update(p.clone());
    }
    let ms = now_ms() - t;
    out(format!("store updates (ns index + 2 label indexes): {UPDATES} in {ms:.0} ms = {:.0} updates/s", UPDATES as f64 / ms * 1000.0));

    let lister = Lister::new(ix.reader());
    let sel = LabelSelector::parse("app=web").unwrap_or_default();
    let mut times = Vec::new();
    let mut found = 0;
    for r in 0..200 {
        let ns = format!("ns-{:02}", r % 50);
        let t = now_ms();
        let v = lister.list_in(Some(&ns), &sel);
        times.push((now_ms() - t) * 1000.0);
        found = v.len();
    }
    out(format!("lister: namespace of 1,000 of 50,000, app=web ({found} hits): median {:.1} µs", median(times)));
    let mut times = Vec::new();
    for r in 0..200 {
        let ns = format!("ns-{:02}", r % 50);
        let t = now_ms();
        let mut n = 0;
        let _ = ix.for_each_in_index("namespace", &ns, |_, _| n += 1);
        times.push((now_ms() - t) * 1000.0);
        found = n;
    }
    out(format!("raw namespace bucket walk ({found}): median {:.1} µs", median(times)));
    let t = now_ms();
    let mut m = 0;
    for p in pods.iter().take(10_000) {
        m += usize::from(sel.matches(p));
    }
    out(format!("selector.matches: {:.0} ns each ({m})", (now_ms() - t) * 1e6 / 10_000.0));

    let keys: Vec<String> = pods.iter().take(10_000).map(|p| format!("{}/{}", p.namespace().unwrap_or(""), p.name())).collect();
    let t = now_ms();
    let mut hits = 0;
    for _ in 0..10 {
        for k in &keys {
            hits += usize::from(ix.get_by_key(k).is_some());
        }
    }
    let ms = now_ms() - t;
    out(format!("get by key: {hits} lookups, {:.0} ns each", ms * 1e6 / hits.max(1) as f64));

    // DeltaFIFO: replace 50k against 50k known with 10 % gone, then drain.
    let known = Indexer::default();
    for p in &pods {
        let _ = known.add(p.clone());
    }
    let fifo = DeltaFifo::new(DeltaFifoOptions { known_objects: Some(std::rc::Rc::new(known.clone()) as std::rc::Rc<dyn KnownObjects>), ..Default::default() });
    let list: Vec<KubeObject> = pods2.iter().enumerate().filter(|(i, _)| !i.is_multiple_of(10)).map(|(_, p)| p.clone()).collect();
    let t = now_ms();
    let _ = fifo.replace(list, "2");
    let mut popped = 0;
    while let Some(p) = fifo.try_pop() {
        fifo.done(&p);
        popped += 1;
    }
    let ms = now_ms() - t;
    out(format!("DeltaFIFO replace 50,000 vs 50,000 known (10% gone) + drain {popped} keys: {ms:.1} ms"));

    // RealFIFO: the same relist.
    let real = RealFifo::new(DeltaFifoOptions { known_objects: Some(std::rc::Rc::new(known.clone()) as std::rc::Rc<dyn KnownObjects>), ..Default::default() });
    let list: Vec<KubeObject> = pods2.iter().enumerate().filter(|(i, _)| !i.is_multiple_of(10)).map(|(_, p)| p.clone()).collect();
    let t = now_ms();
    let _ = real.replace(list, "2");
    let mut popped = 0;
    while let Some(p) = real.try_pop() {
        real.done(&p);
        popped += 1;
    }
    let ms = now_ms() - t;
    out(format!("RealFIFO replace 50,000 vs 50,000 known (10% gone) + drain {popped} deltas: {ms:.1} ms"));

    // The same flood through both queues: 500,000 updates, queued in bursts
    // of 1,000 while the consumer drains up to 1,000 pops per turn, as the
    // controller does; spread over all 50,000 pods, then on 100 hot pods
    // (where DeltaFIFO hands a key's burst of changes over in one pop).
    for (kind, keys) in [(QueueKind::DeltaFifo, 50_000usize), (QueueKind::RealFifo, 50_000), (QueueKind::DeltaFifo, 100), (QueueKind::RealFifo, 100)] {
        let q = InformerQueue::new(kind, DeltaFifoOptions { known_objects: Some(std::rc::Rc::new(known.clone()) as std::rc::Rc<dyn KnownObjects>), ..Default::default() });
        let events = 500_000usize;
        let t = now_ms();
        let (mut pops, mut deltas, mut sent) = (0usize, 0usize, 0usize);
        while sent < events || q.queued_deltas() > 0 {
            for _ in 0..1000 {
                if sent == events {
                    break;
                }
                let _ = q.update(pods[(sent * 7919) % keys].clone());
                sent += 1;
            }
            for _ in 0..1000 {
                let Some(p) = q.try_pop() else { break };
                deltas += p.deltas.len();
                q.done(&p);
                pops += 1;
            }
        }
        let ms = now_ms() - t;
        out(format!("{kind:?} flood: {events} updates over {keys} pods, {pops} pops handing over {deltas} deltas: {ms:.1} ms ({:.0} events/s)", events as f64 / (ms / 1000.0)));
    }
}
