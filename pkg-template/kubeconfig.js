// kubeconfig loading for the Node entry: client-go's clientcmd rules
// (KUBECONFIG merging, current or named context, relative paths against the
// file that names them, exec credential plugins) producing ClientOptions for
// the Node transport.
import { readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { homedir } from 'node:os';
import { execFile } from 'node:child_process';
import { KubeError } from './web/index.js';
import { nodeTransport } from './node-transport.js';
import { parseKubeconfigYaml } from './kubeconfig-yaml.js';

const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
// client-go re-reads a token file at most once a minute.
const TOKEN_FILE_TTL_MS = 60_000;
const EXEC_TIMEOUT_MS = 120_000;

const invalid = (message) => Object.assign(new KubeError(message, 0, 'Invalid'), { retryable: false });
// A credential plugin that fails when run (client-go's "getting credentials"):
// the request fails without a retry of its own, and an informer tries again
// after its backoff, as for a `tokenProvider` that throws.
const credentials = (message) => Object.assign(new KubeError(`getting credentials: ${message}`, 0, 'Credentials'), { retryable: false });
const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v) => (v === null || v === undefined || typeof v === 'object' ? undefined : String(v));
// Go's YAML 1.1 booleans (kubeconfigs are decoded by go-yaml).
const bool = (v) => v === true || (typeof v === 'string' && /^(true|True|TRUE|yes|Yes|YES|on|On|ON|y|Y)$/.test(v));

function defaultPaths() {
  const env = process.env.KUBECONFIG;
  if (env) return env.split(delimiter).filter((p) => p !== '');
  // HOME first, as os.homedir() does in Node (Bun's caches it at start-up).
  const home = (process.platform === 'win32' ? process.env.USERPROFILE : process.env.HOME) || homedir();
  return [join(home, '.kube', 'config')];
}

function readFile(path, what) {
  try {
    return readFileSync(path);
  } catch (e) {
    throw invalid(`kubeconfig: ${what} ${path}: ${e.message}`);
  }
}

// `*-data` (base64) wins over the file, as in client-go.
function material(entry, dataKey, fileKey, dir) {
  const data = str(entry[dataKey]);
  if (data !== undefined && data !== '') return Buffer.from(data, 'base64');
  const file = str(entry[fileKey]);
  if (file !== undefined && file !== '') return readFile(resolve(dir, file), fileKey);
  return undefined;
}

/** Runs an exec credential plugin and keeps its credential until it expires or the server answers 401. */
function execCredentials(exec, dir, clusterInfo) {
  const apiVersion = str(exec.apiVersion);
  if (!EXEC_API_VERSIONS.includes(apiVersion)) {
    throw invalid(`kubeconfig: exec apiVersion ${JSON.stringify(apiVersion)} is not supported (${EXEC_API_VERSIONS.join(', ')})`);
  }
  let command = str(exec.command);
  if (!command) throw invalid('kubeconfig: exec has no command');
  // A relative path with a separator is relative to the kubeconfig file; a bare name is looked up on PATH.
  if (!isAbsolute(command) && (command.includes('/') || command.includes(sep))) command = resolve(dir, command);
  if (exec.args != null && !Array.isArray(exec.args)) throw invalid('kubeconfig: exec args must be a list');
  const args = (exec.args ?? []).map((a) => String(a ?? ''));
  if (exec.env != null && !Array.isArray(exec.env)) throw invalid('kubeconfig: exec env must be a list');
  const env = {};
  for (const e of exec.env ?? []) {
    const name = str(e?.name);
    if (!name) throw invalid('kubeconfig: exec env entry without a name');
    env[name] = str(e.value) ?? '';
  }
  if (str(exec.interactiveMode) === 'Always') {
    throw invalid('kubeconfig: exec interactiveMode Always needs a terminal; kubewasm runs credential plugins non-interactively');
  }
  const info = {
    apiVersion,
    kind: 'ExecCredential',
    spec: { interactive: false, ...(bool(exec.provideClusterInfo) ? { cluster: clusterInfo } : {}) },
  };
  const hint = str(exec.installHint);

  const run = () => new Promise((resolvePromise, reject) => {
    execFile(
      command,
      args,
      { env: { ...process.env, ...env, KUBERNETES_EXEC_INFO: JSON.stringify(info) }, timeout: EXEC_TIMEOUT_MS, maxBuffer: 1 << 20, windowsHide: true },
      (err, stdout, stderr) => {
        if (err) {
          const detail = String(stderr ?? '').trim().slice(0, 500);
          // Node's message for a failed command repeats its stderr: the exit is told instead.
          const how = err.killed ? `timed out after ${EXEC_TIMEOUT_MS} ms`
            : typeof err.code === 'number' ? `exited with code ${err.code}`
              : err.signal ? `killed by ${err.signal}`
                : err.message;
          return reject(credentials(`exec credential plugin ${command} failed: ${how}${detail ? `: ${detail}` : ''}${err.code === 'ENOENT' && hint ? ` (${hint})` : ''}`));
        }
        let cred;
        try {
          cred = JSON.parse(stdout);
        } catch (e) {
          return reject(credentials(`exec credential plugin ${command} printed no JSON: ${e.message}`));
        }
        const status = cred?.status;
        if (cred?.kind !== 'ExecCredential' || cred.apiVersion !== apiVersion || !isMap(status)) {
          return reject(credentials(`exec credential plugin ${command} printed no ${apiVersion} ExecCredential with a status`));
        }
        const token = str(status.token);
        const cert = str(status.clientCertificateData);
        const key = str(status.clientKeyData);
        if (!token && !(cert && key)) {
          return reject(credentials(`exec credential plugin ${command} returned neither a token nor a client certificate and key`));
        }
        let expiresAt;
        if (status.expirationTimestamp != null) {
          expiresAt = Date.parse(String(status.expirationTimestamp));
          if (Number.isNaN(expiresAt)) return reject(credentials(`exec credential plugin ${command}: bad expirationTimestamp ${status.expirationTimestamp}`));
        }
        resolvePromise({ token, cert, key, expiresAt });
      },
    );
  });

  let cached = null;
  let running = null;
  return {
    /** The cached credential while it is valid, else a fresh one (concurrent callers share one run). */
    get() {
      if (cached && (cached.expiresAt === undefined || Date.now() < cached.expiresAt)) return Promise.resolve(cached);
      running ??= run().then(
        (c) => { cached = c; running = null; return c; },
        (e) => { running = null; throw e; },
      );
      return running;
    },
    /** Forget `c` (the server refused it). */
    invalidate(c) {
      if (cached === c) cached = null;
    },
  };
}

/** A transport that authenticates with the exec plugin's credential: a bearer token, or a client certificate (the connection pool follows it when it rotates). */
function execTransport(tls, creds) {
  const plain = nodeTransport({ tls });
  let withCert = null;
  return {
    async request(req) {
      const c = await creds.get();
      let transport = plain;
      if (c.cert) {
        if (withCert?.cred !== c) {
          try {
            withCert = { cred: c, transport: nodeTransport({ tls: { ...tls, cert: c.cert, key: c.key } }) };
          } catch (e) {
            throw credentials(`exec credential plugin returned a client certificate that cannot be used: ${e.message}`);
          }
        }
        transport = withCert.transport;
      }
      const authorized = Object.keys(req.headers).some((k) => k.toLowerCase() === 'authorization');
      const headers = c.token && !authorized ? { ...req.headers, Authorization: `Bearer ${c.token}` } : req.headers;
      const res = await transport.request({ ...req, headers });
      // client-go refreshes the credential after a 401.
      if (res.status === 401) creds.invalidate(c);
      return res;
    },
  };
}

/**
 * Read kubeconfig files as kubectl does and return the options of a `KubeClient` for one context.
 */
export async function loadKubeconfig(options = {}) {
  if (options === null || typeof options !== 'object') throw invalid('loadKubeconfig: options must be an object');
  for (const k of Object.keys(options)) {
    if (k !== 'paths' && k !== 'context' && options[k] !== undefined && options[k] !== null) {
      throw invalid(`unknown loadKubeconfig option \`${k.length > 64 ? `${k.slice(0, 64)}…` : k}\` (known: paths, context)`);
    }
  }
  // `null` and absent alike mean the default, as `??` reads them.
  const paths = options.paths ?? defaultPaths();
  const asked = options.context ?? undefined;
  if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string')) {
    throw invalid('loadKubeconfig: `paths` must be an array of file paths');
  }
  if (asked !== undefined && typeof asked !== 'string') throw invalid('loadKubeconfig: `context` must be a string');
  const lists = { clusters: ['cluster', new Map()], users: ['user', new Map()], contexts: ['context', new Map()] };
  let current;
  let read = 0;
  for (const p of paths) {
    const file = resolve(p);
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      // Files of the list that do not exist are skipped, as kubectl does.
      if (e.code === 'ENOENT') continue;
      throw invalid(`kubeconfig ${file}: ${e.message}`);
    }
    let doc;
    try {
      doc = parseKubeconfigYaml(text) ?? {};
    } catch (e) {
      throw invalid(`kubeconfig ${file}: ${e.message}`);
    }
    if (!isMap(doc)) throw invalid(`kubeconfig ${file}: not a mapping`);
    read++;
    const dir = dirname(file);
    // The first file to define a name wins, as in client-go's merge.
    for (const [listKey, [itemKey, map]] of Object.entries(lists)) {
      const list = doc[listKey];
      if (list == null) continue;
      if (!Array.isArray(list)) throw invalid(`kubeconfig ${file}: ${listKey} must be a list`);
      for (const entry of list) {
        const name = str(entry?.name);
        if (name === undefined) throw invalid(`kubeconfig ${file}: an entry of ${listKey} has no name`);
        const value = entry[itemKey] ?? {};
        if (!isMap(value)) throw invalid(`kubeconfig ${file}: ${listKey} ${name}: ${itemKey} must be a mapping`);
        if (!map.has(name)) map.set(name, { value, dir });
      }
    }
    current ??= str(doc['current-context']) || undefined;
  }
  if (read === 0) throw invalid(`kubeconfig: none of ${paths.join(', ') || '(no paths)'} exists`);

  const context = asked ?? current;
  if (!context) throw invalid('kubeconfig: no current-context; pass `context`');
  const ctx = lists.contexts[1].get(context);
  if (!ctx) throw invalid(`kubeconfig: no context ${JSON.stringify(context)}`);
  const clusterName = str(ctx.value.cluster);
  const cluster = lists.clusters[1].get(clusterName);
  if (!cluster) throw invalid(`kubeconfig: context ${context} names cluster ${JSON.stringify(clusterName)}, which is not defined`);
  const userName = str(ctx.value.user);
  const user = userName ? lists.users[1].get(userName) : { value: {}, dir: cluster.dir };
  if (!user) throw invalid(`kubeconfig: context ${context} names user ${JSON.stringify(userName)}, which is not defined`);
  const c = cluster.value;
  const u = user.value;

  let server = str(c.server);
  if (!server) throw invalid(`kubeconfig: cluster ${clusterName} has no server`);
  if (str(c['proxy-url'])) throw invalid(`kubeconfig: cluster ${clusterName}: proxy-url is not supported`);
  const insecure = bool(c['insecure-skip-tls-verify']);
  const ca = material(c, 'certificate-authority-data', 'certificate-authority', cluster.dir);
  if (insecure && ca) throw invalid(`kubeconfig: cluster ${clusterName}: a CA with insecure-skip-tls-verify is not allowed (kubectl refuses it too)`);
  const cert = material(u, 'client-certificate-data', 'client-certificate', user.dir);
  const key = material(u, 'client-key-data', 'client-key', user.dir);
  if (!cert !== !key) throw invalid(`kubeconfig: user ${userName}: a client certificate needs its key, and a key its certificate`);
  // `host:port` without a scheme: https when TLS is configured, as client-go's DefaultServerURL reads it.
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(server)) server = `${ca || cert || insecure ? 'https' : 'http'}://${server}`;
  const tls = {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert, key } : {}),
    ...(str(c['tls-server-name']) ? { serverName: str(c['tls-server-name']) } : {}),
    ...(insecure ? { insecureSkipTlsVerify: true } : {}),
  };

  if (u['auth-provider'] != null) throw invalid(`kubeconfig: user ${userName}: auth-provider plugins are not supported; use an exec credential plugin`);
  const headers = {};
  // client-go's DisableCompression: lists come uncompressed, which on a fast
  // link to the cluster is quicker than the server's gzip and our inflate.
  if (bool(c['disable-compression'])) headers['Accept-Encoding'] = 'identity';
  if (str(u.as)) headers['Impersonate-User'] = str(u.as);
  if (str(u['as-uid'])) headers['Impersonate-Uid'] = str(u['as-uid']);
  const groups = u['as-groups'] ?? [];
  if (!Array.isArray(groups) || groups.length > 1) throw invalid(`kubeconfig: user ${userName}: as-groups with more than one group is not supported`);
  if (groups.length === 1) headers['Impersonate-Group'] = String(groups[0]);
  const extra = u['as-user-extra'];
  if (extra != null && !(isMap(extra) && Object.keys(extra).length === 0)) throw invalid(`kubeconfig: user ${userName}: as-user-extra is not supported`);
  if ((str(u.token) || str(u.tokenFile)) && (str(u.username) || str(u.password))) {
    throw invalid(`kubeconfig: user ${userName}: more than one authentication method (a token and a username/password); kubectl allows one`);
  }

  // kubectl's namespace for a context that names none (client-go's ClientConfig.Namespace()).
  const out = { server, context, namespace: str(ctx.value.namespace) || 'default' };
  const token = str(u.token) || undefined;
  const tokenFile = str(u.tokenFile) ? resolve(user.dir, str(u.tokenFile)) : undefined;
  if (tokenFile) {
    // Re-read at most once a minute (rotated projected tokens); the last good value, else `token`, survives a failed read.
    let last;
    let readAt = -Infinity;
    out.tokenProvider = () => {
      if (Date.now() - readAt >= TOKEN_FILE_TTL_MS) {
        try {
          last = readFileSync(tokenFile, 'utf8').trim();
          readAt = Date.now();
        } catch (e) {
          if (last === undefined && token === undefined) throw invalid(`kubeconfig: tokenFile ${tokenFile}: ${e.message}`);
        }
      }
      return last ?? token;
    };
  } else if (token) {
    out.token = token;
  } else if (str(u.username) || str(u.password)) {
    headers.Authorization = `Basic ${Buffer.from(`${str(u.username) ?? ''}:${str(u.password) ?? ''}`).toString('base64')}`;
  } else if (isMap(u.exec)) {
    const clusterInfo = {
      server,
      ...(str(c['tls-server-name']) ? { 'tls-server-name': str(c['tls-server-name']) } : {}),
      ...(insecure ? { 'insecure-skip-tls-verify': true } : {}),
      ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}),
    };
    const ext = Array.isArray(c.extensions) ? c.extensions.find((e) => e?.name === 'client.authentication.k8s.io/exec') : undefined;
    if (ext?.extension !== undefined) clusterInfo.config = ext.extension;
    const creds = execCredentials(u.exec, user.dir, clusterInfo);
    try {
      out.transport = execTransport(tls, creds);
    } catch (e) {
      throw invalid(`kubeconfig: TLS material of context ${context}: ${e.message}`);
    }
  }
  if (Object.keys(headers).length > 0) out.headers = headers;
  if (!out.transport && Object.keys(tls).length > 0) out.tls = tls;
  return out;
}
