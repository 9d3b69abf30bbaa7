// Pod logs against the sim's growing container logs: options, following
// across a container restart, cancelling, and typed errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, KubeError } from 'kubewasm';

import { server, sim, token } from './sim.js';

type Pod = { metadata: { name: string; namespace: string }; spec: { containers: { name: string }[] } };

async function firstPod(client: KubeClient) {
  const { items } = await client.resource({ version: 'v1', resource: 'pods' }).list({});
  const pod = (items as unknown as Pod[])[0]!;
  return { ns: pod.metadata.namespace, name: pod.metadata.name, container: pod.spec.containers[0]!.name };
}

async function collect(it: AsyncIterable<string>, max = Infinity) {
  const out: string[] = [];
  for await (const line of it) {
    out.push(line);
    if (out.length >= max) break;
  }
  return out;
}

const lineNo = (l: string) => Number(/ line (\d+): /.exec(l)?.[1]);

for (const transport of ['node', 'fetch'] as const) {
  test(`logs with tailLines, timestamps, limitBytes and maxLineBytes (${transport})`, async () => {
    const client = new KubeClient({ server, token, transport });
    const { ns, name, container } = await firstPod(client);
    const all = await collect(client.logs(ns, name, { container }));
    assert.ok(all.length >= 10, `${all.length} lines`);
    assert.match(all[0]!, new RegExp(`^${container} \\[\\d+\\] line 0: `));
    all.forEach((l, i) => assert.equal(lineNo(l), i));

    const tail = await collect(client.logs(ns, name, { container, tailLines: 3 }));
    assert.equal(tail.length, 3);
    assert.equal(lineNo(tail[1]!), lineNo(tail[0]!) + 1);
    const stamped = await collect(client.logs(ns, name, { container, tailLines: 2, timestamps: true }));
    assert.ok(stamped.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \S+ \[\d+\] line \d+: /.test(l)), stamped.join('\n'));
    const limited = await collect(client.logs(ns, name, { container, limitBytes: 25 }));
    assert.equal(limited.join('\n').length, 25);
    // Long lines come in pieces no longer than maxLineBytes.
    const pieces = await collect(client.logs(ns, name, { container, tailLines: 2, maxLineBytes: 16 }));
    assert.ok(pieces.length > 2 && pieces.every((p) => Buffer.byteLength(p) <= 16));
  });
}

test('a followed log streams new lines, ends when the container restarts, and previous holds the old run', async () => {
  const client = new KubeClient({ server, token });
  const { ns, name, container } = await firstPod(client);
  await sim('/sim/restart-container', { namespace: ns, name, container });
  const reader = client.logs(ns, name, { container, follow: true, tailLines: 1 }).readable().getReader();
  const seen: string[] = [];
  while (seen.length < 4) {
    const r = await reader.read();
    assert.equal(r.done, false);
    seen.push(r.value!);
  }
  seen.slice(1).forEach((l, i) => assert.equal(lineNo(l), lineNo(seen[0]!) + i + 1, 'consecutive lines as they are written'));
  const run = /\[(\d+)\]/.exec(seen[0]!)![1];
  const restarted = await sim<{ restartCount: Record<string, number> }>('/sim/restart-container', { namespace: ns, name, container });
  assert.equal(restarted.restartCount[container], Number(run) + 1);
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    seen.push(r.value!);
  }
  const previous = await collect(client.logs(ns, name, { container, previous: true }));
  assert.equal(previous.at(-1), seen.at(-1), 'the followed stream got the old run to its last line');
  assert.ok(previous.every((l) => l.includes(`[${run}]`)));
  const next = await collect(client.logs(ns, name, { container, follow: true }), 3);
  assert.match(next[0]!, new RegExp(`\\[${Number(run) + 1}\\] line 0: `));
});

test('cancelling a followed log aborts it; errors are typed', async () => {
  const client = new KubeClient({ server, token, transport: 'fetch' });
  const { ns, name, container } = await firstPod(client);
  const stream = client.logs(ns, name, { container, follow: true });
  const got = await collect(stream, 2);
  assert.equal(got.length, 2);
  assert.deepEqual(await stream.next(), { value: undefined, done: true }, 'break returned the iterator');
  const readable = client.logs(ns, name, { container, follow: true }).readable();
  const reader = readable.getReader();
  await reader.read();
  await reader.cancel();

  const rejects = (p: Promise<unknown>, code: number, reason: string) =>
    assert.rejects(p, (e: unknown) => e instanceof KubeError && e.code === code && e.reason === reason);
  await rejects(client.logs(ns, 'no-such-pod', {}).next(), 404, 'NotFound');
  await rejects(client.logs(ns, name, { container: 'nope' }).next(), 400, 'BadRequest');
  // No namespace (a pod's `metadata.namespace ?? ''`): refused before a request to another URL.
  await assert.rejects(client.logs('', name, {}).next(), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /needs a namespace/.test(e.message));
  await sim('/sim/seed', { namespaces: 3, pods: 30, seed: 1 });
  const fresh = await firstPod(client);
  await rejects(client.logs(fresh.ns, fresh.name, { container: fresh.container, previous: true }).next(), 400, 'BadRequest');
  assert.throws(() => client.logs(ns, name, { tailLines: -1 as number }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});
