// The README's "Run it locally" block, run as written: only its two port
// numbers are replaced by free ports, so a stale command there fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

const here = join(dirname(fileURLToPath(import.meta.url)), '..');

const freePort = () => new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

/** The first ```sh block after `heading`. */
function block(markdown, heading) {
  const from = markdown.indexOf(heading);
  assert.ok(from >= 0, `README has "${heading}"`);
  const m = /```sh\n([\s\S]*?)```/.exec(markdown.slice(from));
  assert.ok(m, `a sh block after "${heading}"`);
  return m[1];
}

test('the README\'s local run works as written', async () => {
  const script = block(readFileSync(join(here, 'README.md'), 'utf8'), '## Run it locally');
  const [simPort, edgePort] = [await freePort(), await freePort()];
  for (const port of ['8001', '8787']) assert.match(script, new RegExp(`\\b${port}\\b`), `the block uses port ${port}`);
  const run = script.replaceAll(/\b8001\b/g, String(simPort)).replaceAll(/\b8787\b/g, String(edgePort));
  const env = { ...process.env };
  delete env.EDGE_SECRET;
  // Whatever happens, nothing the block started outlives it.
  const bash = spawn('bash', ['-c', `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${run}`], {
    cwd: here, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  bash.stdout.on('data', (d) => { out += d; });
  bash.stderr.on('data', (d) => { err += d; });
  const timer = setTimeout(() => bash.kill(), 120_000);
  const code = await new Promise((resolve) => bash.on('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, `the block failed:\n${out}\n${err}`);
  const answer = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((v) => Array.isArray(v.items));
  assert.ok(answer, `curl printed the pods:\n${out}`);
  assert.ok(answer.items.length > 0, 'app=web pods in default');
  assert.ok(answer.items.every((p) => p.namespace === 'default'), JSON.stringify(answer.items));
});
