// Runs the READMEs' ```ts browser blocks as module scripts of a page and the
// ```ts worker blocks as module Web Workers, in headless Chromium. They are
// served the way the README's `kubectl proxy --www` advice serves them: one
// origin for the page, the package and the API (proxied to the sim with its
// token), on the port the blocks name (replaced by a free one).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { blocksFor, toJs, where, type Block } from './support/readme.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim || !token) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const pkg = fileURLToPath(new URL('../node_modules/kubewasm/', import.meta.url));
const types: Record<string, string> = { js: 'text/javascript', wasm: 'application/wasm' };
/** The port the README blocks use for `kubectl proxy`. */
const PROXY_PORT = '8001';

let server: Server;
let origin = '';
let browser: Browser;
const scripts = new Map<string, string>();

/** The block as a module the browser can load: the bare `kubewasm` imports point at the package's files. */
function served(b: Block): string {
  const code = toJs(b)
    .replaceAll(/from 'kubewasm'/g, "from '/pkg/web/index.js'")
    .replaceAll(/from 'kubewasm\/shared'/g, "from '/pkg/shared.js'");
  assert.ok(code.includes(`127.0.0.1:${PROXY_PORT}`) || b.tags.includes('worker'), `${where(b)} names the proxy's port`);
  return `${code.replaceAll(`http://127.0.0.1:${PROXY_PORT}`, origin)}\nglobalThis.__blockDone = true;\n`;
}

before(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/api/') || path.startsWith('/apis/') || path === '/api' || path === '/apis') {
      // What kubectl proxy does: forward with the credentials added.
      const up = new URL(req.url ?? '/', sim);
      const out = request(up, { method: req.method, headers: { ...req.headers, host: up.host, authorization: `Bearer ${token}` } }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
      return;
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><link rel="icon" href="data:,"><title>readme</title>');
      return;
    }
    const script = scripts.get(path);
    if (script !== undefined) {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      return;
    }
    if (path.startsWith('/pkg/') && !path.includes('..')) {
      readFile(pkg + path.slice('/pkg/'.length)).then(
        (body) => res.writeHead(200, { 'content-type': types[path.split('.').pop() ?? ''] ?? 'text/plain' }).end(body),
        () => res.writeHead(404).end(),
      );
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});

after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  server?.close();
});

const simList = async (path: string): Promise<unknown[]> =>
  ((await (await fetch(`${sim}${path}`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { items: unknown[] }).items;

/** A fresh page of the origin, collecting console lines and errors. */
async function openPage(): Promise<{ page: Page; logs: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const logs: string[] = [];
  const errors: string[] = [];
  page.on('console', (m) => (m.type() === 'log' ? logs.push(m.text()) : m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${origin}/`);
  return { page, logs, errors };
}

test('the READMEs have ```ts browser blocks, and each runs as a module script of a page', async () => {
  const blocks = blocksFor('browser');
  assert.ok(blocks.length >= 1, 'at least the page quick start');
  for (const [i, b] of blocks.entries()) {
    scripts.set(`/browser-${i}.js`, served(b));
    const { page, logs, errors } = await openPage();
    try {
      await page.addScriptTag({ type: 'module', url: `/browser-${i}.js` });
      await page.waitForFunction(() => (globalThis as { __blockDone?: boolean }).__blockDone === true || undefined, undefined, { timeout: 20_000 })
        .catch((e: Error) => assert.fail(`${where(b)} did not finish: ${e.message}\n${errors.join('\n')}`));
      assert.deepEqual(errors, [], where(b));
      if (b.heading === 'Quick start (page or bundler)') {
        const all = (await simList('/api/v1/namespaces/default/pods')).length;
        const web = (await simList('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb')).length;
        assert.ok(web > 0 && all > web);
        assert.deepEqual(logs, [`${web} of ${all} pods run app=web`], where(b));
        assert.equal(await page.title(), `${all} pods`, `${where(b)}: render ran`);
      }
      if (b.heading.startsWith('One cache for every tab')) {
        const all = (await simList('/api/v1/namespaces/default/pods')).length;
        assert.deepEqual(logs, [`${all} pods; watches held by: shared-worker`], where(b));
      }
    } finally {
      await page.close();
    }
  }
});

test('the READMEs have ```ts worker blocks, and each runs as a module Web Worker', async () => {
  const blocks = blocksFor('worker');
  assert.ok(blocks.length >= 1, 'at least the Web Worker example');
  const pods = (await simList('/api/v1/pods')).length;
  for (const [i, b] of blocks.entries()) {
    scripts.set(`/worker-${i}.js`, served(b));
    const { page, errors } = await openPage();
    try {
      // The worker example posts { diff, changed }: every pod arrives as an added key with its object.
      const seen = await page.evaluate(async ({ url, want }) => {
        const w = new Worker(url, { type: 'module' });
        const keys = new Set<string>();
        let objects = 0;
        return await new Promise<{ keys: number; objects: number; error?: string }>((resolve) => {
          const done = (error?: string) => { w.terminate(); resolve({ keys: keys.size, objects, ...(error ? { error } : {}) }); };
          w.onerror = (e) => done(e.message);
          w.onmessage = (e: MessageEvent<{ diff: { added: string[] }; changed: ({ metadata: { name: string } } | undefined)[] }>) => {
            for (const k of e.data.diff.added) keys.add(k);
            objects += e.data.changed.filter((o) => o && typeof o.metadata.name === 'string').length;
            if (keys.size >= want) done();
          };
          setTimeout(() => done('timed out'), 20_000);
        });
      }, { url: `/worker-${i}.js`, want: pods });
      assert.equal(seen.error, undefined, `${where(b)}: ${seen.error}`);
      assert.equal(seen.keys, pods, `${where(b)}: every pod added`);
      assert.ok(seen.objects >= pods, `${where(b)}: each added key came with its object`);
      assert.deepEqual(errors, [], where(b));
    } finally {
      await page.close();
    }
  }
});
