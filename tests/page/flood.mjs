// The browser floor (`make bench`): one headless Chromium page per client,
// fresh context each, against the same flood from the sim (FLOOD_EVENTS
// MODIFIED events over FLOOD_PODS pods). Clients, alternating for
// FLOOD_ROUNDS rounds:
//   handler   kubewasm informer with an `update` handler reading name and resourceVersion
//   subscribe kubewasm informer, `subscribe` diffs only
//   floor     plain JS: fetch + TextDecoder + split + JSON.parse + Map
//   delivery  fetch + count the lines' newlines, nothing decoded or kept: how
//             fast this machine (sim, browser network process, renderer)
//             delivers the flood's bytes to a page, the ceiling of any client
// Reports events/s (from the first to the last event applied), the main
// thread's busy time per event (Chromium's TaskDuration), long tasks
// (> 50 ms) during the flood, and wasm memory after it (also as a multiple
// of the informer's cachedBytes), with the JS heap after a full garbage
// collection.
// FLOOD_PKG=dir serves another build of the package (an A/B of a change).
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { launch, site, startSim, until } from './harness.mjs';

const PODS = Number(process.env.FLOOD_PODS || 10_000);
const EVENTS = Number(process.env.FLOOD_EVENTS || 100_000);
const ROUNDS = Number(process.env.FLOOD_ROUNDS || 3);
const clients = (process.env.FLOOD_CLIENTS || 'handler,subscribe,floor,delivery').split(',');
if (process.env.FLOOD_PKG) {
  if (!existsSync(join(process.env.FLOOD_PKG, 'web'))) throw new Error(`${process.env.FLOOD_PKG} is not a built package`);
  cpSync(process.env.FLOOD_PKG, join(site, 'plain', 'pkg-b'), { recursive: true });
}

const sim = await startSim(['--namespaces', '10', '--pods', String(PODS), '--seed', '4']);
const browser = await launch();

async function run(client, pkg) {
  const context = await browser.context.browser()?.newContext() ?? browser.context;
  const page = await context.newPage();
  // A same-origin document that runs nothing of its own (the no-bundler
  // example under /plain/ starts an informer of every pod itself).
  await page.goto(`${sim.url}/version`);
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]); }).observe({ type: 'longtask', buffered: true });
  });
  const ready = await page.evaluate(async ({ client, pkg, pods }) => {
    window.__n = 0;
    if (client === 'delivery') {
      const { items, metadata } = await (await fetch('/api/v1/pods')).json();
      const rv = metadata.resourceVersion;
      (async () => {
        const r = await fetch(`/api/v1/pods?watch=true&resourceVersion=${rv}`);
        const reader = r.body.getReader({ mode: 'byob' });
        let buf = new ArrayBuffer(65536);
        for (;;) {
          const { value, done } = await reader.read(new Uint8Array(buf));
          if (done) break;
          buf = value.buffer;
          let lines = 0;
          for (let i = value.indexOf(10); i >= 0; i = value.indexOf(10, i + 1)) lines++;
          if (lines === 0) continue;
          if (window.__n === 0) window.__t0 = performance.now();
          window.__n += lines;
          window.__t1 = performance.now();
        }
      })();
      return items.length;
    }
    if (client === 'floor') {
      const map = new Map();
      const listed = await (await fetch('/api/v1/pods')).json();
      for (const p of listed.items) map.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
      const rv = listed.metadata.resourceVersion;
      (async () => {
        const r = await fetch(`/api/v1/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
        const reader = r.body.getReader();
        const dec = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (!line) continue;
            const ev = JSON.parse(line);
            const o = ev.object;
            map.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
            if (ev.type === 'MODIFIED') {
              if (window.__n === 0) window.__t0 = performance.now();
              window.__n++;
              window.__t1 = performance.now();
            }
          }
        }
      })();
      return map.size;
    }
    const m = await import(`/plain/${pkg}/web/index.js`);
    window.__m = await m.default();
    const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }));
    const inf = factory.informer({ version: 'v1', resource: 'pods' });
    const count = (k) => {
      if (window.__n === 0) window.__t0 = performance.now();
      window.__n += k;
      window.__t1 = performance.now();
    };
    if (client === 'handler') {
      inf.on('update', (_old, o) => {
        if (o.metadata.name && o.metadata.resourceVersion) count(1);
      });
    } else {
      inf.subscribe((d) => count(d.updated.length));
    }
    factory.start();
    await inf.waitForSync();
    window.__inf = inf;
    return inf.getSnapshot().length;
  }, { client, pkg, pods: PODS });
  if (ready !== PODS) throw new Error(`${client}: synced ${ready} of ${PODS}`);
  const fromLong = await page.evaluate(() => window.__long.length);
  // The main thread's busy time over the flood (CPU per event): unlike
  // events/s, it does not depend on how much of the machine the sim and
  // the browser's network process took meanwhile.
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const busy = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
  const busy0 = await busy();
  await sim.call('/sim/flood', { resource: 'pods', events: EVENTS });
  // The subscribe path counts keys per diff (coalesced): wait on the informer's own counter.
  const done = client === 'subscribe'
    ? () => page.evaluate((e) => window.__inf.status.eventsApplied >= e, EVENTS)
    : () => page.evaluate((e) => window.__n >= e, EVENTS);
  await until(done, 300_000, `${client} flood`);
  const r = await page.evaluate(({ client, events }) => {
    const t1 = client === 'subscribe' ? performance.now() : window.__t1;
    return {
      secs: (t1 - window.__t0) / 1000,
      long: window.__long.length,
      wasm: window.__m ? window.__m.memory.buffer.byteLength : 0,
      cached: window.__inf ? window.__inf.cachedBytes : 0,
      events,
    };
  }, { client, events: EVENTS });
  r.long -= fromLong;
  r.busyUs = ((await busy()) - busy0) * 1e6 / EVENTS;
  // The JS heap after a full collection, beside wasm memory.
  await cdp.send('HeapProfiler.collectGarbage');
  const heap = await cdp.send('Runtime.getHeapUsage');
  r.jsHeap = heap.usedSize;
  await page.close();
  if (context !== browser.context) await context.close();
  return r;
}

const results = {};
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of clients) {
      for (const pkg of process.env.FLOOD_PKG ? ['pkg', 'pkg-b'] : ['pkg']) {
        const name = pkg === 'pkg' ? c : `${c}@b`;
        if ((c === 'floor' || c === 'delivery') && pkg !== 'pkg') continue;
        const r = await run(c, pkg);
        (results[name] ??= []).push(r);
        const ratio = r.cached ? ` (${(r.wasm / r.cached).toFixed(2)}× the ${(r.cached / 1048576).toFixed(1)} MiB cached)` : '';
        console.log(`round ${round} ${name}: ${(EVENTS / r.secs).toFixed(0)} events/s, ${r.busyUs.toFixed(1)} µs main thread per event, ${r.long} long tasks, wasm ${(r.wasm / 1048576).toFixed(1)} MiB${ratio}, JS heap ${(r.jsHeap / 1048576).toFixed(1)} MiB`);
      }
    }
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const floor = results.floor ? median(results.floor.map((r) => EVENTS / r.secs)) : undefined;
  const delivery = results.delivery ? median(results.delivery.map((r) => EVENTS / r.secs)) : undefined;
  const floorBusy = results.floor ? median(results.floor.map((r) => r.busyUs)) : undefined;
  for (const [name, rs] of Object.entries(results)) {
    const eps = median(rs.map((r) => EVENTS / r.secs));
    const us = median(rs.map((r) => r.busyUs));
    const ratios = rs[0].cached ? ` (${rs.map((r) => (r.wasm / r.cached).toFixed(2)).join('/')}× cached)` : '';
    console.log(`${name}: median ${eps.toFixed(0)} events/s${floor ? ` (${(eps / floor).toFixed(2)}× the floor)` : ''}${delivery && name !== 'delivery' ? ` (${(100 * eps / delivery).toFixed(0)} % of delivery)` : ''}, main thread ${us.toFixed(1)} µs per event${floorBusy ? ` (${(floorBusy / us).toFixed(2)}× the floor by main-thread time)` : ''}, long tasks ${rs.map((r) => r.long).join('/')}, wasm ${rs.map((r) => (r.wasm / 1048576).toFixed(1)).join('/')} MiB${ratios}, JS heap ${rs.map((r) => (r.jsHeap / 1048576).toFixed(1)).join('/')} MiB`);
  }
} finally {
  await browser.close();
  sim.stop();
}
