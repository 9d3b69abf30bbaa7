/** Node entry: the same API as the main entry, already initialized; `KubeClient` uses the Node transport by default. */
export * from './web/index.js';
/** The main entry's `init`: the Node entry is already initialized, so it resolves at once (code shared with a page may call it). */
export { default } from './web/index.js';
import type { ClientOptions, TlsOptions, Transport } from './web/index.js';

/** Bytes of WebAssembly linear memory in use by kubewasm (it grows, never shrinks). */
export declare function wasmMemoryBytes(): number;

/** Options of {@link nodeTransport}. */
export interface NodeTransportOptions {
  /** TLS settings for `https` servers. */
  tls?: TlsOptions | undefined;
}

/** The `node:http`/`node:https` transport, with keep-alive connection pools. */
export interface NodeTransport extends Transport {
  /** Close every pooled connection; requests in flight fail. */
  close(): void;
}

/**
 * A `node:http`/`node:https` transport. Every `KubeClient` of the Node entry builds its own from `tls` unless
 * `transport` is given; build one to share its connection pools between clients (`{ server, transport }`).
 * It follows redirects as client-go does (at most 10; `Authorization` only to the same host or its subdomains; never
 * from https to plain http) and decodes `gzip`, `deflate` and `br` response bodies, asking for `gzip` on every request
 * but watches unless the request names its own `Accept-Encoding`.
 * Throws if the TLS material cannot be loaded (bad PEM, a key that does not match its certificate) or an option is
 * unknown (a misspelt TLS setting is refused, not ignored).
 */
export declare function nodeTransport(options?: NodeTransportOptions): NodeTransport;

/** Options of {@link loadKubeconfig}. */
export interface KubeconfigOptions {
  /** Files to read and merge (for each name, the first file that defines it wins; missing files are skipped). Default: the `KUBECONFIG` list, else `~/.kube/config`. */
  paths?: string[] | undefined;
  /** The context to use instead of the merged `current-context`. */
  context?: string | undefined;
}

/**
 * `ClientOptions` for one kubeconfig context, plus what the context says beyond them. The Node entry's `KubeClient`
 * takes it as it is and leaves out `context` and, beside it, `namespace` (a `namespace` without a `context` is an
 * unknown client option: a client has none of its own); pass the namespace to `resource()` or to calls.
 */
export interface KubeconfigClientOptions extends ClientOptions {
  /** The context used. */
  context: string;
  /** The context's namespace; `default` when it names none, as kubectl reads it. */
  namespace: string;
}

/**
 * Read kubeconfig files as kubectl does and return the options of a `KubeClient` for one context:
 * `new KubeClient(await loadKubeconfig())`. Reads the server, CA (data or file), client certificate and key (data or
 * files), bearer token or token file (re-read at most once a minute), `tls-server-name`, `insecure-skip-tls-verify`,
 * impersonation (`as`, `as-uid`, one of `as-groups`), and exec credential plugins (`client.authentication.k8s.io/v1`
 * and `v1beta1`; the credential is kept until its `expirationTimestamp` or a 401, then the plugin runs again).
 * Relative paths are resolved against the file that names them. Rejects with `KubeError` reason `Invalid` on anything it
 * cannot honour (auth-provider plugins, `proxy-url`, YAML beyond what kubeconfig writers produce) and on an unknown
 * option. An exec plugin that fails when a request runs it fails that request with reason `Credentials`.
 */
export declare function loadKubeconfig(options?: KubeconfigOptions): Promise<KubeconfigClientOptions>;
