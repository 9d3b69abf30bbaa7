// The Node transport: kubewasm's HTTP exchanges over `node:http` /
// `node:https` (the `Transport` protocol of the `transport` client option).
// Why not Node's global `fetch`: it cannot take the TLS settings a kubeconfig
// carries (CA, client certificate, server name), it gives no hold on the
// socket when a watch is not read, and its WHATWG streams cost a little more
// per chunk (BENCHMARKS.md, issue 16 §2).
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { X509Certificate, createPrivateKey } from 'node:crypto';

// Bytes of a response queued in JS, unread by kubewasm, before the socket is
// paused. Past this the kernel's socket buffers fill and TCP holds the
// server back, so a consumer that stops reading costs bounded memory.
const HIGH_WATER_BYTES = 512 * 1024;

// Queued chunks are joined into one buffer per response, used again for every
// read: kubewasm copies each chunk into wasm memory before it reads again, and
// a fresh buffer per read is slow (the engine maps and zeroes new pages for
// each until a garbage collection frees the old). A read returns at most this
// much of the queue (or one larger chunk whole).
const JOIN_BYTES = 128 * 1024;

// Pooled connections idle this long are closed by us, before the usual idle
// timeouts of load balancers in front of API servers (60 s and up) close them
// under a request that is reusing one: a write (not retried) would fail.
// Connections in use, quiet watches included, are not affected.
const IDLE_SOCKET_MS = 15_000;

// Certificate verification failures: retrying cannot fix them, so they are
// reported at once (KubeError reason `Invalid`) instead of being retried.
const PERMANENT_TLS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID', 'CERT_SIGNATURE_FAILURE', 'CERT_REVOKED', 'CERT_UNTRUSTED', 'CERT_REJECTED',
  'INVALID_CA', 'ERR_TLS_CERT_ALTNAME_INVALID',
  // The server refused our client certificate (or its absence).
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
]);

function transportError(err) {
  if (err && typeof err === 'object' && PERMANENT_TLS.has(err.code)) {
    const e = new Error(`TLS: ${err.message}`);
    e.code = err.code;
    e.retryable = false;
    return e;
  }
  return err;
}

function abortError() {
  const e = new Error('the request was aborted');
  e.name = 'AbortError';
  return e;
}

/** A response body pulled by kubewasm: chunks queue while unread, and the socket pauses past the high-water mark. */
class NodeResponse {
  constructor(res, signal, detach) {
    this.status = res.statusCode;
    this.headers = res.headers;
    this._res = res;
    this._queue = [];
    this._queued = 0;
    this._join = null;
    this._paused = false;
    this._ended = false;
    this._error = null;
    this._waiter = null;
    this._detach = detach;
    res.on('data', (chunk) => {
      const w = this._waiter;
      if (w) {
        this._waiter = null;
        w.resolve(chunk);
        return;
      }
      this._queue.push(chunk);
      this._queued += chunk.length;
      if (!this._paused && this._queued >= HIGH_WATER_BYTES) {
        this._paused = true;
        res.pause();
      }
    });
    res.on('end', () => {
      this._ended = true;
      this._detach();
      this._settle();
    });
    res.on('error', (err) => this._fail(signal.aborted ? abortError() : transportError(err)));
    res.on('close', () => {
      if (!this._ended) this._fail(signal.aborted ? abortError() : Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' }));
    });
  }

  // The next chunk to hand over: the first queued chunk alone, or as many as
  // fit in the join buffer (a view of it, valid until the next read).
  _take() {
    const q = this._queue;
    let n = 0;
    let bytes = 0;
    while (n < q.length && bytes + q[n].length <= JOIN_BYTES) bytes += q[n++].length;
    if (n <= 1) {
      const first = q.shift();
      this._queued -= first.length;
      return first;
    }
    this._join ??= new Uint8Array(JOIN_BYTES);
    let at = 0;
    for (const c of q.splice(0, n)) {
      this._join.set(c, at);
      at += c.length;
    }
    this._queued -= at;
    return this._join.subarray(0, at);
  }

  _fail(err) {
    if (this._ended || this._error) return;
    this._error = err;
    this._detach();
    this._settle();
  }

  _settle() {
    const w = this._waiter;
    if (!w) return;
    this._waiter = null;
    if (this._error) w.reject(this._error);
    else w.resolve(null);
  }

  read() {
    if (this._queue.length > 0) {
      // Queued chunks go over together: node:http hands over each chunk of a
      // chunked response separately (one watch event each from the API
      // server), and a crossing into wasm per event costs more than the copy.
      const chunk = this._take();
      if (this._paused && this._queued < HIGH_WATER_BYTES) {
        this._paused = false;
        this._res.resume();
      }
      return chunk;
    }
    if (this._error) return Promise.reject(this._error);
    if (this._ended) return null;
    return new Promise((resolve, reject) => {
      this._waiter = { resolve, reject };
    });
  }
}

/**
 * A transport over `node:http` / `node:https` with keep-alive connection pools. The package's Node entry gives every
 * `KubeClient` one unless `transport` says otherwise; build one yourself to share its pools between clients.
 * Throws if the TLS material cannot be loaded (bad PEM, a key that does not match its certificate).
 */
export function nodeTransport(options = {}) {
  const t = options.tls ?? {};
  // Checked here so a bad certificate or key fails the constructor in every
  // runtime (Deno's secure context loads them only when connecting).
  if (t.cert || t.key) {
    if (!t.cert || !t.key) throw new Error('a client certificate needs its key, and a key its certificate');
    if (!new X509Certificate(t.cert).checkPrivateKey(createPrivateKey(t.key))) {
      throw new Error('the client key does not match the client certificate');
    }
  }
  // The CA certificates, as Go's AppendCertsFromPEM reads a bundle: PEM
  // blocks that do not parse are skipped, and a bundle with none is refused
  // (client-go too); otherwise every connection would fail as "self-signed".
  let ca;
  if (t.ca !== undefined) {
    ca = [];
    for (const one of Array.isArray(t.ca) ? t.ca : [t.ca]) {
      const text = typeof one === 'string' ? one : Buffer.from(one).toString('latin1');
      for (const pem of text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []) {
        try {
          new X509Certificate(pem);
          ca.push(pem);
        } catch {
          // skipped, as Go skips it
        }
      }
    }
    if (ca.length === 0) throw new Error('the CA (tls.ca, certificate-authority) holds no readable PEM certificate');
  }
  // One secure context for every connection: the CA bundle is parsed once.
  const secureContext = tls.createSecureContext({ ca, cert: t.cert, key: t.key });
  const httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  const httpsAgent = new https.Agent({
    keepAlive: true,
    timeout: IDLE_SOCKET_MS,
    secureContext,
    rejectUnauthorized: t.insecureSkipTlsVerify !== true,
    ...(t.serverName ? { servername: t.serverName } : {}),
  });
  return {
    name: 'node',
    request(req) {
      return new Promise((resolve, reject) => {
        const { signal } = req;
        if (signal?.aborted) return reject(abortError());
        let url;
        try {
          url = new URL(req.url);
        } catch {
          return reject(Object.assign(new Error(`not an absolute URL: ${req.url}`), { retryable: false }));
        }
        const secure = url.protocol === 'https:';
        if (!secure && url.protocol !== 'http:') {
          return reject(Object.assign(new Error(`unsupported URL scheme ${url.protocol}`), { retryable: false }));
        }
        let settled = false;
        // A body's length is always sent: Node sends a DELETE's body (delete
        // preconditions) neither chunked nor with a length otherwise, so the
        // server reads none and takes the bytes for the next request.
        const headers = req.body ? { ...req.headers, 'content-length': String(req.body.byteLength) } : req.headers;
        const r = (secure ? https : http).request(url, {
          method: req.method,
          headers,
          agent: secure ? httpsAgent : httpAgent,
        });
        const onAbort = () => r.destroy(abortError());
        const detach = () => signal?.removeEventListener('abort', onAbort);
        signal?.addEventListener('abort', onAbort, { once: true });
        r.on('response', (res) => {
          settled = true;
          resolve(new NodeResponse(res, signal ?? { aborted: false }, detach));
        });
        r.on('error', (err) => {
          if (settled) return; // the response reports it
          settled = true;
          detach();
          reject(signal?.aborted ? abortError() : transportError(err));
        });
        r.end(req.body);
      });
    },
    /** Close every pooled connection; requests in flight fail. */
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
