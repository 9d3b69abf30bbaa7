// Dashboard benchmark (`make bench`): the built dashboard in headless Chromium
// on 10,000 pods, then 1,000 events/s of churn for 60 s. Reports main-thread
// long tasks (> 50 ms, PerformanceObserver), the median and p95 interval
// between animation frames, and JS heap + wasm memory at the end.
// Scale with BENCH_PODS, BENCH_RATE, BENCH_SECONDS.
import { launch, startSim, until } from './harness.mjs';

const pods = Number(process.env.BENCH_PODS || 10_000);
const rate = Number(process.env.BENCH_RATE || 1_000);
const seconds = Number(process.env.BENCH_SECONDS || 60);

const sim = await startSim(['--namespaces', '20', '--pods', String(pods), '--seed', '1']);
const browser = await launch(['--enable-precise-memory-info']);
try {
  const page = await browser.context.newPage();
  const t0 = Date.now();
  await page.goto(sim.url + '/');
  // Long tasks from the start, to report the initial sync separately.
  await page.evaluate(() => {
    window.__bench = { long: [], frames: [], phase: 'sync' };
    new PerformanceObserver((l) => {
      for (const e of l.getEntries()) window.__bench.long.push([window.__bench.phase, e.duration, e.startTime]);
    }).observe({ type: 'longtask', buffered: true });
  });
  await until(async () => (await page.evaluate(() => Number(document.getElementById('table').dataset.rows))) >= pods, 180_000, 'initial sync');
  const syncMs = Date.now() - t0;
  await page.evaluate(() => {
    window.__bench.phase = 'churn';
    window.__bench.churnStart = Date.now();
    let last = performance.now();
    const tick = (t) => {
      window.__bench.frames.push(t - last);
      last = t;
      if (window.__bench.phase === 'churn') requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await sim.call('/sim/churn', { perSec: rate, seed: 3 });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await sim.call('/sim/churn', { perSec: 0 });
  const r = await page.evaluate(() => {
    window.__bench.phase = 'done';
    const f = window.__bench.frames.slice(1).sort((a, b) => a - b);
    const q = (p) => f[Math.min(f.length - 1, Math.floor(p * f.length))] ?? NaN;
    const during = window.__bench.long.filter(([p]) => p === 'churn').map(([, d]) => d);
    const sync = window.__bench.long.filter(([p]) => p === 'sync').map(([, d]) => d);
    const d = window.kubewasmDashboard;
    const opened = ['pods', 'events', 'namespaces'].map((l) => d.status(l)).filter(Boolean);
    return {
      longTasks: during.length, longest: Math.max(0, ...during),
      syncLongTasks: sync.length, syncLongest: Math.max(0, ...sync),
      frames: f.length, median: q(0.5), p95: q(0.95), p99: q(0.99),
      heapMiB: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : NaN,
      wasmMiB: d.wasmBytes() / 1048576,
      events: opened.reduce((n, s) => n + s.eventsApplied, 0),
      podEvents: d.status('pods').eventsApplied,
      cached: d.status('pods').cached,
      slow: d.slowFrames.filter((x) => x.at > window.__bench.churnStart),
      longAt: window.__bench.long.filter(([p]) => p === 'churn').map(([, d, t]) => [Math.round(t), Math.round(d)]),
      now: Math.round(performance.now()),
    };
  });
  const simPods = Object.keys((await sim.call('/sim/state?resource=pods')).items).length;
  console.log(`dashboard benchmark: ${pods} pods, ${rate} churn writes/s for ${seconds} s, headless Chromium`);
  console.log(`  initial sync to a full table: ${syncMs} ms (${r.syncLongTasks} long tasks, longest ${r.syncLongest.toFixed(0)} ms)`);
  console.log(`  during churn: ${r.longTasks} long tasks > 50 ms (longest ${r.longest.toFixed(0)} ms)`);
  console.log(`  frame interval: median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms over ${r.frames} frames`);
  if (process.env.BENCH_VERBOSE) console.log('  slow frames (ms into the frame):', JSON.stringify(r.slow));
  if (process.env.BENCH_VERBOSE) console.log('  long tasks [start, ms] (page time; now', r.now, '):', JSON.stringify(r.longAt));
  console.log(`  memory at the end: JS heap ${r.heapMiB.toFixed(1)} MiB + wasm ${r.wasmMiB.toFixed(1)} MiB`);
  console.log(`  events applied (pods, events, namespaces informers): ${r.events}; pods cached ${r.cached} (sim: ${simPods})`);
} finally {
  await browser.close();
  sim.stop();
}
