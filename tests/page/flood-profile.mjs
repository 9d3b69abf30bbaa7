// The page flood of flood.mjs under Chromium's sampling profiler: one client
// (FLOOD_CLIENT: handler | subscribe), a package directory (FLOOD_PKG, e.g.
// one scripts/profiling-pkg.sh made, so wasm functions carry names), 100,000
// MODIFIED events over 10,000 pods; writes PROFILE (default
// flood.cpuprofile) for tests/compare/profile-top.mjs:
//   FLOOD_PKG=/tmp/prof-pkg node flood-profile.mjs && node ../compare/profile-top.mjs flood.cpuprofile
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, site, startSim, until } from './harness.mjs';

const client = process.env.FLOOD_CLIENT || 'handler';
const pkg = process.env.FLOOD_PKG;
const out = process.env.PROFILE || 'flood.cpuprofile';
if (!pkg || !existsSync(join(pkg, 'web'))) throw new Error('FLOOD_PKG must name a built package directory');
cpSync(pkg, join(site, 'plain', 'pkg-profile'), { recursive: true });

const sim = await startSim(['--namespaces', '10', '--pods', '10000', '--seed', '4']);
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(`${sim.url}/version`);
  await page.evaluate(async (client) => {
    const m = await import('/plain/pkg-profile/web/index.js');
    await m.default();
    const factory = new m.InformerFactory(new m.KubeClient({ server: location.origin }));
    const inf = factory.informer({ version: 'v1', resource: 'pods' });
    if (client === 'handler') inf.on('update', (_old, o) => void (o.metadata.name && o.metadata.resourceVersion));
    else inf.subscribe(() => {});
    factory.start();
    await inf.waitForSync();
    window.__inf = inf;
  }, client);
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await sim.call('/sim/flood', { resource: 'pods', events: 100_000 });
  await until(() => page.evaluate(() => window.__inf.status.eventsApplied >= 100_000), 300_000, 'the flood');
  const { profile } = await cdp.send('Profiler.stop');
  writeFileSync(out, JSON.stringify(profile));
  console.log(`${client}: profile of the flood in ${out}`);
} finally {
  await browser.close();
  sim.stop();
}
