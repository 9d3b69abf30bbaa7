// The Node transport: kubewasm's HTTP exchanges over `node:http` /
// `node:https` (the `Transport` protocol of the `transport` client option).
// Why not Node's global `fetch`: it cannot take the TLS settings a kubeconfig
// carries (CA, client certificate, server name), it gives no hold on the
// socket when a watch is not read, and its WHATWG streams cost a little more
// per chunk (BENCHMARKS.md, issue 16 §2).
import * as http from 'node:http';
import * as https from 'node:https';
import * as tls from 'node:tls';
import * as zlib from 'node:zlib';
import { Duplex, pipeline } from 'node:stream';
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

// Redirects are followed as Go's net/http client follows them for client-go:
// at most this many, then the request fails.
const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Dropped from a redirect to another host (Go's list, and the proxy's
// credential): a gateway must not hand the cluster's token to a third party.
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'www-authenticate', 'cookie', 'cookie2']);
// A redirect body up to this size is read to its end, keeping the connection
// for the pool; a larger one costs the connection instead (Go's rule too).
const REDIRECT_DRAIN_BYTES = 2048;

// Accept-Encoding: `gzip` on requests other than watches, as client-go sends
// it; the API server then compresses non-watch responses over 128 KiB. The
// cost is CPU: the server's to compress, ours (zlib, on Node's thread pool)
// to inflate, which on a fast link to the cluster can outweigh the bytes
// saved (why client-go can turn it off); large lists over slower links shrink
// many times. Watches ask for none: the API server never compresses them, and
// a gateway that would might hold events back to fill its buffers. A request
// that carries its own Accept-Encoding (the client's `headers`) keeps it.
const ACCEPT_ENCODING = 'gzip';

const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']);

/** `headers` without the names in `drop` (lower case). */
function without(headers, drop) {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !drop.has(name.toLowerCase())));
}

/** Go's rule for keeping credentials on a redirect: `sub` is `parent` or a subdomain of it. */
function isDomainOrSubdomain(sub, parent) {
  if (sub === parent) return true;
  // An IPv6 address (a zone's name after `%` included) is no subdomain.
  if (/[:%]/.test(sub)) return false;
  return sub.endsWith(`.${parent}`);
}

/** Lets a redirect's response go: read to its end when small, else closed with its connection. */
function discard(res) {
  res.on('error', () => {});
  const length = res.headers['content-length'];
  if (length !== undefined && Number(length) > REDIRECT_DRAIN_BYTES) return void res.destroy();
  let read = 0;
  res.on('data', (chunk) => {
    read += chunk.length;
    if (read > REDIRECT_DRAIN_BYTES) res.destroy();
  });
}

function nonRetryable(message) {
  return Object.assign(new Error(message), { retryable: false });
}

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

const DECODERS = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  // zlib-wrapped as the RFC says, or raw as some servers send it and browsers
  // accept: a zlib header is two bytes, method 8, their value a multiple of 31.
  deflate: (head) => ((head[0] & 0x0f) === 8 && (head[0] * 256 + head[1]) % 31 === 0 ? zlib.createInflate() : zlib.createInflateRaw()),
  br: () => zlib.createBrotliDecompress(),
};

/**
 * One content coding undone. The zlib stream is made on the first bytes (two
 * tell raw deflate from zlib-wrapped), so an empty body, which zlib would call
 * truncated, decodes to nothing. Back-pressure passes through: a paused reader
 * pauses the zlib stream, whose full buffers hold back writes, and `pipeline`
 * then pauses the socket.
 */
class Decoder extends Duplex {
  constructor(coding) {
    super();
    this._coding = coding;
    this._inner = null;
    this._head = null;
  }

  _start(head) {
    const inner = DECODERS[this._coding](head);
    this._inner = inner;
    inner.on('data', (d) => {
      if (!this.push(d)) inner.pause();
    });
    inner.on('end', () => this.push(null));
    inner.on('error', (err) => this.destroy(Object.assign(new Error(`${this._coding} response body: ${err.message}`), { code: err.code })));
  }

  _write(chunk, _encoding, callback) {
    if (!this._inner) {
      const head = this._head ? Buffer.concat([this._head, chunk]) : chunk;
      if (this._coding === 'deflate' && head.length < 2) {
        this._head = head;
        return callback();
      }
      this._head = null;
      this._start(head);
      chunk = head;
    }
    if (this._inner.write(chunk)) callback();
    else this._inner.once('drain', () => callback());
  }

  _final(callback) {
    if (!this._inner && !this._head) {
      this.push(null);
      return callback();
    }
    if (!this._inner) {
      this._start(this._head);
      this._inner.write(this._head);
    }
    this._inner.end();
    callback();
  }

  _read() {
    this._inner?.resume();
  }

  _destroy(err, callback) {
    this._inner?.destroy();
    callback(err);
  }
}

/**
 * The body to read: `res` itself, or `res` through a decoder per content
 * coding (applied in the order listed, so undone in reverse). Throws, not
 * retryable, on a coding it does not know: the same request would get it again.
 */
function decodedBody(res, method) {
  const header = res.headers['content-encoding'];
  if (!header || method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304) return res;
  const codings = String(header).split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return res;
  for (const c of codings) {
    if (!Object.hasOwn(DECODERS, c)) {
      throw nonRetryable(`the response is compressed with Content-Encoding ${JSON.stringify(c)}, which the Node transport cannot decode (it reads gzip, deflate and br)`);
    }
  }
  const decoders = codings.reverse().map((c) => new Decoder(c));
  // Errors reach the reader as the last stream's 'error'; a socket lost
  // mid-body as the response's 'close'.
  pipeline(res, ...decoders, () => {});
  return decoders.at(-1);
}

/** A response body pulled by kubewasm: chunks queue while unread, and the socket pauses past the high-water mark. */
class NodeResponse {
  constructor(res, body, signal, detach) {
    this.status = res.statusCode;
    this.headers = res.headers;
    if (body !== res) {
      // What kubewasm reads is the decoded body: these described the other.
      this.headers = { ...res.headers };
      delete this.headers['content-encoding'];
      delete this.headers['content-length'];
    }
    this._body = body;
    this._queue = [];
    this._queued = 0;
    this._join = null;
    this._paused = false;
    this._ended = false;
    this._error = null;
    this._waiter = null;
    this._detach = detach;
    body.on('data', (chunk) => {
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
        body.pause();
      }
    });
    body.on('end', () => {
      this._ended = true;
      this._detach();
      this._settle();
    });
    const failed = (err) => this._fail(signal.aborted ? abortError() : transportError(err));
    body.on('error', failed);
    if (body !== res) res.on('error', failed);
    // The response may end (all its bytes in the decoder) before the body does.
    let received = false;
    res.on('end', () => {
      received = true;
    });
    res.on('close', () => {
      if (!received && !this._ended) this._fail(signal.aborted ? abortError() : Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' }));
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
        this._body.resume();
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

// A misspelt TLS setting (`insecureSkipTLSVerify`, `servername`) would be
// ignored: refused instead, as the package's other option objects are.
function refuseUnknown(obj, known, what) {
  if (obj === null || typeof obj !== 'object') return;
  for (const k of Object.keys(obj)) {
    if (known.includes(k) || obj[k] === undefined || obj[k] === null) continue;
    const meant = known.find((n) => n.toLowerCase() === k.toLowerCase());
    const shown = k.length > 64 ? `${k.slice(0, 64)}…` : k;
    throw new Error(`unknown ${what} option \`${shown}\` (${meant ? `did you mean \`${meant}\`? ` : ''}known: ${known.join(', ')})`);
  }
}

/**
 * A transport over `node:http` / `node:https` with keep-alive connection pools. The package's Node entry gives every
 * `KubeClient` one unless `transport` says otherwise; build one yourself to share its pools between clients.
 * Throws if the TLS material cannot be loaded (bad PEM, a key that does not match its certificate).
 */
export function nodeTransport(options = {}) {
  refuseUnknown(options, ['tls'], 'nodeTransport');
  const t = options.tls ?? {};
  refuseUnknown(t, ['ca', 'cert', 'key', 'serverName', 'insecureSkipTlsVerify'], 'tls');
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
          return reject(nonRetryable(`not an absolute URL: ${req.url}`));
        }
        if (url.protocol !== 'https:' && url.protocol !== 'http:') {
          return reject(nonRetryable(`unsupported URL scheme ${url.protocol}`));
        }
        const first = url;
        let method = req.method;
        let body = req.body;
        let headers = req.headers;
        if (!req.watch && !Object.keys(headers).some((h) => h.toLowerCase() === 'accept-encoding')) {
          headers = { ...headers, 'accept-encoding': ACCEPT_ENCODING };
        }
        let hops = 0;
        // The exchange in flight: the first, or the latest redirect's.
        let current = null;
        let settled = false;
        const onAbort = () => current?.destroy(abortError());
        const detach = () => signal?.removeEventListener('abort', onAbort);
        signal?.addEventListener('abort', onAbort, { once: true });
        const fail = (err) => {
          if (settled) return;
          settled = true;
          detach();
          reject(err);
        };
        const send = () => {
          const secure = url.protocol === 'https:';
          // A body's length is always sent: Node sends a DELETE's body (delete
          // preconditions) neither chunked nor with a length otherwise, so the
          // server reads none and takes the bytes for the next request.
          const r = (secure ? https : http).request(url, {
            method,
            headers: body ? { ...headers, 'content-length': String(body.byteLength) } : headers,
            agent: secure ? httpsAgent : httpAgent,
          });
          current = r;
          r.on('response', (res) => {
            if (settled) return void discard(res);
            if (REDIRECTS.has(res.statusCode)) {
              discard(res);
              try {
                redirect(res);
              } catch (err) {
                return fail(err);
              }
              return send();
            }
            let decoded;
            try {
              decoded = decodedBody(res, method);
            } catch (err) {
              res.on('error', () => {});
              res.destroy();
              return fail(err);
            }
            settled = true;
            resolve(new NodeResponse(res, decoded, signal ?? { aborted: false }, detach));
          });
          r.on('error', (err) => {
            // An earlier hop's exchange is done with; a response reports its own.
            if (current !== r || settled) return;
            fail(signal?.aborted ? abortError() : transportError(err));
          });
          r.end(body);
        };
        // The next hop, as Go's net/http client takes it; throws (not
        // retryable: the same request would be sent the same way) when it
        // cannot be followed.
        const redirect = (res) => {
          const location = res.headers.location;
          if (!location) throw nonRetryable(`${res.statusCode} redirect from ${url.href} without a Location`);
          if (++hops > MAX_REDIRECTS) throw nonRetryable(`stopped after ${MAX_REDIRECTS} redirects, the last to ${location}`);
          let next;
          try {
            next = new URL(location, url);
          } catch {
            throw nonRetryable(`a redirect from ${url.href} to a Location that is not a URL: ${location}`);
          }
          if (next.protocol !== 'https:' && next.protocol !== 'http:') {
            throw nonRetryable(`a redirect to an unsupported URL scheme: ${location}`);
          }
          if (url.protocol === 'https:' && next.protocol === 'http:') {
            throw nonRetryable(`refused a redirect from https to plain http (${next.href}): the credentials and data would go unencrypted`);
          }
          if (res.statusCode <= 303) {
            // 301, 302 and 303: another method becomes a GET without a body.
            if (method !== 'GET' && method !== 'HEAD') method = 'GET';
            if (body) {
              body = undefined;
              headers = without(headers, BODY_HEADERS);
            }
          }
          // Credentials go only to the first host and its subdomains; once
          // dropped they stay dropped, even back on the first host.
          if (!isDomainOrSubdomain(next.hostname, first.hostname)) headers = without(headers, CREDENTIAL_HEADERS);
          url = next;
        };
        send();
      });
    },
    /** Close every pooled connection; requests in flight fail. */
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
