// Typings of `kubewasm/shared`: one set of watches for every tab of an origin.
import type { ClientOptions, InformerFactory, InformerFactoryOptions, InformerHost, KubeClient } from './web/index.js';

/**
 * Where a shared connection's informers get their data (also in each
 * informer's `status.host`): `shared-worker`, one SharedWorker per origin,
 * server and identity, holds the watches of every tab; `worker`, a dedicated
 * Worker of this page, holds them; `page`, this page's own client does.
 */
export type SharedHost = InformerHost;

/** What every form of {@link SharedOptions} has. */
interface SharedOptionsCommon {
  /** The options of the tab's informer factory (`persist`, `releaseGraceMs`, `hiddenPauseMs`). */
  factory?: InformerFactoryOptions | undefined;
  /** `auto` (default): a SharedWorker where the browser has one, else the page. */
  host?: 'auto' | 'shared-worker' | 'worker' | 'page' | undefined;
  /** The URL of `kubewasm/shared-worker.js` when it is served from elsewhere (default: beside this module). */
  workerUrl?: string | URL | undefined;
}

/** {@link SharedOptions} of a client without a `tokenProvider`: `identity` may be left out. */
export interface SharedOptionsWithoutProvider extends SharedOptionsCommon {
  /**
   * The client's options. A bearer `token` stays in the page: the worker
   * asks a connected tab for it before each request. `fetch`, `transport`
   * and `tls` cannot reach a worker (with `host: 'auto'` they keep
   * everything in the page).
   */
  client: ClientOptions & { tokenProvider?: undefined };
  /**
   * Who the credentials belong to, e.g. a user id. Tabs share a worker only
   * when server, identity and headers are equal; only a SHA-256 of them is
   * kept. Default: the bearer token.
   */
  identity?: string | undefined;
}

/**
 * {@link SharedOptions} with an `identity`, which any client may have and a
 * client with a `tokenProvider` must have: its tokens rotate, so none of
 * them can name the worker (without one, `host: 'auto'` keeps everything in
 * the page and says why, and any other `host` throws).
 */
export interface SharedOptionsWithIdentity extends SharedOptionsCommon {
  /**
   * The client's options. A bearer `token` or `tokenProvider` stays in the
   * page: the worker asks a connected tab for a token before each request.
   * `fetch`, `transport` and `tls` cannot reach a worker (with `host: 'auto'`
   * they keep everything in the page).
   */
  client: ClientOptions;
  /**
   * Who the credentials belong to, e.g. a user id. Tabs share a worker only
   * when server, identity and headers are equal; only a SHA-256 of them is
   * kept.
   */
  identity: string;
}

/**
 * Options of {@link connectShared}: `identity` is required when the client
 * has a `tokenProvider` (a `client` typed as plain `ClientOptions` may have
 * one, so it needs an `identity` too).
 */
export type SharedOptions = SharedOptionsWithoutProvider | SharedOptionsWithIdentity;

/** A connection whose informers share their watches with every tab of the origin. */
export interface SharedConnection {
  /** The page's own client, for everything that is not an informer (CRUD, logs, discovery). */
  readonly client: KubeClient;
  /** Informers built here list and watch through the host. */
  readonly factory: InformerFactory;
  readonly host: SharedHost;
  /** Stop this tab's informers and leave the host (also done when the page is closed). */
  close(): void;
}

/**
 * Connect to the origin's shared cache: the same `InformerFactory` API, with
 * every informer's list and watch served by one SharedWorker for all tabs
 * with the same server and identity. Where SharedWorker is missing or cannot
 * start, the factory works in the page and `host` says why. Initializes the
 * module itself.
 */
export declare function connectShared(opts: SharedOptions): Promise<SharedConnection>;
