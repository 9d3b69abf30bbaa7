// Runs every ```ts node block of the READMEs in this runtime, against the sim
// behind a TLS proxy with a kubeconfig made for it: imported in this process
// (so Deno and Bun run them too), and under Node also as a program of its own,
// which must print the same and exit by itself.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makePki, tlsProxy } from './support/tls.js';
import { blocksFor, toJs, where } from './support/readme.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim || !token) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const blocks = blocksFor('node');
const isNode = !('Deno' in globalThis) && !('Bun' in globalThis);

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

const get = async <T>(path: string): Promise<T> =>
  (await (await fetch(`${sim}${path}`, { headers: { Authorization: `Bearer ${token}` } })).json()) as T;

/** What the Node quick start prints for the kubeconfig below. */
async function expectedOutput(): Promise<{ namespace: string; lines: string[] }> {
  const ns = await get<{ items: { metadata: { name: string } }[] }>('/api/v1/namespaces');
  const namespace = ns.items[0]!.metadata.name;
  const pods = (await get<{ items: unknown[] }>(`/api/v1/namespaces/${namespace}/pods`)).items.length;
  return { namespace, lines: [`${pods} pods in readme`] };
}

/** Run `file` as its own Node process; resolves with its stdout lines once it exits. */
function runAlone(file: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after 30 s (the program must end by itself):\n${out}\n${err}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out.split('\n').filter(Boolean));
      else reject(new Error(`exited with ${code}:\n${out}\n${err}`));
    });
  });
}

test('the READMEs have ```ts node blocks, and each runs against a kubeconfig for the sim', async () => {
  assert.ok(blocks.length >= 1, 'at least the Node quick start');
  const { namespace, lines: expected } = await expectedOutput();
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
  // What each feature section's block prints against the sim.
  const checks: Record<string, (l: string[]) => void> = {
    'Label selectors from objects': (l) => assert.ok(l.length > 0 && l.every((x) => /^\S+: \d+ pods$/.test(x)) && l.some((x) => !x.endsWith(': 0 pods')), l.join('\n')),
    'Metadata-only informers': (l) => assert.deepEqual(l, ['PartialObjectMetadata apiVersion,kind,metadata false']),
    'Pod logs': (l) => assert.deepEqual(l, ['5 lines']),
    Warnings: (l) => assert.deepEqual(l, ['warning: spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead']),
    'Bring your own fetch': (l) => assert.match(l.join('\n'), /^\d+ namespaces in 1 request$/),
  };
  const seen = new Set<string>();
  for (const [i, block] of blocks.entries()) {
    // Beside the tests, so `kubewasm` resolves from this package's node_modules.
    const file = fileURLToPath(new URL(`./readme-node-block-${i}.mjs`, import.meta.url));
    writeFileSync(file, toJs(block));
    const lines: string[] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.join(' '));
    try {
      await import(pathToFileURL(file).href);
      console.log = log;
      if (block.heading === 'Node') assert.deepEqual(lines, expected, where(block));
      checks[block.heading]?.(lines);
      seen.add(block.heading);
      if (isNode) assert.deepEqual(await runAlone(file, { ...process.env, KUBECONFIG: kubeconfig }), lines, `${where(block)} as a program`);
    } finally {
      console.log = log;
      rmSync(file, { force: true });
    }
  }
  for (const heading of Object.keys(checks)) assert.ok(seen.has(heading), `no \`\`\`ts node block under "${heading}"`);
});

test('as the README says, the package is ESM only: require() fails with the documented code, import() from CommonJS works', { skip: !isNode }, async () => {
  const cjs = (code: string) => new Promise<{ code: number | null; out: string }>((resolve) => {
    // From this package's folder, where `kubewasm` is installed.
    const child = spawn(process.execPath, ['--input-type=commonjs', '-e', code], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (c) => resolve({ code: c, out }));
  });
  const required = await cjs("try { require('kubewasm'); console.log('loaded') } catch (e) { console.log(e.code) }");
  assert.equal(required.out.trim(), 'ERR_REQUIRE_ASYNC_MODULE');
  const imported = await cjs("import('kubewasm').then((m) => console.log(typeof m.KubeClient))");
  assert.deepEqual(imported, { code: 0, out: 'function\n' });
});
