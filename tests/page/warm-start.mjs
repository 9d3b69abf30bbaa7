// Warm-start benchmark (`make bench`): 10,000 pods in headless Chromium, the
// time from loading the package to the first table rows, cold (a list) and
// warm (the copy in IndexedDB), over BENCH_RUNS reloads each.
import { defineFirstRows, launch, startSim, until } from './harness.mjs';

const pods = Number(process.env.BENCH_PODS || 10_000);
const runs = Number(process.env.BENCH_RUNS || 5);

/** In the page: a persisting factory and a pods informer; resolves with ms to the first rendered rows. */
const firstRows = async ({ name }) => {
  const t0 = performance.now();
  const m = await import('/plain/pkg/web/index.js');
  await m.default();
  const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }), { persist: { name, intervalMs: 100 } });
  const pods = factory.informer({ version: 'v1', resource: 'pods' });
  window.__kw = { factory, pods };
  const shown = window.__firstRows(pods, t0);
  factory.start();
  return { ms: await shown, phase: pods.status.phase };
};

const storedCount = (name) => new Promise((resolve) => {
  const req = indexedDB.open(`kubewasm:${name}`);
  req.onsuccess = () => {
    const db = req.result;
    if (!db.objectStoreNames.contains('meta')) { db.close(); resolve(0); return; }
    const get = db.transaction('meta').objectStore('meta').getAll();
    get.onsuccess = () => { db.close(); resolve(Math.max(0, ...get.result.map((m) => m.count))); };
  };
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sim = await startSim(['--namespaces', '3', '--pods', String(pods), '--seed', '1']);
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.addInitScript(defineFirstRows);
  const blank = `${sim.url}/version`;
  const cold = [];
  const warm = [];
  for (let i = 0; i < runs; i++) {
    // Cold: a name nothing was stored under.
    await page.goto(blank);
    const c = await page.evaluate(firstRows, { name: `cold-${i}` });
    cold.push(c.ms);
    await until(() => page.evaluate(storedCount, `cold-${i}`).then((n) => n >= pods), 30_000, 'stored');
    await page.evaluate(() => window.__kw.factory.shutdown());
    // Warm: the copy the cold run wrote.
    await page.goto(blank);
    const w = await page.evaluate(firstRows, { name: `cold-${i}` });
    if (w.phase !== 'stored' && w.phase !== 'watching') throw new Error(`warm run in phase ${w.phase}`);
    warm.push(w.ms);
    await page.evaluate((n) => window.__kw.factory.clearPersisted().then(() => indexedDB.deleteDatabase(`kubewasm:${n}`)), `cold-${i}`);
  }
  const f = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
  console.log(`first rows of ${pods} pods, from loading the package, ${runs} runs each`);
  console.log(`  cold (list):            ${f(cold)}`);
  console.log(`  warm (IndexedDB copy):  ${f(warm)}`);
} finally {
  await browser.close();
  sim.stop();
}
