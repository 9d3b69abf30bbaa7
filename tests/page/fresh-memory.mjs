// Why copies into new buffers are slow in a page (BENCHMARKS.md, issue 16):
// copying 2,500 bytes out of a WebAssembly.Memory, 200,000 times, into
//   reused   one 64 KiB slab, written again and again
//   slabs    a new 64 KiB slab whenever the current one is full
//   untouched  the same allocations, nothing written into them
// and prints µs per copy (two rounds each, in one headless Chromium page):
//   cd tests/page && node fresh-memory.mjs
import { launch, startSim } from './harness.mjs';

const sim = await startSim(['--pods', '10']);
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(`${sim.url}/version`);
  const rows = await page.evaluate(() => {
    const N = 200_000;
    const n = 2_500;
    const SLAB = 64 * 1024;
    const mem = new WebAssembly.Memory({ initial: 100 });
    const src = (i) => new Uint8Array(mem.buffer, (i * 997) % 60_000, n);
    // A new 64 KiB slab whenever the current one is full; `write`: copy into it.
    const newSlabs = (write) => {
      let slab = null;
      let used = SLAB;
      for (let i = 0; i < N; i++) {
        if (used + n > SLAB) {
          slab = new Uint8Array(SLAB);
          used = 0;
        }
        if (write) slab.set(src(i), used);
        else src(i);
        used += n;
      }
      return slab;
    };
    const runs = {
      reused() {
        const slab = new Uint8Array(SLAB);
        for (let i = 0; i < N; i++) slab.set(src(i), (i * n) % (SLAB - n));
      },
      slabs: () => newSlabs(true),
      untouched: () => newSlabs(false),
    };
    const out = [];
    for (let round = 1; round <= 2; round++) {
      for (const [name, run] of Object.entries(runs)) {
        const t0 = performance.now();
        run();
        out.push(`round ${round} ${name}: ${(((performance.now() - t0) * 1000) / N).toFixed(3)} µs per 2,500-byte copy`);
      }
    }
    return out;
  });
  for (const r of rows) console.log(r);
} finally {
  await browser.close();
  sim.stop();
}
