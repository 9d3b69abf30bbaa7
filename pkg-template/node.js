// Node entry: loads the WebAssembly from the package directory (Node's fetch
// cannot read file: URLs), re-exports the API ready to use, and gives every
// KubeClient the `node:http`/`node:https` transport unless told otherwise.
import { readFile } from 'node:fs/promises';
import init, { KubeClient as WebKubeClient, KubeError } from './web/index.js';
import { nodeTransport } from './node-transport.js';

const wasm = await init({ module_or_path: await readFile(new URL('./web/kubewasm_bg.wasm', import.meta.url)) });

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
function withTransport(opts) {
  if (opts === null || typeof opts !== 'object') return opts;
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

/** The REST client; in Node it sends over `node:http`/`node:https` unless `transport` says otherwise. */
export class KubeClient extends WebKubeClient {
  constructor(opts) {
    super(withTransport(opts));
  }
}
