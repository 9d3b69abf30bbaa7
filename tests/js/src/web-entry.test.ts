// The web entry's KubeClient, imported in Node (the same module instance the
// Node entry initialized): it has `fetch` only, and refuses what needs the
// Node transport instead of ignoring it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from 'kubewasm';
import initWeb, { KubeClient as WebKubeClient } from 'kubewasm/web';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!server) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

test("the web entry's client lists over fetch and refuses transport 'node' and tls", async () => {
  const list = await new WebKubeClient({ server, token }).resource({ version: 'v1', resource: 'pods' }).list({ limit: 2 });
  assert.equal(list.items.length, 2);
  const invalid = (e: unknown) => e instanceof KubeError && e.reason === 'Invalid';
  assert.throws(() => new WebKubeClient({ server, transport: 'node' }), (e: unknown) => invalid(e) && /Node entry/.test((e as Error).message));
  assert.throws(() => new WebKubeClient({ server, tls: { insecureSkipTlsVerify: true } }), invalid);
});

test("the web entry's init() in Node, which cannot fetch a file: URL, says what to do instead", { skip: 'Bun' in globalThis || 'Deno' in globalThis }, async () => {
  const { execFileSync } = await import('node:child_process');
  const script = "import init from 'kubewasm/web'; try { await init(); console.log('loaded'); } catch (e) { console.log(JSON.stringify([e.constructor.name, e.reason, e.message])); }";
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url), encoding: 'utf8' });
  const [name, reason, message] = JSON.parse(out) as [string, string, string];
  assert.equal(name, 'KubeError');
  assert.equal(reason, 'Invalid');
  assert.match(message, /^cannot fetch file:.*kubewasm_bg\.wasm .*in Node, import the package itself/);
});

test('a client made before init() is a KubeError saying to await init()', { skip: 'Bun' in globalThis || 'Deno' in globalThis }, async () => {
  const { execFileSync } = await import('node:child_process');
  // The web entry alone, never initialized (the Node entry initializes itself).
  const script = "import { KubeClient } from 'kubewasm/web'; try { new KubeClient({ server: 'http://127.0.0.1:1' }); console.log('made'); } catch (e) { console.log(JSON.stringify([e.constructor.name, e.reason, e.message])); }";
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url), encoding: 'utf8' });
  const [name, reason, message] = JSON.parse(out) as [string, string, string];
  assert.deepEqual([name, reason], ['KubeError', 'Invalid']);
  assert.match(message, /not initialized: await init\(\)/);
});

test('init() again, with another module path, resolves to the instance already loaded (as the README says)', async () => {
  // The Node entry loaded the module; a path that does not exist is not even read.
  const first = await initWeb();
  const again = await initWeb({ module_or_path: new URL('file:///nowhere/other_bg.wasm') });
  assert.equal(again, first);
});

test("the web glue's import object has one key per module: bundlers (esbuild) warn of duplicate keys", { skip: 'Bun' in globalThis || 'Deno' in globalThis }, async () => {
  const { readFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const glue = readFileSync(fileURLToPath(import.meta.resolve('kubewasm/web').replace(/index\.js$/, 'kubewasm.js')), 'utf8');
  const keys = [...glue.matchAll(/^ *("[^"]+"): import\d+,$/gm)].map((m) => m[1]!);
  assert.ok(keys.some((k) => k.includes('/snippets/')), `the snippets are imported: ${keys.join(', ')}`);
  assert.deepEqual(keys, [...new Set(keys)]);
});
