// metadataOnly informers ask the server for PartialObjectMetadata (lists and
// watches), and cache the same objects when the server refuses or ignores it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, type KubeObject } from 'kubewasm';

import { server, sim, token, until } from './sim.js';

after(() => sim('/sim/faults/clear', {}));

type Seen = { url: string; accept: string; bytes: number };

/** A client whose every request and response body size is recorded (through the `fetch` option). */
function recordingClient(seen: Seen[]) {
  return new KubeClient({
    server,
    token,
    fetch: async (input, init) => {
      const rec: Seen = { url: input, accept: new Headers(init.headers).get('accept') ?? '', bytes: 0 };
      seen.push(rec);
      const resp = await fetch(input, init);
      const counted = resp.body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          rec.bytes += chunk.byteLength;
          ctl.enqueue(chunk);
        },
      }));
      return new Response(counted, { status: resp.status, headers: resp.headers });
    },
  });
}

const shapeOf = (objs: readonly KubeObject[]) =>
  objs.map((o) => JSON.stringify({ apiVersion: o.apiVersion, kind: o.kind, keys: Object.keys(o), meta: o.metadata })).sort();

async function cache(client: KubeClient, ns: string, metadataOnly: boolean) {
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods', namespace: ns, metadataOnly });
  factory.start();
  await pods.waitForSync();
  return { factory, pods };
}

test('a metadataOnly informer gets PartialObjectMetadata over the wire, lists and watches', async () => {
  await sim('/sim/faults/clear', {});
  await sim('/sim/seed', { namespaces: 2, pods: 200, seed: 3 });
  const plain = new KubeClient({ server, token });
  const ns = (await plain.resource({ version: 'v1', resource: 'pods' }).list({ limit: 1 })).items[0]!.metadata.namespace!;
  const podsApi = plain.resource({ version: 'v1', resource: 'pods', namespace: ns });

  const seenMeta: Seen[] = [];
  const meta = await cache(recordingClient(seenMeta), ns, true);
  const seenFull: Seen[] = [];
  const full = await cache(recordingClient(seenFull), ns, false);

  const objs = meta.pods.getSnapshot();
  assert.ok(objs.length >= 50, `${objs.length} pods`);
  for (const o of objs) {
    assert.equal(o.apiVersion, 'meta.k8s.io/v1');
    assert.equal(o.kind, 'PartialObjectMetadata');
    assert.deepEqual(Object.keys(o), ['apiVersion', 'kind', 'metadata']);
    assert.equal('managedFields' in o.metadata, false);
  }
  // The same metadata as the whole objects carry.
  const byName = new Map(full.pods.getSnapshot().map((p) => [p.metadata.name, p]));
  for (const o of objs) {
    const { managedFields: _, ...wholeMeta } = byName.get(o.metadata.name)!.metadata;
    assert.deepEqual(JSON.parse(JSON.stringify(o.metadata)), JSON.parse(JSON.stringify(wholeMeta)));
  }

  const lists = seenMeta.filter((s) => !s.url.includes('watch='));
  const watches = seenMeta.filter((s) => s.url.includes('watch='));
  assert.ok(lists.length > 0 && lists.every((s) => s.accept === 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json'));
  await until(() => watches.length > 0 || seenMeta.some((s) => s.url.includes('watch=')));
  assert.ok(seenMeta.filter((s) => s.url.includes('watch=')).every((s) => s.accept === 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json'));
  const listBytes = (seen: Seen[]) => seen.filter((s) => !s.url.includes('watch=')).reduce((n, s) => n + s.bytes, 0);
  assert.ok(listBytes(seenMeta) * 2 < listBytes(seenFull), `metadata-only list ${listBytes(seenMeta)} B, whole ${listBytes(seenFull)} B`);

  // A change arrives through the metadata-only watch.
  await podsApi.create({ metadata: { name: 'late', labels: { app: 'late' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } as KubeObject, {});
  await until(() => meta.pods.lister().get('late', ns) !== undefined);
  const late = meta.pods.lister().get('late', ns)!;
  assert.equal(late.kind, 'PartialObjectMetadata');
  assert.deepEqual(late.metadata.labels, { app: 'late' });
  const reference = shapeOf(meta.pods.getSnapshot());
  meta.factory.shutdown();
  full.factory.shutdown();

  // Servers that refuse (406) or ignore the media type: whole objects, cut down on the client.
  for (const mode of ['refuse', 'ignore']) {
    await sim('/sim/faults', { partialMetadata: mode });
    const seen: Seen[] = [];
    const fallback = await cache(recordingClient(seen), ns, true);
    assert.deepEqual(shapeOf(fallback.pods.getSnapshot()), reference, mode);
    if (mode === 'refuse') {
      assert.equal(seen[0]!.accept.includes('as=PartialObjectMetadataList'), true);
      assert.ok(seen.slice(1).every((s) => s.accept === 'application/json'), 'asked once, then plain JSON');
    }
    fallback.factory.shutdown();
  }
  await sim('/sim/faults/clear', {});
  await podsApi.delete('late');
});
