// Runs the code blocks of the npm README's "Node" section, in this runtime,
// against the sim behind a TLS proxy, with a kubeconfig made for it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makePki, tlsProxy } from './support/tls.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim || !token) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const readme = readFileSync(fileURLToPath(new URL('../../../pkg-template/README.md', import.meta.url)), 'utf8');
// The sections written for Node: `## Node` and the feature sections after it.
const nodeSections = ['Node', 'Label selectors from objects', 'Metadata-only informers', 'Pod logs', 'Warnings', 'Bring your own fetch'];
const sections = readme.split(/^## /m).filter((s) => nodeSections.some((h) => s.startsWith(`${h}\n`)));
if (sections.length !== nodeSections.length) throw new Error(`README lacks one of the sections ${nodeSections.join(', ')}`);
const blocks = sections.flatMap((section) => [...section.matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((m) => m[1]!));

const pki = makePki();
const proxy = await tlsProxy(sim, pki.server);
const kubeconfig = join(pki.dir, 'config');
const saved = process.env.KUBECONFIG;
// What `kubectl proxy` is to the README: plain HTTP, credentials added on the way.
const kubectlProxy = createServer((req, res) => {
  const up = httpRequest(new URL(req.url ?? '/', sim), { method: req.method, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (r) => {
    res.writeHead(r.statusCode ?? 502, r.headers);
    r.pipe(res);
  });
  up.on('error', () => res.destroy());
  req.pipe(up);
});
await new Promise<void>((resolve) => kubectlProxy.listen(0, '127.0.0.1', resolve));
process.env.KUBE_PROXY = `http://127.0.0.1:${(kubectlProxy.address() as AddressInfo).port}`;
after(async () => {
  await proxy.close();
  kubectlProxy.closeAllConnections();
  await new Promise((resolve) => kubectlProxy.close(resolve));
  delete process.env.KUBE_PROXY;
  pki.cleanup();
  if (saved === undefined) delete process.env.KUBECONFIG;
  else process.env.KUBECONFIG = saved;
});

test('the README Node section has code blocks, and each runs against a kubeconfig for the sim', async () => {
  assert.ok(blocks.length >= 1);
  const ns = (await (await fetch(`${sim}/api/v1/namespaces`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { items: { metadata: { name: string } }[] };
  const namespace = ns.items[0]!.metadata.name;
  const expected = ((await (await fetch(`${sim}/api/v1/namespaces/${namespace}/pods`, { headers: { Authorization: `Bearer ${token}` } })).json()) as { items: unknown[] }).items.length;
  writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: ${Buffer.from(pki.ca.cert).toString('base64')}
    server: ${proxy.url}
  name: sim
contexts:
- context:
    cluster: sim
    namespace: ${namespace}
    user: reader
  name: readme
current-context: readme
users:
- name: reader
  user:
    token: ${token}
`);
  process.env.KUBECONFIG = kubeconfig;
  for (const [i, code] of blocks.entries()) {
    // Beside the tests, so `kubewasm` resolves from this package's node_modules.
    const file = fileURLToPath(new URL(`./readme-node-block-${i}.mjs`, import.meta.url));
    writeFileSync(file, code);
    const lines: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.join(' '));
    try {
      await import(pathToFileURL(file).href);
    } finally {
      console.log = log;
      rmSync(file, { force: true });
    }
    if (i === 0) assert.deepEqual(lines, [`${expected} pods in readme`]);
    if (i === 2) assert.deepEqual(lines, ['PartialObjectMetadata apiVersion,kind,metadata false']);
    if (i === 3) assert.deepEqual(lines, ['5 lines']);
    if (i === 4) assert.deepEqual(lines, ['warning: spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead']);
    if (i === 5) assert.match(lines.join('\n'), /^\d+ namespaces in 1 request$/);
    if (i === 1) assert.ok(lines.length > 0 && lines.every((l) => /^\S+: \d+ pods$/.test(l)) && lines.some((l) => !l.endsWith(': 0 pods')), lines.join('\n'));
  }
});
