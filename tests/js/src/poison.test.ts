// After a panic or a trap the module is poisoned: every call throws a
// KubeError with reason `Poisoned` and the panic message, instead of
// `RuntimeError: unreachable` and then borrow errors. This file poisons its
// own process's module (node --test runs each file in a process of its own);
// the timer cases run in child processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import * as kubewasm from 'kubewasm';
import { KubeClient, InformerFactory, KubeError, WorkQueue } from 'kubewasm';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!server) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

// The test-only export: not in the typings, not part of the API.
type TestPanic = (message: string, abort: boolean, delayMs: number) => void;
const testPanic = (kubewasm as unknown as { __kubewasm_test_panic: TestPanic }).__kubewasm_test_panic;

const poisoned = (needle: string) => (e: unknown) => {
  assert.ok(e instanceof KubeError, `expected a KubeError, got ${String(e)}`);
  assert.equal(e.reason, 'Poisoned');
  assert.equal(e.code, 0);
  assert.ok(e.message.includes(needle), `"${e.message}" should include "${needle}"`);
  return true;
};

test('a panic throws KubeError Poisoned with its message, and so does every later call', async () => {
  const client = new KubeClient({ server, token });
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  const unsubscribe = pods.on('add', () => {});
  factory.start();
  await pods.waitForSync();
  const lister = pods.lister();
  const [pod] = lister.list();
  assert.ok(pod, 'the sim has pods');
  const name = pod.metadata.name;
  assert.equal(typeof pods.status.phase, 'string', 'status reads before the trap');
  // Pending when the panic happens: it must reject, not hang.
  const queue = new WorkQueue({});
  const pendingGet = queue.get();

  const message = 'test panic: the cache is on fire (#42)';
  let first: unknown;
  try {
    testPanic(message, false, 0);
  } catch (e) {
    first = e;
  }
  poisoned(message)(first);
  assert.ok(
    (first as Error).cause instanceof WebAssembly.RuntimeError,
    `the trap is the cause, got ${String((first as Error).cause)}`,
  );
  assert.ok((first as Error).message.includes('poison.rs'), 'the panic location is kept');
  await assert.rejects(pendingGet, poisoned(message));

  // Ordinary calls after the trap: a constructor, a getter, methods, a
  // cached object's unread member (a closure into wasm), an async method.
  assert.throws(() => new KubeClient({ server, token }), poisoned(message));
  assert.throws(() => pods.status, poisoned(message));
  assert.throws(() => lister.list(), poisoned(message));
  assert.throws(() => pod.spec, poisoned(message));
  assert.throws(() => queue.add('x'), poisoned(message));
  assert.throws(() => client.resource({ version: 'v1', resource: 'pods' }), poisoned(message));
  assert.throws(() => testPanic('a second panic', false, 0), poisoned(message));
  // Members read before the trap are plain JS data and stay readable.
  assert.equal(pod.metadata.name, name);
  // Cleanup never throws: unsubscribe, stop, free.
  unsubscribe();
  pods.free();
  queue.free();
  // The watch callbacks that arrive after the trap do nothing (no uncaught
  // error): give them a moment.
  await new Promise((r) => setTimeout(r, 200));
});

// Runs `code` (an ES module importing 'kubewasm') in a fresh Node process and
// returns what it printed as JSON.
function child(code: string): Record<string, unknown> {
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const timerCase = (abort: boolean) => `
  import * as k from 'kubewasm';
  const show = (e) => e instanceof k.KubeError
    ? { kube: true, reason: e.reason, message: e.message, cause: String(e.cause) }
    : { kube: false, message: String(e) };
  const uncaught = [];
  process.on('uncaughtException', (e) => uncaught.push(show(e)));
  process.on('unhandledRejection', (e) => uncaught.push(show(e)));
  const queue = new k.WorkQueue({});
  const pending = queue.get().then(() => ({ kube: false, message: 'resolved' }), show);
  k.__kubewasm_test_panic('timer panic (#7)', ${abort}, 20);
  const returned = 'returned';
  await new Promise((r) => setTimeout(r, 300));
  let after;
  try { new k.WorkQueue({}); after = { kube: false, message: 'no error' }; } catch (e) { after = show(e); }
  console.log(JSON.stringify({ returned, uncaught, pending: await pending, after }));
`;

test('a panic in a timer callback poisons the module: reported once, then every call throws', () => {
  const out = child(timerCase(false)) as {
    uncaught: { kube: boolean; reason: string; message: string; cause: string }[];
    pending: { reason: string; message: string };
    after: { reason: string; message: string };
  };
  assert.equal(out.uncaught.length, 1, JSON.stringify(out.uncaught));
  const [reported] = out.uncaught;
  assert.ok(reported?.kube && reported.reason === 'Poisoned', JSON.stringify(reported));
  assert.ok(reported.message.includes('timer panic (#7)'));
  assert.match(reported.cause, /RuntimeError/);
  for (const e of [out.pending, out.after]) {
    assert.equal(e.reason, 'Poisoned', JSON.stringify(e));
    assert.ok(e.message.includes('kubewasm panicked: timer panic (#7)'), e.message);
  }
});

test('a trap without a panic (the path of an out-of-memory abort) poisons the module too', () => {
  const out = child(timerCase(true)) as {
    uncaught: { reason: string; message: string }[];
    pending: { reason: string; message: string };
    after: { reason: string; message: string };
  };
  assert.equal(out.uncaught.length, 1, JSON.stringify(out.uncaught));
  for (const e of [out.uncaught[0], out.pending, out.after]) {
    assert.equal(e?.reason, 'Poisoned', JSON.stringify(e));
    assert.ok(e.message.includes('trapped without a panic'), e.message);
    assert.ok(e.message.includes('unreachable'), e.message);
    assert.match(e.message, /wasm memory \d+ MiB/);
  }
});

// The web entry in a page: the same glue as Node's entry, but a trap in a
// timer reaches `window`'s error event instead of the process.
const pageCase = (abort: boolean, delayMs: number) => `(async () => {
  const k = await import('/web/index.js');
  await k.default();
  const show = (e) => e instanceof k.KubeError
    ? { kube: true, reason: e.reason, message: e.message, cause: String(e.cause) }
    : { kube: false, message: String(e) };
  const uncaught = [];
  addEventListener('error', (ev) => { uncaught.push(show(ev.error)); ev.preventDefault(); });
  const pending = new k.WorkQueue({}).get().then(() => ({ kube: false, message: 'resolved' }), show);
  let first = { kube: false, message: 'returned' };
  try { k.__kubewasm_test_panic('page trap (#9)', ${abort}, ${delayMs}); } catch (e) { first = show(e); }
  await new Promise((r) => setTimeout(r, 300));
  let after;
  try { new k.KubeClient({ server: location.origin }); after = { kube: false, message: 'no error' }; } catch (e) { after = show(e); }
  return { first, uncaught, pending: await pending, after };
})()`;

test('in Chromium, the web entry poisons the same way (a panic in a call, an abort in a timer)', async () => {
  const pkg = fileURLToPath(new URL('../node_modules/kubewasm/', import.meta.url));
  const types: Record<string, string> = { js: 'text/javascript', wasm: 'application/wasm', html: 'text/html' };
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path === '/' ? null : `${pkg}${path.slice(1)}`;
    if (file === null || path.includes('..')) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>poison</title>');
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': types[path.split('.').pop() ?? ''] ?? 'text/plain' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  type Shown = { kube: boolean; reason?: string; message: string; cause?: string };
  type Out = { first: Shown; uncaught: Shown[]; pending: Shown; after: Shown };
  try {
    const run = async (abort: boolean, delayMs: number): Promise<Out> => {
      const page = await browser.newPage();
      await page.goto(base);
      const out = (await page.evaluate(pageCase(abort, delayMs))) as Out;
      await page.close();
      return out;
    };

    const call = await run(false, 0);
    for (const e of [call.first, call.pending, call.after]) {
      assert.ok(e.kube && e.reason === 'Poisoned', JSON.stringify(e));
      assert.ok(e.message.includes('kubewasm panicked: page trap (#9)'), e.message);
    }
    assert.match(call.first.cause ?? '', /RuntimeError/);
    assert.deepEqual(call.uncaught, []);

    const timer = await run(true, 20);
    assert.equal(timer.first.message, 'returned');
    assert.equal(timer.uncaught.length, 1, JSON.stringify(timer.uncaught));
    for (const e of [timer.uncaught[0], timer.pending, timer.after]) {
      assert.ok(e?.kube && e.reason === 'Poisoned', JSON.stringify(e));
      assert.ok(e.message.includes('trapped without a panic'), e.message);
    }
  } finally {
    await browser.close();
    http.close();
  }
});
