// The Node entry finds its .wasm where bundlers leave it, and says where it
// looked when it is not there (an esbuild bundle without the file copied).
// Run on a copy of the package, in a child process so this process's module
// instance is not touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const pkg = dirname(fileURLToPath(import.meta.resolve('kubewasm/package.json')));

function importIn(dir: string) {
  const code = `import(${JSON.stringify(pathToFileURL(join(dir, 'node.js')).href)}).then((m) => console.log('OK', typeof m.KubeClient, typeof m.InformerFactory), (e) => console.log('ERR', e.message))`;
  return spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' }).stdout.trim();
}

test('the Node entry reads web/kubewasm_bg.wasm beside itself, and without it names where it looked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubewasm-entry-'));
  try {
    cpSync(pkg, dir, { recursive: true });
    assert.equal(importIn(dir), 'OK function function');
    rmSync(join(dir, 'web', 'kubewasm_bg.wasm'));
    const out = importIn(dir);
    assert.match(out, /^ERR kubewasm: cannot read its WebAssembly module; looked for /);
    assert.ok(out.includes(pathToFileURL(join(dir, 'web', 'kubewasm_bg.wasm')).href), out);
    assert.match(out, /ENOENT/);
    assert.match(out, /copy node_modules\/kubewasm\/web\/kubewasm_bg\.wasm/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
