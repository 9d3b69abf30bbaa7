// `queue: 'real'` (client-go's RealFIFO) keeps the same cache as the default
// DeltaFIFO, with handlers that mirror it, against the sim under churn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, InformerFactory, KubeError, type KubeObject } from 'kubewasm';

import { server, sim, simState, token, until } from './sim.js';

test("both queues cache the same objects and their handlers' maps equal the cache", async () => {
  await sim('/sim/seed', { namespaces: 3, pods: 300, seed: 7 });
  const client = new KubeClient({ server, token });
  const runs = (['delta', 'real'] as const).map((queue) => {
    const factory = new InformerFactory(client);
    const pods = factory.informer({ version: 'v1', resource: 'pods', queue });
    const mirror = new Map<string, string>();
    const key = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
    pods.addEventHandler({
      add: (o) => void mirror.set(key(o), o.metadata.resourceVersion!),
      update: (_old, o) => void mirror.set(key(o), o.metadata.resourceVersion!),
      delete: (o) => void (o && mirror.delete(key(o))),
    });
    factory.start();
    return { factory, pods, mirror };
  });
  await Promise.all(runs.map((r) => r.pods.waitForSync()));
  await sim('/sim/churn/steps', { steps: 400, seed: 3 });
  const expected = await simState();
  for (const r of runs) {
    await until(() => r.pods.getSnapshot().length === Object.keys(expected).length && r.pods.getSnapshot().every((p) => expected[`${p.metadata.namespace}/${p.metadata.name}`] === p.metadata.resourceVersion));
    // Handlers run after the store has the change: the mirror catches up once they have run.
    const mirrored = () => JSON.stringify(Object.fromEntries([...r.mirror].sort()));
    await until(() => mirrored() === JSON.stringify(Object.fromEntries(Object.entries(expected).sort()))).catch(() => undefined);
    assert.deepEqual(Object.fromEntries([...r.mirror].sort()), Object.fromEntries(Object.entries(expected).sort()));
    r.factory.shutdown();
  }
  assert.throws(() => new InformerFactory(client).informer({ version: 'v1', resource: 'pods', queue: 'fifo' as 'real' }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});
