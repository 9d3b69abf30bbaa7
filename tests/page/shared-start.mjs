// Shared-worker benchmark (`make bench`): with one tab already watching
// BENCH_PODS pods through `kubewasm/shared`, how long a new tab takes from
// loading the package to its first table rows, served by the SharedWorker's
// cache, against a tab that lists from the server itself (`host: 'page'`),
// alternating over BENCH_RUNS tabs each.
import { defineFirstRows, launch, startSim, until } from './harness.mjs';

const pods = Number(process.env.BENCH_PODS || 10_000);
const runs = Number(process.env.BENCH_RUNS || 5);

/** In the page: connect (`host`), open a pods informer; resolves with ms to the first rendered rows. */
const firstRows = async (host) => {
  const t0 = performance.now();
  const s = await import('/plain/pkg/shared.js');
  const conn = await s.connectShared({ client: { server: location.origin }, host });
  const pods = conn.factory.informer({ version: 'v1', resource: 'pods' });
  window.__kw = { conn, pods };
  const shown = window.__firstRows(pods, t0);
  conn.factory.start();
  return { ms: await shown, host: conn.host.kind };
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sim = await startSim(['--namespaces', '3', '--pods', String(pods), '--seed', '1']);
const browser = await launch();
try {
  const blank = `${sim.url}/version`;
  // The tab that keeps the worker and its watch alive throughout.
  const first = await browser.context.newPage();
  await first.addInitScript(defineFirstRows);
  await first.goto(blank);
  const keeper = await first.evaluate(firstRows, 'auto');
  if (keeper.host !== 'shared-worker') throw new Error(`first tab: ${JSON.stringify(keeper)}`);
  await until(() => first.evaluate((n) => window.__kw.pods.hasSynced && window.__kw.pods.getSnapshot().length === n, pods), 60_000, 'the first tab synced');
  const times = { 'shared-worker': [], page: [] };
  for (let i = 0; i < runs; i++) {
    for (const host of ['auto', 'page']) {
      const page = await browser.context.newPage();
      await page.addInitScript(defineFirstRows);
      await page.goto(blank);
      const r = await page.evaluate(firstRows, host);
      times[r.host].push(r.ms);
      await until(() => page.evaluate((n) => window.__kw.pods.getSnapshot().length === n, pods), 60_000, `${host}: every pod`);
      await page.evaluate(() => window.__kw.conn.close());
      await page.close();
    }
  }
  console.log(`first rows of ${pods} pods in a new tab, from loading the package, ${runs} tabs each`);
  for (const [host, xs] of Object.entries(times)) {
    console.log(`  ${host === 'page' ? 'listing from the server (host: page)' : 'from the SharedWorker\'s cache'}: median ${median(xs).toFixed(0)} ms (${xs.map((x) => x.toFixed(0)).join(', ')})`);
  }
} finally {
  await browser.close();
  sim.stop();
}
