/** Node entry: the same API as the main entry, already initialized. */
export * from './web/index.js';
/** Bytes of WebAssembly linear memory in use by kubewasm (it grows, never shrinks). */
export declare function wasmMemoryBytes(): number;
