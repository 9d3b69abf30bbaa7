// Bytes per cached pod in wasm linear memory (the edge runtimes' 128 MB limit).
// `scripts/with-sim.sh -- node tests/js/bench/memory.mjs MODE` after `make build`
// and `cd tests/js && npm ci`, MODE = full | stripped | metadata (one process
// each: linear memory never shrinks). Seeds 10,000 pods of ~3 KB.
import { KubeClient, InformerFactory, wasmMemoryBytes } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const mode = process.argv[2] || 'stripped';
const PODS = 10_000;
await fetch(`${server}/sim/seed`, { method: 'POST', body: JSON.stringify({ namespaces: 10, pods: PODS, seed: 5, podBytes: 3000 }) });
const client = new KubeClient({ server, token, qps: 1000, burst: 1000 });
const sample = await client.resource({ version: 'v1', resource: 'pods' }).list({ limit: 100 });
const jsonBytes = sample.items.reduce((n, p) => n + JSON.stringify(p).length, 0) / sample.items.length;
const opts = mode === 'full' ? { stripManagedFields: false } : mode === 'metadata' ? { metadataOnly: true } : {};
const before = wasmMemoryBytes();
const factory = new InformerFactory(client);
const inf = factory.informer({ version: 'v1', resource: 'pods', ...opts });
factory.start();
await inf.waitForSync();
const grown = wasmMemoryBytes() - before;
console.log(`${mode}: ${inf.status.cached} pods, held ${(inf.cachedBytes / inf.status.cached).toFixed(0)} bytes/pod (pod JSON ≈ ${jsonBytes.toFixed(0)} B); wasm memory peak growth +${(grown / 1048576).toFixed(1)} MiB = ${(grown / inf.status.cached).toFixed(0)} bytes/pod`);
factory.shutdown();
