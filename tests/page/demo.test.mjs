// `make demo` on a port that is already taken stops before building anything
// and says what to do, instead of printing a URL and failing to bind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { root } from './harness.mjs';

test('a busy DEMO_PORT is reported up front, with the way out', async () => {
  const holder = createServer();
  await new Promise((r) => holder.listen(0, '127.0.0.1', r));
  const { port } = holder.address();
  try {
    const child = spawn(join(root, 'scripts', 'demo.sh'), [], { env: { ...process.env, DEMO_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise((r) => child.on('exit', r));
    assert.equal(code, 1, out);
    assert.match(out, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.match(out, /DEMO_PORT=\d+ make demo/);
    assert.doesNotMatch(out, /open http/, 'no URL is printed for a server that cannot start');
  } finally {
    holder.close();
  }
});
