// API server `Warning` headers reach `onWarning`, each text once per client,
// over the Node transport and over fetch; the sim warns about deprecated
// node labels in a pod's nodeSelector, as the API server does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, KubeError, type ApiWarning, type KubeObject } from 'kubewasm';

import { server, token } from './sim.js';

const deprecated = 'spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead';
const pod = (name: string, nodeSelector: Record<string, string>) =>
  ({ metadata: { name }, spec: { nodeSelector, containers: [{ name: 'c', image: 'busybox' }] } }) as KubeObject;

for (const transport of ['node', 'fetch'] as const) {
  test(`warnings are delivered once per text (${transport} transport)`, async () => {
    const seen: ApiWarning[] = [];
    const client = new KubeClient({ server, token, transport, onWarning: (w) => seen.push(w) });
    const pods = client.resource({ version: 'v1', resource: 'pods', namespace: 'default' });
    const name = `warned-${transport}-${Date.now()}`;
    await pods.create(pod(name, { 'beta.kubernetes.io/arch': 'amd64' }), { dryRun: true });
    assert.deepEqual(seen, [{ code: 299, agent: '-', text: deprecated }]);
    const created = await pods.create(pod(name, { 'beta.kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux' }), {});
    assert.deepEqual(
      seen.map((w) => w.text),
      [deprecated, 'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead'],
    );
    await pods.patch(name, undefined, { metadata: { labels: { touched: 'yes' } } }, 'merge', {});
    assert.equal(seen.length, 2, 'the same texts again are not repeated');
    // A pod without deprecated labels brings no warning.
    await pods.create(pod(`${name}-clean`, { 'kubernetes.io/arch': 'amd64' }), {});
    assert.equal(seen.length, 2);
    await pods.delete(created.metadata.name);
    await pods.delete(`${name}-clean`);
  });
}

test('the default prints each warning once with console.warn; false ignores them; a throwing handler is contained', async () => {
  const pods = (c: KubeClient) => c.resource({ version: 'v1', resource: 'pods', namespace: 'default' });
  const printed: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void printed.push(args.join(' '));
  try {
    const byDefault = pods(new KubeClient({ server, token }));
    const quiet = pods(new KubeClient({ server, token, onWarning: false }));
    for (let i = 0; i < 2; i++) {
      await byDefault.create(pod(`default-${i}`, { 'beta.kubernetes.io/arch': 'arm64' }), { dryRun: true });
      await quiet.create(pod(`quiet-${i}`, { 'beta.kubernetes.io/arch': 'arm64' }), { dryRun: true });
    }
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(printed, [`Warning: ${deprecated}`]);

  const errors: unknown[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  try {
    const throwing = pods(new KubeClient({ server, token, onWarning: () => { throw new Error('handler bug'); } }));
    const created = await throwing.create(pod('throwing', { 'beta.kubernetes.io/arch': 'arm64' }), { dryRun: true });
    assert.equal(created.metadata.name, 'throwing', 'the request still succeeds');
  } finally {
    console.error = error;
  }
  assert.equal(errors.length, 1);
  assert.throws(() => new KubeClient({ server, onWarning: 'yes' as unknown as false }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});
