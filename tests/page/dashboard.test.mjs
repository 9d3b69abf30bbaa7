// The demo dashboard (the built Vite app) in headless Chromium against
// kubewasm-sim, which serves it same-origin. Screenshots go to tests/artifacts/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, launch, startPrefixProxy, startRecordingProxy, startSim, until } from './harness.mjs';

let sim, browser, page;
const pageErrors = [];
const shot = (name) => page.screenshot({ path: join(artifacts, `${name}.png`) });

const simPods = async () => (await sim.call('/sim/state?resource=pods')).items;
const sorted = (o) => JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));
const cachedPods = () => page.evaluate(() => window.kubewasmDashboard.state('pods'));
const rowsShown = () => page.evaluate(() => Number(document.getElementById('table').dataset.rows));
const visible = (cls) => page.locator(`#table tbody tr:not(.pad) td.${cls}`).allTextContents();
const dash = (fn, arg) => page.evaluate(fn, arg);
const listCount = async (query) => {
  const r = await fetch(`${sim.url}/api/v1/pods?${query}`);
  return (await r.json()).items.length;
};

/** Cache and table both equal the sim's pods. */
async function convergesToSim(what) {
  await until(async () => {
    const want = await simPods();
    return sorted(await cachedPods()) === sorted(want) && (await rowsShown()) === Object.keys(want).length;
  }, 20_000, what);
  // The rows kept from diffs are exactly the informer's snapshot, in its order.
  await until(() => dash(() => {
    const d = window.kubewasmDashboard;
    const snap = d.cache('pods').getSnapshot().map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    return JSON.stringify(d.rowKeys()) === JSON.stringify(snap);
  }), 2_000, `${what}: rows in snapshot order`);
}

/** Record every text the connection status shows, however briefly. */
const recordStatusTexts = () => page.evaluate(() => {
  const seen = (window.__statusTexts = []);
  const grab = () => {
    seen.push(document.getElementById('status').textContent);
    const row = document.querySelector('#connections tr[data-informer="pods"] td.state');
    if (row) seen.push(row.textContent);
  };
  window.__statusObserver?.disconnect();
  window.__statusObserver = new MutationObserver(grab);
  window.__statusObserver.observe(document.querySelector('header'), { subtree: true, childList: true, characterData: true });
  window.__statusObserver.observe(document.getElementById('connections'), { subtree: true, childList: true, characterData: true });
});
const statusTexts = () => page.evaluate(() => window.__statusTexts);

before(async () => {
  sim = await startSim(['--namespaces', '5', '--pods', '300', '--seed', '3']);
  browser = await launch();
  page = await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(sim.url + '/');
});

after(async () => {
  await browser?.close();
  sim?.stop();
});

test('the page loads and the pod table reaches the sim\'s pod count', async () => {
  const want = Object.keys(await simPods()).length;
  assert.equal(want, 300);
  await until(async () => (await rowsShown()) === want, 15_000, `${want} rows`);
  assert.equal(await page.getAttribute('#count', 'data-count'), String(want));
  // Virtualized: only the viewport's rows exist in the DOM.
  const inDom = await page.locator('#table tbody tr:not(.pad)').count();
  assert.ok(inDom > 10 && inDom < 120, `${inDom} rows in the DOM`);
  await until(async () => /watching/.test(await page.textContent('#status')), 5_000, 'watching');
  // The list of 300 pods (about 750 KB) came gzipped, as the API server sends it to a browser; fetch decoded it.
  assert.ok((await sim.call('/sim/stats')).gzippedResponses > 0, 'a gzipped list');
  await shot('dashboard-pods');
  assert.deepEqual(pageErrors, []);
});

test('discovery lists every resource, the CRD included, and any of them can be browsed', async () => {
  const labels = await page.locator('#resource option').allTextContents();
  for (const r of ['pods (Pod)', 'deployments (Deployment)', 'widgets (Widget)', 'nodes (Node)']) assert.ok(labels.includes(r), `${r} in ${labels}`);
  const widgets = await page.locator('#resource option', { hasText: 'widgets (Widget)' }).getAttribute('value');
  await page.selectOption('#resource', widgets);
  try {
    const want = Object.keys((await sim.call('/sim/state?resource=widgets')).items).length;
    assert.ok(want > 0);
    await until(async () => (await rowsShown()) === want, 10_000, `${want} widgets`);
    const statuses = await visible('status');
    assert.ok(statuses.length > 0 && statuses.every((s) => s.length > 0), `widget statuses: ${statuses}`);
    await shot('dashboard-widgets');
  } finally {
    const pods = await page.locator('#resource option', { hasText: 'pods (Pod)' }).getAttribute('value');
    await page.selectOption('#resource', pods);
  }
  await until(async () => (await rowsShown()) === 300, 10_000, 'back to pods');
});

test('a pod deleted through the API disappears within 1 s', async () => {
  const key = await page.locator('#table tbody tr:not(.pad)').first().getAttribute('data-key');
  const [ns, name] = key.split('/');
  const r = await fetch(`${sim.url}/api/v1/namespaces/${ns}/pods/${name}`, { method: 'DELETE' });
  assert.equal(r.status, 200);
  const t0 = Date.now();
  await page.waitForFunction((k) => !document.querySelector(`#table tbody tr[data-key="${k}"]`)
    && Number(document.getElementById('table').dataset.rows) === 299, key, { polling: 'raf', timeout: 1_000 });
  assert.ok(Date.now() - t0 <= 1_000, `${Date.now() - t0} ms`);
});

test('a label selector filters the table; a malformed one shows an inline error', async () => {
  const want = await listCount('labelSelector=app%3Dweb');
  assert.ok(want > 0 && want < 299);
  await page.fill('#selector', 'app=web');
  await until(async () => (await rowsShown()) === want, 5_000, `${want} rows for app=web`);
  const labels = await visible('labels');
  assert.ok(labels.length > 0 && labels.every((l) => l.split(', ').includes('app=web')), labels.join(' | '));
  await shot('dashboard-selector');

  await page.fill('#selector', 'app in (web');
  await until(async () => (await page.textContent('#selector-error')).length > 0, 5_000, 'inline error');
  assert.equal(await page.getAttribute('#selector', 'aria-invalid'), 'true');
  assert.match(await page.textContent('#selector-error'), /\d/, 'the error says where');
  // The last valid filter stays in place while the selector is being typed.
  assert.equal(await rowsShown(), want);
  await shot('dashboard-selector-error');

  await page.fill('#selector', 'app in (web,api),tier!=data');
  const want2 = await listCount('labelSelector=' + encodeURIComponent('app in (web,api),tier!=data'));
  await until(async () => (await rowsShown()) === want2, 5_000, `${want2} rows for a set selector`);
  assert.equal(await page.textContent('#selector-error'), '');
  assert.equal(await page.getAttribute('#selector', 'aria-invalid'), null);
  await page.fill('#selector', '');
  await until(async () => (await rowsShown()) === 299, 5_000, 'unfiltered');
});

test('namespace and text filters narrow the table; headers sort it', async () => {
  const namespaces = (await (await fetch(`${sim.url}/api/v1/namespaces`)).json()).items.map((n) => n.metadata.name);
  const counts = await Promise.all(namespaces.map((n) => listCount(`fieldSelector=metadata.namespace%3D${n}`)));
  // The second-busiest namespace: a real subset of the pods.
  const ns = namespaces.map((n, i) => [n, counts[i]]).sort((a, b) => b[1] - a[1])[1][0];
  await page.selectOption('#namespace', ns);
  const want = await listCount(`fieldSelector=metadata.namespace%3D${ns}`);
  assert.ok(want > 0 && want < 299);
  await until(async () => (await rowsShown()) === want, 5_000, `${want} rows in ${ns}`);
  assert.ok((await visible('ns')).every((n) => n === ns));
  await page.fill('#text', 'web');
  await until(async () => {
    const names = await visible('name');
    return names.length > 0 && names.every((n) => n.includes('web')) && (await rowsShown()) < want;
  }, 5_000, 'text filter');
  await page.fill('#text', '');
  await page.click('#table th[data-sort="name"]');
  await until(async () => {
    const names = await visible('name');
    return names.length > 5 && names.every((n, i) => i === 0 || names[i - 1] <= n);
  }, 5_000, 'sorted by name');
  await page.click('#table th[data-sort="name"]');
  await until(async () => {
    const names = await visible('name');
    return names.length > 5 && names.every((n, i) => i === 0 || names[i - 1] >= n);
  }, 5_000, 'sorted by name, descending');
  await page.click('#table th[data-sort="namespace"]');
  await page.selectOption('#namespace', '');
  await until(async () => (await rowsShown()) === 299, 5_000, 'all namespaces');
});

test('the detail pane shows the selected object live, as YAML or JSON, with its events', async () => {
  const row = page.locator('#table tbody tr:not(.pad)').nth(2);
  const key = await row.getAttribute('data-key');
  const [ns, name] = key.split('/');
  await row.click();
  await until(async () => (await page.textContent('#detail-title')) === `Pod ${key}`, 5_000, 'detail title');
  assert.match(await page.textContent('#detail-body'), /^apiVersion: v1\nkind: Pod\nmetadata:\n/);
  // Live: a label added through the API shows up.
  const r = await fetch(`${sim.url}/api/v1/namespaces/${ns}/pods/${name}`, {
    method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify({ metadata: { labels: { 'demo-touched': 'yes' } } }),
  });
  assert.equal(r.status, 200);
  await until(async () => (await page.textContent('#detail-body')).includes('demo-touched: "yes"'), 2_000, 'live YAML');
  // Its events, through the events informer's involved-object index.
  await fetch(`${sim.url}/api/v1/namespaces/${ns}/events`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ metadata: { name: `${name}.test` }, involvedObject: { kind: 'Pod', namespace: ns, name },
      reason: 'Probed', message: 'readiness probe checked by the page test', type: 'Normal' }),
  });
  await until(async () => (await page.textContent('#detail-events')).includes('Probed: readiness probe checked'), 3_000, 'event listed');
  await page.click('#tab-json');
  await until(async () => (await page.textContent('#detail-body')).startsWith('{'), 2_000, 'JSON view');
  const json = JSON.parse(await page.textContent('#detail-body'));
  assert.equal(json.metadata.labels['demo-touched'], 'yes');
  await page.click('#tab-yaml');
  await shot('dashboard-detail');
  await page.click('#detail-close');
});

test('the not-Ready controller accounts for every not-Ready pod and drops one that becomes Ready', async () => {
  const counts = () => dash(() => {
    const c = window.kubewasmDashboard.controller();
    const notReady = window.kubewasmDashboard.cache('pods').getSnapshot()
      .filter((p) => !(p.status?.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True')).length;
    return { flagged: c.flagged.size, pending: c.pending.size, notReady, first: c.worst(1)[0] };
  });
  const c = await until(async () => {
    const v = await counts();
    return v.flagged + v.pending === v.notReady && v.flagged > 0 ? v : null;
  }, 10_000, 'controller caught up');
  assert.equal(Number(await page.textContent('#ctl-count')), c.flagged);
  assert.ok((await page.locator('#controller tbody tr').count()) > 0);
  // Make the longest-unready pod Ready through the API: it leaves the list.
  const [ns, name] = c.first.key.split('/');
  const pod = await (await fetch(`${sim.url}/api/v1/namespaces/${ns}/pods/${name}`)).json();
  const conditions = pod.status.conditions.map((x) => (x.type === 'Ready' ? { ...x, status: 'True' } : x));
  const r = await fetch(`${sim.url}/api/v1/namespaces/${ns}/pods/${name}/status`, {
    method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify({ status: { phase: 'Running', conditions } }),
  });
  assert.equal(r.status, 200);
  await until(async () => !(await dash((k) => window.kubewasmDashboard.controller().flagged.has(k), c.first.key)), 3_000, 'pod leaves the list');
});

test('a forced watch drop shows "reconnecting", then recovers to the sim\'s state', async () => {
  const before = await dash(() => window.kubewasmDashboard.status('pods').reconnects);
  await recordStatusTexts();
  // Hold the re-watch back with 429s so the informer has to back off.
  await sim.call('/sim/faults', { status429: { count: 20, retryAfterSeconds: 2 } });
  await sim.call('/sim/drop-watches', {});
  await sim.call('/sim/churn/steps', { steps: 25, seed: 5 });
  await until(async () => /reconnecting in \d+ s/.test(await page.textContent('#status')), 10_000, '"reconnecting in N s"');
  await shot('dashboard-reconnecting');
  await sim.call('/sim/faults/clear', {});
  await until(async () => /watching/.test(await page.textContent('#status')), 10_000, 'watching again');
  await convergesToSim('state equal to the sim after the reconnect');
  assert.ok((await dash(() => window.kubewasmDashboard.status('pods').reconnects)) > before);
  assert.ok((await statusTexts()).some((t) => /reconnecting/.test(t)));
});

test('unfiltered under churn, the row count never exceeds the total it is shown against', async () => {
  await until(async () => /watching/.test(await page.textContent('#status')), 10_000, 'watching');
  await dash(() => {
    const seen = (window.__matchingTexts = []);
    window.__matchingObserver = new MutationObserver(() => seen.push(document.getElementById('matching').textContent));
    window.__matchingObserver.observe(document.getElementById('matching'), { subtree: true, childList: true, characterData: true });
  });
  // Creates and deletes move the count on every step.
  await sim.call('/sim/churn', { perSec: 200, seed: 11 });
  try {
    await until(async () => (await dash(() => window.__matchingTexts.length)) >= 20, 15_000, '20 count updates under churn');
  } finally {
    await sim.call('/sim/churn', { perSec: 0, seed: 11 });
  }
  const texts = await dash(() => { window.__matchingObserver.disconnect(); return window.__matchingTexts; });
  const bad = texts.filter((t) => !/^[\d,]+ rows$/.test(t));
  assert.deepEqual(bad, [], 'with no filter every count reads "N rows"');
  await convergesToSim('state equal to the sim after the churn');
});

test('at 1,280 px the header wraps: a usual status shows in full, a long one gives way, connect stays on screen', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const measure = (text) => dash((text) => {
    const pill = document.getElementById('status');
    if (text !== null) pill.textContent = text; // read back before the next frame rewrites it
    const button = document.querySelector('#server-form button').getBoundingClientRect();
    return { text: pill.textContent, buttonLeft: button.left, buttonRight: button.right, width: innerWidth, pillClipped: pill.scrollWidth > pill.clientWidth };
  }, text);
  await until(async () => /watching/.test(await page.textContent('#status')), 10_000, 'watching');
  const usual = await measure(null);
  assert.ok(!usual.pillClipped, `"${usual.text}" is shown in full`);
  assert.ok(usual.buttonLeft >= 0 && usual.buttonRight <= usual.width, `connect button at ${usual.buttonLeft}–${usual.buttonRight} of ${usual.width}`);
  // A CRD with a long group in backoff: the widest status a real cluster shows.
  const long = 'certificatesigningrequests.certificates.k8s.io (CertificateSigningRequest): reconnecting in 30 s';
  const layout = await measure(long);
  assert.ok(layout.buttonLeft >= 0 && layout.buttonRight <= layout.width, `connect button at ${layout.buttonLeft}–${layout.buttonRight} of ${layout.width}`);
  assert.ok(layout.pillClipped, 'the long text is cut short (ellipsis), not laid out in full');
  await until(async () => (await page.getAttribute('#status', 'title')).startsWith(await page.textContent('#status')), 5_000, 'the pill\'s title carries its full text');
  assert.ok(await page.isVisible('#server-form button'));
  await page.setViewportSize({ width: 1500, height: 900 });
});

test('a forced compaction causes a relist and the table ends equal to the sim\'s state', async () => {
  const before = await dash(() => window.kubewasmDashboard.status('pods').relists);
  await recordStatusTexts();
  // Hold the re-watch back while the history it would resume from is compacted away.
  await sim.call('/sim/faults', { latencyMs: 1000 });
  await sim.call('/sim/drop-watches', {});
  await sim.call('/sim/churn/steps', { steps: 15, seed: 6 });
  await sim.call('/sim/compact', {});
  await sim.call('/sim/churn/steps', { steps: 15, seed: 7 });
  // The latency stays on until the relist has started, so its list takes a second
  // and the status shows it; clearing it earlier could let the list finish unseen.
  await until(async () => (await dash(() => window.kubewasmDashboard.status('pods').relists)) > before, 15_000, 'relist');
  await until(async () => (await statusTexts()).some((t) => /relisting/.test(t)), 10_000, 'the status says "relisting"');
  await sim.call('/sim/faults/clear', {});
  await convergesToSim('state equal to the sim after the relist');
  await until(async () => /watching/.test(await page.textContent('#status')), 10_000, 'watching again');
  await shot('dashboard-after-relist');
  assert.deepEqual(pageErrors, []);
});

test('an informer in a Web Worker posts diffs that add up to the sim\'s pods', async () => {
  const worker = await browser.context.newPage();
  worker.on('pageerror', (e) => pageErrors.push(String(e)));
  await worker.goto(sim.url + '/worker.html');
  const want = Object.keys(await simPods()).length;
  await until(async () => Number(await worker.evaluate(() => document.getElementById('count').dataset.count || -1)) === want, 15_000, 'worker count');
  assert.ok(Number(await worker.textContent('#diffs')) >= 1);
  await worker.screenshot({ path: join(artifacts, 'worker.png') });
  await worker.close();
  assert.deepEqual(pageErrors, []);
});

test('the package loads without a bundler (a plain ES module page) and syncs an informer', async () => {
  const plain = await browser.context.newPage();
  const errors = [];
  plain.on('pageerror', (e) => errors.push(String(e)));
  try {
    await plain.goto(sim.url + '/plain/');
    const want = Object.keys(await simPods()).length;
    await until(async () => Number(await plain.getAttribute('#status', 'data-count')) === want, 15_000, 'plain page count');
    await until(async () => /watching/.test(await plain.textContent('#status')), 5_000, 'plain page watching');
    assert.equal(await plain.locator('#pods li').count(), Math.min(50, want));
    await plain.screenshot({ path: join(artifacts, 'plain-page.png') });
  } finally {
    await plain.close();
  }
  assert.deepEqual(errors, []);
});

test('the built site works under a path prefix, as behind `kubectl proxy --www-prefix=/ui/`', async () => {
  const proxy = await startPrefixProxy(sim.url);
  const other = await browser.context.newPage();
  other.on('pageerror', (e) => pageErrors.push(String(e)));
  try {
    await other.goto(`${proxy.url}/ui/`);
    const want = Object.keys(await simPods()).length;
    await until(async () => Number(await other.evaluate(() => document.getElementById('table').dataset.rows)) === want, 15_000, 'rows under /ui/');
    await until(async () => /watching/.test(await other.textContent('#status')), 5_000, 'watching under /ui/');
  } finally {
    await other.close();
    proxy.stop();
  }
  assert.deepEqual(pageErrors, []);
});

test('the API base URL is configurable (?server=, another origin through CORS)', async () => {
  const other = await browser.context.newPage();
  await other.goto(`${sim.url}/index.html?server=${encodeURIComponent(sim.url.replace('127.0.0.1', 'localhost'))}`);
  const want = Object.keys(await simPods()).length;
  await until(async () => Number(await other.evaluate(() => document.getElementById('table').dataset.rows)) === want, 15_000, 'rows via ?server=');
  await other.close();
});

/** A new tab that records its page errors and the addresses it showed. */
async function newTab() {
  const tab = await browser.context.newPage();
  const errors = [];
  const urls = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  tab.on('framenavigated', (f) => { if (f === tab.mainFrame()) urls.push(f.url()); });
  return { tab, errors, urls };
}

/** Resolves once the tab's table shows every pod of the sim. */
async function tableSynced(tab, what) {
  const want = Object.keys(await simPods()).length;
  await until(async () => Number(await tab.evaluate(() => document.getElementById('table')?.dataset.rows ?? -1)) === want, 15_000, what);
}

const storedText = (tab) => tab.evaluate(() => JSON.stringify(sessionStorage));

test('a ?token= in the address is not used, is removed from the address, and the user is told', async () => {
  const api = await startRecordingProxy(sim.url);
  const { tab, errors } = await newTab();
  try {
    await tab.goto(`${sim.url}/?server=${encodeURIComponent(api.url)}&token=leaked-secret`);
    await tableSynced(tab, 'rows through the other server');
    const url = new URL(tab.url());
    assert.equal(url.searchParams.get('token'), null, tab.url());
    assert.ok(!tab.url().includes('leaked-secret'), tab.url());
    assert.equal(url.searchParams.get('server'), api.url, 'the rest of the address is kept');
    assert.ok(await tab.isVisible('#notice'));
    assert.match(await tab.textContent('#notice'), /token/);
    assert.equal(await tab.inputValue('#token'), '');
    assert.ok(api.requests.length > 0);
    assert.deepEqual(api.requests.filter((r) => r.authorization !== undefined), [], 'no request carried the token');
    assert.ok(!(await storedText(tab)).includes('leaked-secret'));
    await tab.screenshot({ path: join(artifacts, 'dashboard-url-token-notice.png') });
  } finally {
    await tab.close();
    api.stop();
  }
  assert.deepEqual(errors, []);
});

test('the token is typed into a field, kept for the tab, and dropped when the server changes', async () => {
  const [a, b, c] = await Promise.all([0, 1, 2].map(() => startRecordingProxy(sim.url)));
  const { tab, errors, urls } = await newTab();
  const connect = () => Promise.all([tab.waitForEvent('load'), tab.click('#server-form button[type="submit"]')]);
  const bearer = (api) => api.requests.map((r) => r.authorization).filter((h) => h !== undefined);
  try {
    await tab.goto(`${sim.url}/?server=${encodeURIComponent(a.url)}`);
    await tableSynced(tab, 'rows from server A');
    assert.deepEqual(bearer(a), []);

    // Typed for A: sent to A, and still there after the reload.
    await tab.fill('#token', 'secret-a');
    await connect();
    await tableSynced(tab, 'rows from server A with a token');
    await until(() => bearer(a).includes('Bearer secret-a'), 5_000, 'A receives the token');
    assert.equal(await tab.inputValue('#token'), 'secret-a');

    // Another server in the field: the token field empties and B never sees a token.
    await tab.fill('#server', b.url);
    assert.equal(await tab.inputValue('#token'), '');
    await connect();
    assert.equal(new URL(tab.url()).searchParams.get('server'), b.url);
    await tableSynced(tab, 'rows from server B');
    assert.ok(b.requests.length > 0);
    assert.deepEqual(bearer(b), [], 'server B received no Authorization header');
    assert.ok(!(await storedText(tab)).includes('secret-a'), 'the token for A is no longer stored');

    // Another server typed into the address, not the field: the token saved for B is dropped.
    await tab.fill('#token', 'secret-b');
    await connect();
    await until(() => bearer(b).includes('Bearer secret-b'), 15_000, 'B receives its own token');
    await tab.goto(`${sim.url}/?server=${encodeURIComponent(c.url)}`);
    await tableSynced(tab, 'rows from server C');
    assert.ok(c.requests.length > 0);
    assert.deepEqual(bearer(c), [], 'server C received no Authorization header');
    assert.equal(await tab.inputValue('#token'), '');
    assert.ok(!(await storedText(tab)).includes('secret-b'));
    assert.ok(bearer(a).every((h) => h === 'Bearer secret-a') && bearer(b).every((h) => h === 'Bearer secret-b'), 'each token went only to its server');
    assert.ok(urls.every((u) => !u.includes('secret')), `no address held a token: ${urls.join(' ')}`);
  } finally {
    await tab.close();
    for (const p of [a, b, c]) p.stop();
  }
  assert.deepEqual(errors, []);
});

test('a malformed hash (#%E0%A4%A) does not stop the dashboard from starting', async () => {
  const { tab, errors } = await newTab();
  try {
    await tab.goto(`${sim.url}/#%E0%A4%A`);
    await tableSynced(tab, 'rows despite the malformed hash');
    assert.equal(await tab.evaluate(() => window.kubewasmDashboard?.ready), true);
    // It fell back to pods and says so in the address.
    assert.equal(new URL(tab.url()).hash, '#pods');
  } finally {
    await tab.close();
  }
  assert.deepEqual(errors, []);
});
