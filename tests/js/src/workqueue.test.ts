// WorkQueue from TypeScript, through the package's Node entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue, KubeError, keyOf, splitKey } from 'kubewasm';

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('duplicates collapse and a key is handed out once until done', async () => {
  const q = new WorkQueue({ name: 'dedup' });
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len, 2);
  const first = await q.get();
  assert.equal(first, 'a');
  q.add('a'); // re-added while processing: not handed out again yet
  assert.equal(await q.get(), 'b');
  assert.equal(q.len, 0);
  q.done('a'); // now it comes back, once
  assert.equal(q.len, 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  q.done('b');
  q.shutdown();
  assert.equal(await q.get(), undefined);
  const m = q.metrics();
  assert.equal(m.name, 'dedup');
  assert.equal(m.depth, 0);
  assert.ok(m.adds >= 3);
  assert.equal(m.queueLatency.buckets.length, 11);
});

test('runWorkers retries a failing key with backoff, then forgets it', async () => {
  const q = new WorkQueue({ baseDelayMs: 5 });
  const attempts: number[] = [];
  const errors: string[] = [];
  const seenRequeues: number[] = [];
  let resolveDone!: () => void;
  const finished = new Promise<void>((r) => (resolveDone = r));
  const pool = q.runWorkers(
    2,
    async (key: string) => {
      attempts.push(performance.now());
      seenRequeues.push(q.numRequeues(key));
      if (attempts.length <= 3) throw new Error(`boom ${attempts.length}`);
      resolveDone();
    },
    { onError: (key: string, err: unknown) => errors.push(`${key}: ${(err as Error).message}`) },
  );
  q.add('pod-1');
  await finished;
  await pool.stop();
  assert.equal(attempts.length, 4);
  assert.deepEqual(errors, ['pod-1: boom 1', 'pod-1: boom 2', 'pod-1: boom 3']);
  assert.deepEqual(seenRequeues, [0, 1, 2, 3]);
  assert.equal(q.numRequeues('pod-1'), 0, 'forgotten after success');
  // Backoff 5, 10, 20 ms: the last attempt is at least 35 ms after the first.
  assert.ok(attempts[3]! - attempts[0]! >= 30, `backoff too short: ${attempts[3]! - attempts[0]!} ms`);
  assert.equal(pool.running, 0);
});

test('bad options throw a KubeError, not a crash', () => {
  assert.throws(
    () => new WorkQueue({ baseDelayMs: -1 }),
    (e: unknown) => e instanceof KubeError && e instanceof Error && e.reason === 'Invalid' && e.code === 0,
  );
  // The module still works after the error.
  const q = new WorkQueue({});
  q.add('x');
  assert.equal(q.len, 1);
});

test('options are optional, as the README shows: new WorkQueue() and runWorkers(n, reconcile)', async () => {
  const q = new WorkQueue();
  const seen: string[] = [];
  let resolveDone!: () => void;
  const finished = new Promise<void>((r) => (resolveDone = r));
  const pool = q.runWorkers(1, (key) => {
    seen.push(key);
    if (seen.length === 1) return { requeueAfterMs: 10 };
    resolveDone();
    return undefined;
  });
  q.add('a');
  await finished;
  await pool.stop();
  assert.deepEqual(seen, ['a', 'a'], 'requeueAfterMs brings the key back');
  assert.equal(q.metrics().name, '');
});

test('a reconcile that returns something other than a ReconcileResult is reported and retried, not taken as success', async () => {
  const q = new WorkQueue({ baseDelayMs: 1 });
  const errors: unknown[] = [];
  let calls = 0;
  let resolveDone!: () => void;
  const finished = new Promise<void>((r) => (resolveDone = r));
  const pool = q.runWorkers(
    1,
    ((_key: string) => {
      calls++;
      if (calls === 1) return true; // meant as "requeue"
      if (calls === 2) return 42;
      resolveDone();
      return undefined;
    }) as unknown as (key: string) => void,
    { onError: (_key: string, err: unknown) => errors.push(err) },
  );
  q.add('k');
  await finished;
  await pool.stop();
  assert.equal(calls, 3);
  assert.equal(errors.length, 2);
  for (const e of errors) assert.ok(e instanceof KubeError && e.reason === 'Invalid' && /reconcile returned/.test(e.message), String(e));
  assert.equal(q.numRequeues('k'), 0, 'forgotten after the success');
});

test('keyOf and splitKey agree with the cache keys (client-go MetaNamespaceKeyFunc, SplitMetaNamespaceKey)', () => {
  assert.equal(keyOf({ metadata: { namespace: 'default', name: 'web' } }), 'default/web');
  assert.equal(keyOf({ metadata: { name: 'node-1' } }), 'node-1');
  assert.equal(keyOf({ metadata: { namespace: '', name: 'node-1' } }), 'node-1');
  assert.deepEqual(splitKey('default/web'), { namespace: 'default', name: 'web' });
  assert.deepEqual(splitKey('node-1'), { name: 'node-1' });
  for (const key of ['a/b/c', '//']) {
    assert.throws(() => splitKey(key), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && e.message.includes(key), key);
  }
  for (const bad of [{ metadata: {} }, {}, null, { metadata: { name: 7 } }] as unknown[]) {
    assert.throws(() => keyOf(bad as { metadata: { name: string } }), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid', JSON.stringify(bad));
  }
  assert.throws(() => splitKey(5 as unknown as string), (e: unknown) => e instanceof KubeError && e.reason === 'Invalid');
});

test('shutdownWithDrain and a pool stop shut the queue down at the call, as client-go does before it waits', async () => {
  const q = new WorkQueue();
  q.add('taken');
  assert.equal(await q.get(), 'taken');
  const drained = q.shutdownWithDrain();
  assert.equal(q.shuttingDown, true, 'at the call, not a microtask later');
  q.add('late'); // an event handler in the same tick: ignored
  assert.equal(q.len, 0);
  let done = false;
  void drained.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(done, false, 'waits for the key in flight');
  q.done('taken');
  await drained;
  assert.equal(await q.get(), undefined);

  const q2 = new WorkQueue();
  const pool = q2.runWorkers(1, async () => {});
  const stopped = pool.stop();
  assert.equal(q2.shuttingDown, true);
  q2.add('late');
  assert.equal(q2.len, 0);
  await stopped;
});

test('shutdownWithDrain with workers running resolves once they have done every queued key, and none runs after it; stop() finishes the queue too', async () => {
  // Workers that await between keys leave nothing in flight for a moment:
  // the drain must not resolve there with keys still queued.
  const q = new WorkQueue({ name: 'teardown' });
  let reconciled = 0;
  let released = false;
  let afterRelease = 0;
  const pool = q.runWorkers(2, async () => {
    await new Promise((r) => setTimeout(r, 1));
    if (released) afterRelease++;
    reconciled++;
  });
  for (let i = 0; i < 200; i++) q.add(`k${i}`);
  await q.shutdownWithDrain();
  released = true;
  const atDrain = reconciled;
  await until(() => pool.running === 0);
  assert.equal(atDrain, 200, 'every queued key was done when the drain resolved');
  assert.equal(afterRelease, 0, 'no reconcile ran after the drain resolved');
  assert.equal(reconciled, atDrain);

  // A pool's graceful stop finishes every queued key.
  const q2 = new WorkQueue({ name: 'stop' });
  let n = 0;
  const pool2 = q2.runWorkers(2, async () => {
    await new Promise((r) => setTimeout(r, 1));
    n++;
  });
  for (let i = 0; i < 50; i++) q2.add(`k${i}`);
  await pool2.stop();
  assert.equal(n, 50);
});

test('qps and burst read as the client reads them: 0 keeps the default, a negative qps or Infinity turns the bucket off', async () => {
  // burst 0 used to park every rate-limited key for good (a delay of ~1.8e22 ms).
  const q = new WorkQueue({ burst: 0 });
  const d = q.addRateLimited('k');
  assert.ok(d <= 5, `burst 0 is the default burst: ${d} ms`);
  assert.equal(await q.get(), 'k', 'and the key arrives');
  q.done('k');
  q.shutdown();
  // qps 0 is the default 10 per second: the 101st key waits ~100 ms, not forever.
  const zero = new WorkQueue({ qps: 0 });
  const delays = Array.from({ length: 101 }, (_, i) => zero.addRateLimited(`k${i}`));
  assert.ok(delays[99]! <= 5 && delays[100]! > 50 && delays[100]! <= 100, `qps 0: ${delays.slice(98).join(', ')}`);
  zero.shutdown();
  // No bucket: only the per-item backoff.
  for (const qps of [Infinity, -1]) {
    const off = new WorkQueue({ qps, burst: 1 });
    const all = Array.from({ length: 300 }, (_, i) => off.addRateLimited(`k${i}`));
    assert.ok(all.every((ms) => ms <= 5), `qps ${qps}: max ${Math.max(...all)} ms`);
    off.shutdown();
  }
  for (const bad of [{ qps: Number.NaN }, { qps: '5' }, { burst: -1 }, { burst: Infinity }, { burst: Number.NaN }]) {
    assert.throws(
      () => new WorkQueue(bad as object),
      (e: unknown) => e instanceof KubeError && e.reason === 'Invalid' && /`(qps|burst)`/.test(e.message),
      JSON.stringify(bad),
    );
  }
});

test('shutdownWithDrain resolves once its workers have exited; after abort() none counts as running', async () => {
  const q = new WorkQueue();
  const pool = q.runWorkers(2, () => new Promise<void>((r) => setTimeout(r, 20)));
  q.add('a');
  q.add('b');
  q.add('c');
  await new Promise((r) => setTimeout(r, 5));
  await q.shutdownWithDrain();
  assert.equal(pool.running, 0);

  const q2 = new WorkQueue();
  let calls = 0;
  const pool2 = q2.runWorkers(2, () => {
    calls++;
    return new Promise<void>((r) => setTimeout(r, 20));
  });
  q2.add('a');
  q2.add('b');
  q2.add('c');
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(pool2.running, 2);
  pool2.abort();
  assert.equal(pool2.running, 0, 'at once');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(calls, 2, 'no reconcile after the abort');
  assert.equal(q2.metrics().processing, 0, 'the keys in flight were marked done');
  await pool2.stop();
});
