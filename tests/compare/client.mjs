// One client in one process (so heaps are measured separately):
//   node --expose-gc client.mjs WHICH flood|sync SIM_URL
// WHICH: client-node | kubewasm (the Node entry's default transport,
//        node:http) | kubewasm-diff (flood only: no object handler, a
//        `subscribe` listener, events counted by the informer's status) |
//        kubewasm-fetch, kubewasm-diff-fetch (the same over Node's fetch) | fetch-floor and http-floor
//        (flood only: the least a JS watcher can do — fetch or node:http, split
//        lines, JSON.parse each, read metadata.name; keeps nothing) | http-read
//        (flood only: node:http, newlines counted in the raw bytes: what
//        receiving the stream costs before any client does anything).
// flood: 10,000 pods synced, then 200,000 MODIFIED; events/s reaching a handler
//        that reads metadata.name, and this process's CPU µs per event. sync: time to sync the seeded pods, then heap.
// query (kubewasm only): after sync, the median time of lister.list({ namespace,
//        labelSelector }) and of an unchanged getSnapshot().
import * as http from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { KubeClient, InformerFactory, wasmMemoryBytes } from 'kubewasm';

const [which, mode, url] = process.argv.slice(2);
const FLOOD = 200_000;
let seen = 0;
const onUpdate = (obj) => { if (obj.metadata.name) seen++; };
let stop;
// The plain node:http loops: list the pods, then watch from the list's RV.
async function httpWatch() {
  const get = (path) => new Promise((resolve, reject) => http.get(`${url}${path}`, resolve).on('error', reject));
  const listRes = await get('/api/v1/pods');
  let body = '';
  listRes.setEncoding('utf8');
  for await (const s of listRes) body += s;
  return get(`/api/v1/pods?watch=1&resourceVersion=${JSON.parse(body).metadata.resourceVersion}`);
}
const t0 = performance.now();
if (which === 'client-node') {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'sim', user: 'u' }],
    currentContext: 'c',
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => api.listPodForAllNamespaces());
  informer.on('update', onUpdate);
  await informer.start();
  stop = () => informer.stop();
} else if (which === 'fetch-floor') {
  const list = await (await fetch(`${url}/api/v1/pods`)).json();
  const ac = new AbortController();
  const res = await fetch(`${url}/api/v1/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`, { signal: ac.signal });
  (async () => {
    const dec = new TextDecoder();
    let rest = '';
    try {
      for await (const chunk of res.body) {
        const lines = (rest + dec.decode(chunk, { stream: true })).split('\n');
        rest = lines.pop();
        for (const l of lines) if (l) onUpdate(JSON.parse(l).object);
      }
    } catch {}
  })();
  stop = () => ac.abort();
} else if (which === 'http-floor') {
  const res = await httpWatch();
  res.setEncoding('utf8');
  let rest = '';
  res.on('data', (s) => {
    const lines = (rest + s).split('\n');
    rest = lines.pop();
    for (const l of lines) if (l) onUpdate(JSON.parse(l).object);
  });
  res.on('error', () => {});
  stop = () => res.destroy();
} else if (which === 'http-read') {
  const res = await httpWatch();
  res.on('data', (b) => {
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) seen++;
  });
  res.on('error', () => {});
  stop = () => res.destroy();
} else {
  const transport = which.endsWith('-fetch') ? 'fetch' : undefined;
  const factory = new InformerFactory(new KubeClient({ server: url, qps: 1000, burst: 1000, transport }));
  // `query` indexes the label it filters by, as an app would.
  var pods = factory.informer({ version: 'v1', resource: 'pods', ...(mode === 'query' ? { labelIndexes: ['app'] } : {}) });
  if (which.startsWith('kubewasm-diff')) pods.subscribe(() => {});
  else pods.on('update', (_old, obj) => onUpdate(obj));
  factory.start();
  await pods.waitForSync();
  if (which.startsWith('kubewasm-diff')) {
    const base = pods.status.eventsApplied;
    setInterval(() => { seen = pods.status.eventsApplied - base; }, 5);
  }
  stop = () => factory.shutdown();
}
const syncMs = performance.now() - t0;
if (mode === 'query') {
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  const lister = pods.lister();
  // The fullest namespace, and the `app` label value whose count there is closest to 100.
  const count = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  const perNs = new Map();
  for (const p of pods.getSnapshot()) count(perNs, p.metadata.namespace);
  const namespace = [...perNs].sort((a, b) => b[1] - a[1])[0][0];
  const perApp = new Map();
  for (const p of lister.list({ namespace })) count(perApp, p.metadata.labels?.app);
  const app = [...perApp].filter(([k]) => k).sort((a, b) => Math.abs(a[1] - 100) - Math.abs(b[1] - 100))[0][0];
  const filter = { namespace, labelSelector: `app=${app}` };
  const t = performance.now();
  const hits = lister.list(filter).length;
  const firstUs = (performance.now() - t) * 1000;
  const inNamespace = lister.list({ namespace: filter.namespace }).length;
  const runs = [];
  for (let i = 0; i < 500; i++) {
    const s = performance.now();
    lister.list(filter);
    runs.push((performance.now() - s) * 1000);
  }
  pods.getSnapshot();
  const snaps = [];
  for (let i = 0; i < 200; i++) {
    const s = performance.now();
    for (let j = 0; j < 1000; j++) pods.getSnapshot();
    snaps.push(performance.now() - s); // ms per 1000 calls = µs per call
  }
  console.log(JSON.stringify({ which, hits, inNamespace, total: pods.status.cached, firstUs, listerUs: median(runs), snapshotUs: median(snaps) }));
  stop();
  process.exit(0);
}
if (mode === 'sync') {
  global.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  global.gc?.();
  const heap = process.memoryUsage().heapUsed;
  const wasm = which.startsWith('kubewasm') ? wasmMemoryBytes() : 0;
  // What a UI adds: every object read once for a table row (name, phase).
  let readHeap = heap;
  if (which === 'kubewasm') {
    let n = 0;
    for (const p of pods.getSnapshot()) n += p.metadata.name.length + (p.status?.phase ? 1 : 0);
    global.gc?.();
    await new Promise((r) => setTimeout(r, 200));
    global.gc?.();
    readHeap = process.memoryUsage().heapUsed + 0 * n;
  }
  console.log(JSON.stringify({ which, syncMs, heapMiB: heap / 1048576, wasmMiB: wasm / 1048576, readHeapMiB: readHeap / 1048576 }));
} else {
  const t1 = performance.now();
  // CPU time of this process per event: on a shared machine it moves far
  // less than events/s, which also depends on how much CPU the sim got.
  const cpu0 = process.cpuUsage();
  await fetch(`${url}/sim/flood`, { method: 'POST', body: JSON.stringify({ resource: 'pods', events: FLOOD }) });
  while (seen < FLOOD) await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - t1;
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ which, eventsPerSec: (FLOOD / ms) * 1000, ms, cpuUsPerEvent: (cpu.user + cpu.system) / FLOOD }));
}
stop();
process.exit(0);
