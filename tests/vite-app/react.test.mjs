// The React page of this app (built by `npm run check` from the packed
// package) in headless Chromium against the sim: the hooks render the cache,
// follow writes, open one watch per informer under StrictMode, and release
// their informers on unmount; the hydration page (hydrate.html) hydrates
// server-rendered markup over a cache that has already synced.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, startSim, until } from '../page/harness.mjs';

const dist = join(dirname(fileURLToPath(import.meta.url)), 'dist');
let sim, browser;
const openWatches = async () => (await sim.call('/sim/stats')).openWatches;
const podsIn = async () => (await sim.call('/sim/state?resource=pods')).items;

before(async () => {
  sim = await startSim(['--namespaces', '3', '--pods', '30'], { staticDir: dist });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  sim?.stop();
});

// React's development build is where StrictMode mounts twice; the production one is what ships.
for (const [build, dir] of [['development', '/dev'], ['production', '']]) test(`hooks under StrictMode (${build} build): the list renders and follows writes, one watch per informer, released on unmount`, async () => {
  await fetch(`${sim.url}/api/v1/namespaces/default/pods/watched`, { method: 'DELETE' });
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  // Every watch the page opens, sampled while it runs: StrictMode must never add one.
  const samples = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push(await openWatches());
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    await page.goto(`${sim.url}${dir}/react.html`);
    const state = await podsIn();
    const inDefault = Object.keys(state).filter((k) => k.startsWith('default/'));
    assert.ok(inDefault.length > 0);
    const rows = () => page.locator('#pods').first().locator('tr').count();
    await until(async () => (await rows()) === inDefault.length, 10_000, `${inDefault.length} rows`);
    // Two informers (pods shared by two tables, configmaps): two watches.
    await until(async () => (await openWatches()) === 2, 5_000, 'two watches');

    // A write shows up: a new pod in the table, and `useObject` sees it.
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'watched', namespace: 'default', labels: { app: 'web', stage: 'one' } } };
    const r = await fetch(`${sim.url}/api/v1/namespaces/default/pods`, { method: 'POST', body: JSON.stringify(pod) });
    assert.equal(r.status, 201);
    await until(async () => (await page.locator('#watched').first().textContent()) === 'watched one', 5_000, 'useObject shows the pod');
    await until(async () => (await rows()) === inDefault.length + 1, 5_000, 'the new row');
    const created = await r.json();
    const put = await fetch(`${sim.url}/api/v1/namespaces/default/pods/watched`, {
      method: 'PUT',
      body: JSON.stringify({ ...created, metadata: { ...created.metadata, labels: { app: 'web', stage: 'two' } } }),
    });
    assert.equal(put.status, 200);
    await until(async () => (await page.locator('#watched').first().textContent()) === 'watched two', 5_000, 'useObject follows the update');
    // The label-filtered list: the sim's `app=web` pods in default.
    const web = (await (await fetch(`${sim.url}/api/v1/namespaces/default/pods?labelSelector=app%3Dweb`)).json()).items;
    assert.ok(web.length >= 2, 'seeded web pods and the new one');
    assert.equal(Number(await page.locator('#web-count').first().textContent()), web.length);
    assert.equal(Number(await page.locator('#none-count').first().textContent()), 0, 'a null selector matches nothing');
    // Forty lists on one informer, each counting every pod.
    const total = Object.keys(await podsIn()).length;
    const counts = async () => (await page.locator('#counts span').allTextContents()).map(Number);
    await until(async () => (await counts()).join() === Array(40).fill(total).join(), 5_000, `forty counts of ${total}`);

    // Unmount: both informers are released and stop watching after the 1 s grace period.
    await page.evaluate(() => window.setShown(false));
    await page.locator('#unmounted').waitFor();
    assert.equal(await openWatches(), 2, 'still watching during the grace period');
    await until(async () => (await openWatches()) === 0, 5_000, 'the watches closed after the grace period');

    // Mounted again (a route change back): the factory still has the informers, and the
    // inline functions of this mount are new objects; the hooks reuse the first mount's.
    await page.evaluate(() => window.setShown(true));
    await until(async () => (await rows()) === inDefault.length + 1, 10_000, 'the table again');
    const configmaps = Object.keys((await sim.call('/sim/state?resource=configmaps')).items).length;
    await until(async () => Number(await page.locator('#configmaps').textContent()) === configmaps, 5_000, 'the configmaps again');
    await until(async () => (await openWatches()) === 2, 5_000, 'two watches again');
    await page.evaluate(() => window.setShown(false));
    await until(async () => (await openWatches()) === 0, 5_000, 'released again');
    sampling = false;
    await sampler;
    assert.ok(Math.max(...samples) <= 2, `never more than one watch per informer: ${Math.max(...samples)}`);
    assert.deepEqual(errors, []);
  } finally {
    sampling = false;
    await sampler;
    await page.close();
  }
});

// A namespace still loading (a route parameter): `useObject` on an informer
// of every namespace renders the pod absent, where the lister's `get` throws.
for (const [build, dir] of [['development', '/dev'], ['production', '']]) test(`useObject without a namespace on an informer of every namespace renders undefined (${build} build)`, async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  try {
    await page.goto(`${sim.url}${dir}/react.html`);
    const inDefault = Object.keys(await podsIn()).filter((k) => k.startsWith('default/'));
    const rows = () => page.locator('#pods').first().locator('tr').count();
    await until(async () => (await rows()) >= inDefault.length, 10_000, 'the cache synced');
    const route = page.locator('#route-pod');
    assert.equal(await route.textContent(), 'absent');
    const name = inDefault[0].slice('default/'.length);
    for (const namespace of ['default', '', null, undefined, 'default']) {
      await page.evaluate((r) => window.setRoute(r), { namespace, name });
      const want = namespace ? `default/${name}` : 'absent';
      await until(async () => (await route.textContent()) === want, 5_000, `${String(namespace)}: ${want}`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a component that owns its factory and shuts it down on unmount still watches under StrictMode', async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  try {
    await page.goto(`${sim.url}/dev/react.html`);
    await until(async () => (await openWatches()) === 2, 10_000, "the app's two watches");
    const inDefault = Object.keys(await podsIn()).filter((k) => k.startsWith('default/')).length;
    // StrictMode shuts the factory down between its two mounts: the hook
    // must not keep the stopped informer it handed out first.
    await page.evaluate(() => window.mountOwned(true));
    await until(async () => Number(await page.locator('#owned-count').textContent()) === inDefault, 10_000, `${inDefault} pods owned`);
    await until(async () => (await openWatches()) === 3, 5_000, "the owned factory's watch");
    await page.evaluate(() => window.mountOwned(false));
    await until(async () => (await openWatches()) === 2, 5_000, 'shut down with its component');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

// Server rendering: the server never starts an informer, so it renders an
// empty cache; hydrating that markup where the cache has already synced must
// render the same first (React's rule for `getServerSnapshot`), then the objects.
for (const [build, dir] of [['development', '/dev'], ['production', '']]) test(`hooks hydrate server-rendered markup over a synced cache (${build} build)`, async () => {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  try {
    await page.goto(`${sim.url}${dir}/hydrate.html`);
    await page.waitForFunction(() => window.hydration !== undefined, null, { timeout: 10_000 });
    const { count, name } = await page.evaluate(() => window.hydration.expected);
    assert.ok(count > 0, 'the cache synced before hydration');
    await until(async () => (await page.locator('#count').textContent()) === String(count), 5_000, `${count} pods after hydration`);
    await until(async () => (await page.locator('#object').textContent()) === name, 5_000, 'useObject after hydration');
    assert.deepEqual(await page.evaluate(() => window.hydration.errors), [], 'no hydration error');
    assert.ok(await page.evaluate(() => window.hydration.kept()), "the server's markup was hydrated, not replaced");
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
