// The demo dashboard in headless Chromium (playwright-core, Debian's chromium)
// against kubewasm-sim serving the built site same-origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const artifacts = join(root, 'tests', 'artifacts');
mkdirSync(artifacts, { recursive: true });

let sim, url, browser, page;
const pageErrors = [];

async function startSim() {
  const proc = spawn(join(root, 'target', 'release', 'kubewasm-sim'),
    ['--port', '0', '--static-dir', join(root, 'target', 'demo-site'), '--namespaces', '5', '--pods', '300', '--seed', '3'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/LISTENING (\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (c) => reject(new Error(`kubewasm-sim exited with ${c}`)));
  });
  return { proc, url: line };
}

const sim$ = async (path, body) => (await fetch(url + path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) })).json();
const simCount = async () => Object.keys((await sim$('/sim/state?resource=pods')).items).length;
const tableCount = () => page.evaluate(() => Number(document.getElementById('count').dataset.count || -1));
const cachedState = () => page.evaluate(() => {
  const inf = window.kubewasmDashboard.state.informer;
  return Object.fromEntries(inf.getSnapshot().map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p.metadata.resourceVersion]));
});
async function until(cond, ms = 10_000, what = 'condition') {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  ({ proc: sim, url } = await startSim());
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(url + '/');
});

after(async () => {
  await browser?.close();
  sim?.kill();
});

test('the pod table reaches the sim\'s pod count', async () => {
  const want = await simCount();
  await until(async () => (await tableCount()) === want, 15_000, `count ${want}`);
  await until(async () => (await page.locator('#table tbody tr').count()) > 0, 5_000, 'rows');
  await page.screenshot({ path: join(artifacts, 'dashboard-pods.png') });
  assert.deepEqual(pageErrors, []);
});

test('a pod deleted through the API disappears within 1 s', async () => {
  const key = await page.locator('#table tbody tr').first().getAttribute('data-key');
  const [ns, name] = key.split('/');
  const r = await fetch(`${url}/api/v1/namespaces/${ns}/pods/${name}`, { method: 'DELETE' });
  assert.equal(r.status, 200);
  const t0 = Date.now();
  await until(async () => (await page.locator(`#table tbody tr[data-key="${key}"]`).count()) === 0, 1_000, 'row removal');
  assert.ok(Date.now() - t0 <= 1_000);
});

test('a label selector filters the table; a malformed one shows an inline error', async () => {
  await page.fill('#selector', 'app=web');
  await until(async () => {
    const labels = await page.locator('#table tbody td.labels').allTextContents();
    return labels.length > 0 && labels.every((l) => l.split(', ').includes('app=web'));
  }, 5_000, 'filtered rows');
  await page.screenshot({ path: join(artifacts, 'dashboard-selector.png') });
  await page.fill('#selector', 'app in (web');
  await until(async () => (await page.textContent('#selector-error')).length > 0, 5_000, 'inline error');
  assert.match(await page.textContent('#selector-error'), /at \d+/);
  await page.screenshot({ path: join(artifacts, 'dashboard-selector-error.png') });
  await page.fill('#selector', '');
  await until(async () => (await page.textContent('#selector-error')) === '', 5_000, 'error cleared');
});

test('a dropped watch shows a reconnect and recovers to the sim\'s state', async () => {
  const before = await page.evaluate(() => window.kubewasmDashboard.state.informer.status.reconnects);
  await sim$('/sim/faults', { status429: { count: 1, retryAfterSeconds: 1 } });
  await sim$('/sim/drop-watches', {});
  await sim$('/sim/churn/steps', { steps: 20, seed: 5 });
  await until(async () => (await page.evaluate(() => window.kubewasmDashboard.state.informer.status.reconnects)) > before, 10_000, 'reconnect');
  await until(async () => {
    const want = (await sim$('/sim/state?resource=pods')).items;
    return JSON.stringify(await cachedState()) === JSON.stringify(Object.fromEntries(Object.entries(want).sort()));
  }, 15_000, 'state equal to the sim');
  await sim$('/sim/faults/clear', {});
});

test('a compaction forces a relist and the table ends equal to the sim', async () => {
  const before = await page.evaluate(() => window.kubewasmDashboard.state.informer.status.relists);
  // Hold the re-watch back while the history it needs is compacted away.
  await sim$('/sim/faults', { latencyMs: 1500 });
  await sim$('/sim/drop-watches', {});
  await sim$('/sim/churn/steps', { steps: 10, seed: 6 });
  await sim$('/sim/compact', {});
  await sim$('/sim/churn/steps', { steps: 10, seed: 7 });
  await new Promise((r) => setTimeout(r, 200));
  await sim$('/sim/faults/clear', {});
  await until(async () => (await page.evaluate(() => window.kubewasmDashboard.state.informer.status.relists)) > before, 20_000, 'relist');
  await until(async () => {
    const want = (await sim$('/sim/state?resource=pods')).items;
    return JSON.stringify(await cachedState()) === JSON.stringify(Object.fromEntries(Object.entries(want).sort()))
      && (await tableCount()) === Object.keys(want).length;
  }, 20_000, 'state equal to the sim');
  await page.screenshot({ path: join(artifacts, 'dashboard-after-relist.png') });
  assert.deepEqual(pageErrors, []);
});

test('an informer in a Web Worker posts diffs that add up to the sim\'s pods', async () => {
  const worker = await browser.newPage();
  worker.on('pageerror', (e) => pageErrors.push(String(e)));
  await worker.goto(url + '/worker.html');
  const want = await simCount();
  await until(async () => Number(await worker.evaluate(() => document.getElementById('count').dataset.count || -1)) === want, 15_000, 'worker count');
  assert.ok(Number(await worker.textContent('#diffs')) >= 1);
  await worker.screenshot({ path: join(artifacts, 'worker.png') });
  await worker.close();
  assert.deepEqual(pageErrors, []);
});
