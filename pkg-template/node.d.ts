/** Node entry: the same API as the main entry, already initialized; `KubeClient` uses the Node transport by default. */
export * from './web/index.js';
import type { TlsOptions, Transport } from './web/index.js';

/** Bytes of WebAssembly linear memory in use by kubewasm (it grows, never shrinks). */
export declare function wasmMemoryBytes(): number;

/** Options of {@link nodeTransport}. */
export interface NodeTransportOptions {
  /** TLS settings for `https` servers. */
  tls?: TlsOptions;
}

/** The `node:http`/`node:https` transport, with keep-alive connection pools. */
export interface NodeTransport extends Transport {
  /** Close every pooled connection; requests in flight fail. */
  close(): void;
}

/**
 * A `node:http`/`node:https` transport. Every `KubeClient` of the Node entry builds its own from `tls` unless
 * `transport` is given; build one to share its connection pools between clients (`{ server, transport }`).
 * Throws if the TLS material cannot be loaded (bad PEM, a key that does not match its certificate).
 */
export declare function nodeTransport(options?: NodeTransportOptions): NodeTransport;
