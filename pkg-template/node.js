// Node entry: loads the WebAssembly from the package directory (Node's fetch
// cannot read file: URLs) and re-exports the API, ready to use.
import { readFile } from 'node:fs/promises';
import init from './web/kubewasm.js';

const wasm = await init({ module_or_path: await readFile(new URL('./web/kubewasm_bg.wasm', import.meta.url)) });

export * from './web/index.js';

/** Bytes of WebAssembly linear memory in use by kubewasm (it grows, never shrinks). */
export function wasmMemoryBytes() {
  return wasm.memory.buffer.byteLength;
}
