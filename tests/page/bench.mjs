// Dashboard benchmark (`make bench`): 10,000 pods and 1,000 events/s of churn
// for 60 s in headless Chromium. Reports main-thread long tasks (> 50 ms),
// frame intervals and JS heap + wasm memory at the end.
import { spawn } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const seconds = Number(process.env.BENCH_SECONDS || 60);
const sim = spawn(join(root, 'target', 'release', 'kubewasm-sim'),
  ['--port', '0', '--static-dir', join(root, 'target', 'demo-site'), '--namespaces', '20', '--pods', '10000', '--seed', '1'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let buf = '';
  sim.stdout.on('data', (d) => { buf += d; const m = buf.match(/LISTENING (\S+)/); if (m) resolve(m[1]); });
});
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--enable-precise-memory-info'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url + '/');
  await page.waitForFunction(() => Number(document.getElementById('count').dataset.count) >= 10000, null, { timeout: 120_000 });
  await page.evaluate(() => {
    window.__bench = { long: [], frames: [] };
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.long.push(e.duration); }).observe({ type: 'longtask' });
    let last = performance.now();
    const tick = (t) => { window.__bench.frames.push(t - last); last = t; requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  await fetch(`${url}/sim/churn`, { method: 'POST', body: JSON.stringify({ perSec: 1000, seed: 3 }) });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await fetch(`${url}/sim/churn`, { method: 'POST', body: JSON.stringify({ perSec: 0 }) });
  const r = await page.evaluate(() => {
    const f = [...window.__bench.frames].sort((a, b) => a - b);
    const q = (p) => f[Math.min(f.length - 1, Math.floor(p * f.length))];
    const s = window.kubewasmDashboard.state.informer.status;
    return {
      longTasks: window.__bench.long.length, longest: Math.max(0, ...window.__bench.long),
      frames: f.length, median: q(0.5), p95: q(0.95),
      heapMiB: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : NaN,
      wasmMiB: window.kubewasmDashboard.wasmBytes() / 1048576, events: s.eventsApplied, cached: s.cached,
    };
  });
  console.log(`dashboard, 10,000 pods, 1,000 events/s for ${seconds} s in headless Chromium: ${r.longTasks} long tasks (> 50 ms, longest ${r.longest.toFixed(0)} ms); ` +
    `frame interval median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms over ${r.frames} frames; ` +
    `JS heap ${r.heapMiB.toFixed(0)} MiB + wasm ${r.wasmMiB.toFixed(0)} MiB; ${r.events} events applied, ${r.cached} cached`);
} finally {
  await browser.close();
  sim.kill();
}
