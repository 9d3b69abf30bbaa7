// Shared pieces of the page tests and the benchmark: the simulated API server
// serving the built dashboard same-origin, and headless Chromium.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const site = join(root, 'target', 'demo-site');
export const artifacts = join(root, 'tests', 'artifacts');

/**
 * Start kubewasm-sim (no token: the page is same-origin) serving `staticDir`
 * (the dashboard by default) and resolve with its URL.
 */
export async function startSim(args, { staticDir = site, port = 0 } = {}) {
  const bin = join(root, 'target', 'release', 'kubewasm-sim');
  for (const need of [bin, join(staticDir, 'index.html')]) {
    if (!existsSync(need)) throw new Error(`${need} is missing: run \`make test-page\` (it builds the sim, the package and the site)`);
  }
  const proc = spawn(bin, ['--port', String(port), '--static-dir', staticDir, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/LISTENING (\S+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (c) => reject(new Error(`kubewasm-sim exited with ${c}`)));
  });
  const call = async (path, body) => {
    const r = await fetch(url + path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    return r.json();
  };
  const exited = new Promise((r) => proc.once('exit', r));
  // `stop` resolves once the process is gone (its port free again).
  return { proc, url, call, stop: () => (proc.kill(), exited) };
}

/** Headless Chromium from the system, with a throwaway profile. */
export async function launch(extraArgs = []) {
  const profile = mkdtempSync(join(tmpdir(), 'kubewasm-page-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    viewport: { width: 1500, height: 900 },
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', ...extraArgs],
  });
  mkdirSync(artifacts, { recursive: true });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A page init script (`page.addInitScript(defineFirstRows)`) for the start-up
 * benchmarks: `window.__firstRows(informer, t0)` renders the first 50 objects
 * of the informer's first diff as table rows and resolves with the ms from
 * `t0` to the frame that shows them.
 */
export function defineFirstRows() {
  window.__firstRows = (informer, t0) => new Promise((resolve) => {
    const table = document.body.appendChild(document.createElement('table'));
    const off = informer.subscribe(() => {
      off();
      table.replaceChildren(...informer.getSnapshot().slice(0, 50).map((p) => {
        const tr = document.createElement('tr');
        tr.textContent = `${p.metadata.namespace}/${p.metadata.name}`;
        return tr;
      }));
      requestAnimationFrame(() => resolve(performance.now() - t0));
    });
  });
}

/** Poll `cond` until it is truthy. */
export async function until(cond, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * What `kubectl proxy --www=<site> --www-prefix=/ui/` does: the site's files
 * under /ui/, the API (/api, /apis) proxied to the server, streams included.
 */
export async function startPrefixProxy(apiUrl) {
  const { createServer, request } = await import('node:http');
  const { readFile } = await import('node:fs/promises');
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path.startsWith('/api')) {
      const up = request(apiUrl + req.url, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
      return;
    }
    if (!path.startsWith('/ui/')) { res.writeHead(404).end(); return; }
    const rel = path.slice(4) || 'index.html';
    if (rel.includes('..')) { res.writeHead(400).end(); return; }
    try {
      const body = await readFile(join(site, rel));
      res.writeHead(200, { 'Content-Type': types[rel.slice(rel.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, stop: () => { server.closeAllConnections(); server.close(); } };
}

/**
 * An API server on its own origin that forwards everything (preflights and
 * streams included) to `apiUrl` and records each request's method, path and
 * `Authorization` header, so a test can see what the page sent where.
 */
export async function startRecordingProxy(apiUrl) {
  const { createServer, request } = await import('node:http');
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, authorization: req.headers.authorization });
    const up = request(apiUrl + req.url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    // A watch the page abandoned (it navigated away) must not stay open upstream.
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, stop: () => { server.closeAllConnections(); server.close(); } };
}
