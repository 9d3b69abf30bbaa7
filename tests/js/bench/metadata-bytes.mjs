// Bytes on the wire for a metadataOnly informer over 10,000 pods, both ways:
// asked for server-side (PartialObjectMetadata) and, with the sim playing a
// server that ignores the media type, whole objects stripped on the client.
// Counts response body bytes of the initial list and of a 10,000-event flood
// on the watch, uncompressed: the requests ask for no content encoding, else
// the sim (as the API server) would gzip list pages over 128 KiB.
// `scripts/with-sim.sh -- node tests/js/bench/metadata-bytes.mjs` after
// `make build` and `cd tests/js && npm ci`.
import { KubeClient, InformerFactory } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
const PODS = 10_000;
const EVENTS = 10_000;
const post = (path, body) => fetch(`${server}${path}`, { method: 'POST', body: JSON.stringify(body) }).then((r) => r.json());

async function measure(mode) {
  await post('/sim/seed', { namespaces: 10, pods: PODS, seed: 5, podBytes: 3000 });
  await post('/sim/faults', { partialMetadata: mode });
  const bytes = { list: 0, watch: 0 };
  const client = new KubeClient({
    server, token, qps: 1000, burst: 1000,
    fetch: async (input, init) => {
      const kind = input.includes('watch=') ? 'watch' : 'list';
      const headers = new Headers(init?.headers);
      headers.set('accept-encoding', 'identity');
      const resp = await fetch(input, { ...init, headers });
      const counted = resp.body.pipeThrough(new TransformStream({ transform(chunk, ctl) { bytes[kind] += chunk.byteLength; ctl.enqueue(chunk); } }));
      return new Response(counted, { status: resp.status, headers: resp.headers });
    },
  });
  const factory = new InformerFactory(client);
  const inf = factory.informer({ version: 'v1', resource: 'pods', metadataOnly: true });
  factory.start();
  await inf.waitForSync();
  const applied = inf.status.eventsApplied;
  await post('/sim/flood', { resource: 'pods', events: EVENTS, wait: true });
  while (inf.status.eventsApplied < applied + EVENTS) await new Promise((r) => setTimeout(r, 20));
  const kind = inf.getSnapshot()[0].kind;
  factory.shutdown();
  await post('/sim/faults/clear', {});
  return { ...bytes, cached: inf.status.cached, kind };
}

const rows = [];
for (const [label, mode] of [['server-side (PartialObjectMetadata)', 'serve'], ['client-side stripping (server ignores it)', 'ignore']]) {
  const r = await measure(mode);
  rows.push(r);
  console.log(`| ${label} | ${r.cached} | ${(r.list / 1048576).toFixed(1)} MiB (${(r.list / r.cached).toFixed(0)} B/pod) | ${(r.watch / 1048576).toFixed(1)} MiB (${(r.watch / EVENTS).toFixed(0)} B/event) | ${r.kind} |`);
}
console.log(`server-side sends ${(rows[1].list / rows[0].list).toFixed(1)}× fewer list bytes and ${(rows[1].watch / rows[0].watch).toFixed(1)}× fewer watch bytes`);
