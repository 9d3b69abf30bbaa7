// Node entry: loads the WebAssembly from the package directory (Node's fetch
// cannot read file: URLs), re-exports the API ready to use, and gives every
// KubeClient the `node:http`/`node:https` transport unless told otherwise.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import init, { KubeClient as WebKubeClient, KubeError } from './web/index.js';
import { nodeTransport } from './node-transport.js';

const wasm = await init({ module_or_path: await readWasm() });

// The bytes of web/kubewasm_bg.wasm, from the first of two places that has
// them. Unbundled (Node, Deno, Bun) both name that file in this package.
// Bundlers rewrite the first: webpack (target node) copies the file to its
// output and hands back a file: URL for the copy, but a server build whose
// assets are served to browsers (Next.js, with Turbopack or webpack) hands back
// the browser's URL (`/_next/static/media/…`), which is no file. The second, a
// path from this module's own URL, is what those builds leave readable: they set
// `import.meta.url` to this file in node_modules (Turbopack relative to the
// project, so its standalone output, which traces the read, keeps working;
// webpack writes in the build's absolute path).
// esbuild rewrites neither: both name web/kubewasm_bg.wasm beside the bundle.
async function readWasm() {
  const asset = new URL('./web/kubewasm_bg.wasm', import.meta.url);
  let looked = asset.protocol === 'file:' ? '' : `${asset.href} (not a file), then `;
  if (!looked) {
    try {
      return await readFile(asset);
    } catch (err) {
      looked = `${asset.href} (${err.code ?? err.message}), then `;
    }
  }
  try {
    return await readFile(join(dirname(fileURLToPath(import.meta.url)), 'web', 'kubewasm_bg.wasm'));
  } catch (err) {
    throw new Error(
      `kubewasm: cannot read its WebAssembly module; looked for ${looked}web/kubewasm_bg.wasm beside ${import.meta.url} (${err.code ?? err.message}). ` +
        'Bundled for Node, copy node_modules/kubewasm/web/kubewasm_bg.wasm to web/kubewasm_bg.wasm ' +
        'beside the bundle, or leave kubewasm out of the bundle.',
    );
  }
}

export * from './web/index.js';
// `init` as the main entry has it, so code shared with a page can call it:
// here the module is already loaded, and it resolves at once.
export { default } from './web/index.js';
export { nodeTransport };
export { loadKubeconfig } from './kubeconfig.js';

/** Bytes of WebAssembly linear memory in use by kubewasm (it grows, never shrinks). */
export function wasmMemoryBytes() {
  return wasm.memory.buffer.byteLength;
}

// `transport` unset or 'node' (and no `fetch`): the Node transport, built from
// `tls`. Anything else goes to the client as given (which refuses `tls` beside it).
function withTransport(given) {
  if (given === null || typeof given !== 'object') return given;
  const opts = clientPart(given);
  const { transport, tls, ...rest } = opts;
  if (transport !== undefined && transport !== 'node') return opts;
  // A supplied `fetch` is the transport (the client refuses `tls` beside it).
  if (transport === undefined && typeof opts.fetch === 'function') return opts;
  try {
    return { ...rest, transport: nodeTransport({ tls }) };
  } catch (err) {
    throw new KubeError(`option \`tls\`: ${err?.message ?? err}`, 0, 'Invalid');
  }
}

// What `loadKubeconfig` returns beyond `ClientOptions` (the context it read and
// its namespace) is not the client's: left out, so that the client refuses
// only what no typing declares. A `context` key marks such options (with or
// without the namespace, which a caller may have taken out); a `namespace`
// without it is refused, as a client has no namespace of its own.
function clientPart(opts) {
  if (!Object.hasOwn(opts, 'context')) return opts;
  const { context: _context, namespace: _namespace, ...rest } = opts;
  return rest;
}

/** The REST client; in Node it sends over `node:http`/`node:https` unless `transport` says otherwise. */
export class KubeClient extends WebKubeClient {
  constructor(opts) {
    super(withTransport(opts));
  }
}
