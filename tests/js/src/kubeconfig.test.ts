// loadKubeconfig from the Node entry, against the sim behind TLS proxies with
// certificates made at test time, and a fake exec credential plugin.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient, KubeError, loadKubeconfig, type KubeconfigOptions } from 'kubewasm';
import { makePki, tlsProxy } from './support/tls.js';

const sim = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!sim || !token) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

const pki = makePki();
const proxy = await tlsProxy(sim, pki.server);
const mtls = await tlsProxy(sim, pki.server, pki.ca.cert);
const env = { KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME };
after(async () => {
  await Promise.all([proxy.close(), mtls.close()]);
  pki.cleanup();
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
});

const dir = (name: string) => {
  const d = join(pki.dir, name);
  mkdirSync(d, { recursive: true });
  return d;
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const listPods = async (opts: object) => (await new KubeClient(opts as never).resource({ version: 'v1', resource: 'pods' }).list({ limit: 3 })).items;

async function rejectsInvalid(p: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof KubeError, `a KubeError, not ${e}`);
    assert.equal(e.reason, 'Invalid', e.message);
    assert.match(e.message, message);
    return true;
  });
}

// The fake plugin: counts its runs, records what it was given, prints an ExecCredential.
//   node plugin.mjs STATE_FILE MODE TTL_SECONDS   (MODE: token | bad-first | cert | fail)
const plugin = join(dir('bin'), 'plugin.mjs');
writeFileSync(plugin, `
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
const [state, mode, ttl] = process.argv.slice(2);
const runs = (existsSync(state) ? JSON.parse(readFileSync(state, 'utf8')).runs : 0) + 1;
writeFileSync(state, JSON.stringify({ runs, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO), greeting: process.env.GREETING }));
if (mode === 'fail') { console.error('no credentials for you'); process.exit(3); }
const status = {};
if (mode === 'cert') {
  status.clientCertificateData = readFileSync(process.env.CERT_FILE, 'utf8');
  status.clientKeyData = readFileSync(process.env.KEY_FILE, 'utf8');
} else {
  status.token = mode === 'bad-first' && runs === 1 ? 'not-the-token' : process.env.SIM_TOKEN;
}
if (Number(ttl) > 0) status.expirationTimestamp = new Date(Date.now() + Number(ttl) * 1000).toISOString();
console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`);
const runs = (state: string) => (existsSync(state) ? (JSON.parse(readFileSync(state, 'utf8')) as { runs: number }).runs : 0);

// A kubeconfig as kubectl writes it (sequences not indented under their key), with one exec user.
function execConfig(name: string, mode: string, ttl: number, server: string, extraEnv = ''): { path: string; state: string } {
  const d = dir(name);
  const state = join(d, 'state.json');
  const path = join(d, 'config');
  writeFileSync(path, `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority-data: ${b64(pki.ca.cert)}
    server: ${server}
    extensions:
    - name: client.authentication.k8s.io/exec
      extension:
        audience: sim
  name: sim
contexts:
- context:
    cluster: sim
    user: plugin
  name: sim
current-context: sim
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${JSON.stringify(process.execPath)}
      args:
      - ../bin/plugin.mjs
      - ${JSON.stringify(state)}
      - ${mode}
      - "${ttl}"
      env:
      - name: SIM_TOKEN
        value: ${token}
      - name: GREETING
        value: "hello \\u00e9"${extraEnv}
      interactiveMode: Never
      provideClusterInfo: true
`.replace('- ../bin/plugin.mjs', `- ${JSON.stringify(plugin)}`));
  return { path, state };
}

test('KUBECONFIG files merge (first definition wins), current-context, namespace, relative CA path and a token file', async () => {
  const a = dir('merge-a');
  const b = dir('merge-b');
  writeFileSync(join(a, 'ca.crt'), pki.ca.cert);
  writeFileSync(join(b, 'token'), `${token}\n`);
  // a: the cluster (CA file relative to a), current-context. b: a shadowed cluster of the same name, the context and the user (token file relative to b).
  writeFileSync(join(a, 'config'), `# first file
apiVersion: v1
clusters:
  - name: sim
    cluster:
      server: "${proxy.url}"
      certificate-authority: ca.crt
current-context: work
`);
  writeFileSync(join(b, 'config'), `apiVersion: v1
clusters:
- {name: sim, cluster: {server: 'https://shadowed.invalid:1'}}
contexts:
- name: work
  context: {cluster: sim, user: reader, namespace: team-a}
- name: other
  context: {cluster: sim, user: reader}
current-context: other
users:
- name: reader
  user:
    tokenFile: token   # re-read when rotated
`);
  process.env.KUBECONFIG = [join(a, 'config'), join(pki.dir, 'missing', 'config'), join(b, 'config')].join(':');
  const opts = await loadKubeconfig();
  assert.equal(opts.server, proxy.url);
  assert.equal(opts.context, 'work');
  assert.equal(opts.namespace, 'team-a');
  assert.equal(typeof opts.tokenProvider, 'function');
  assert.equal(await opts.tokenProvider!(), token);
  assert.equal(Buffer.from(opts.tls!.ca as Uint8Array).toString(), pki.ca.cert);
  assert.ok((await listPods(opts)).length > 0, 'the sim accepted the token over TLS');
  // A named context instead of current-context.
  const other = await loadKubeconfig({ context: 'other' });
  assert.equal(other.context, 'other');
  assert.equal(other.namespace, 'default', "kubectl's namespace when the context names none");
});

test('a named context with client certificate and key files (relative paths) and CA data, against a server requiring them', async () => {
  const d = dir('mtls');
  writeFileSync(join(d, 'alice.crt'), pki.client.cert);
  writeFileSync(join(d, 'alice.key'), pki.client.key);
  writeFileSync(join(d, 'config'), `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64(pki.ca.cert)}
    server: ${mtls.url}
  name: mtls
contexts:
- context:
    cluster: mtls
    user: alice
  name: mtls
current-context: ""
users:
- name: alice
  user:
    client-certificate: alice.crt
    client-key: ./alice.key
    token: ${token}
`);
  const options: KubeconfigOptions = { paths: [join(d, 'config')], context: 'mtls' };
  const opts = await loadKubeconfig(options);
  assert.equal(opts.token, token);
  assert.ok((await listPods(opts)).length > 0);
  assert.equal(mtls.handshakes.at(-1)?.clientCn, 'alice');
  await rejectsInvalid(loadKubeconfig({ paths: [join(d, 'config')] }), /no current-context/);
});

test('~/.kube/config by default; insecure-skip-tls-verify; a CA beside it is refused', async () => {
  const home = dir('home');
  mkdirSync(join(home, '.kube'), { recursive: true });
  const config = (extra: string) => `apiVersion: v1
clusters:
- cluster:
    server: ${proxy.url}
    insecure-skip-tls-verify: true${extra}
  name: c
contexts:
- context: {cluster: c, user: u}
  name: c
current-context: c
users:
- name: u
  user:
    token: '${token}'
`;
  writeFileSync(join(home, '.kube', 'config'), config(''));
  delete process.env.KUBECONFIG;
  process.env.HOME = home;
  const opts = await loadKubeconfig();
  assert.deepEqual(opts.tls, { insecureSkipTlsVerify: true });
  assert.ok((await listPods(opts)).length > 0);
  writeFileSync(join(home, '.kube', 'config'), config(`\n    certificate-authority-data: ${b64(pki.ca.cert)}`));
  await rejectsInvalid(loadKubeconfig(), /insecure-skip-tls-verify/);
});

test('a kubeconfig written as JSON', async () => {
  const d = dir('json');
  writeFileSync(join(d, 'config.json'), JSON.stringify({
    apiVersion: 'v1',
    clusters: [{ name: 'c', cluster: { server: proxy.url, 'certificate-authority-data': b64(pki.ca.cert) } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', namespace: 'ns1' } }],
    'current-context': 'c',
    users: [{ name: 'u', user: { token } }],
  }, null, 2));
  const opts = await loadKubeconfig({ paths: [join(d, 'config.json')] });
  assert.equal(opts.namespace, 'ns1');
  assert.equal(opts.headers, undefined);
  assert.ok((await listPods(opts)).length > 0);
  // client-go's disable-compression: the server is asked for no encoding.
  writeFileSync(join(d, 'plain.json'), JSON.stringify({
    apiVersion: 'v1',
    clusters: [{ name: 'c', cluster: { server: proxy.url, 'certificate-authority-data': b64(pki.ca.cert), 'disable-compression': true } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
    users: [{ name: 'u', user: { token } }],
  }));
  const plain = await loadKubeconfig({ paths: [join(d, 'plain.json')] });
  assert.deepEqual(plain.headers, { 'Accept-Encoding': 'identity' });
  assert.ok((await listPods(plain)).length > 0);
});

test('exec plugin: token cached until its expiry, then refreshed; the plugin gets args, env and cluster info', async () => {
  const { path, state } = execConfig('exec-token', 'token', 2, proxy.url);
  const opts = await loadKubeconfig({ paths: [path] });
  assert.equal(opts.tls, undefined, 'the exec transport carries the TLS settings');
  assert.equal(runs(state), 0, 'the plugin runs on the first request, not at load');
  const client = new KubeClient(opts);
  const podsApi = client.resource({ version: 'v1', resource: 'pods' });
  await podsApi.list({ limit: 1 });
  await podsApi.list({ limit: 1 });
  assert.equal(runs(state), 1, 'cached while valid');
  const seen = JSON.parse(readFileSync(state, 'utf8')) as { info: { apiVersion: string; kind: string; spec: { interactive: boolean; cluster: Record<string, unknown> } }; greeting: string };
  assert.equal(seen.info.apiVersion, 'client.authentication.k8s.io/v1');
  assert.equal(seen.info.kind, 'ExecCredential');
  assert.equal(seen.info.spec.interactive, false);
  assert.equal(seen.info.spec.cluster.server, proxy.url);
  assert.equal(seen.info.spec.cluster['certificate-authority-data'], b64(pki.ca.cert));
  assert.deepEqual(seen.info.spec.cluster.config, { audience: 'sim' });
  assert.equal(seen.greeting, 'hello é');
  const end = Date.now() + 10_000;
  while (runs(state) < 2 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    await podsApi.list({ limit: 1 });
  }
  assert.equal(runs(state), 2, 'run again once the credential expired');
});

test('exec plugin: a 401 drops the cached credential, so the next request runs the plugin again', async () => {
  const { path, state } = execConfig('exec-401', 'bad-first', 3600, proxy.url);
  const podsApi = new KubeClient(await loadKubeconfig({ paths: [path] })).resource({ version: 'v1', resource: 'pods' });
  await assert.rejects(podsApi.list({ limit: 1 }), (e: unknown) => e instanceof KubeError && e.code === 401);
  assert.ok((await podsApi.list({ limit: 1 })).items.length > 0);
  assert.equal(runs(state), 2);
});

test('exec plugin: a client certificate from the plugin, against a server requiring one', async () => {
  const d = dir('exec-cert-files');
  writeFileSync(join(d, 'alice.crt'), pki.client.cert);
  writeFileSync(join(d, 'alice.key'), pki.client.key);
  const { path, state } = execConfig('exec-cert', 'cert', 3600, mtls.url, `
      - name: CERT_FILE
        value: ${join(d, 'alice.crt')}
      - name: KEY_FILE
        value: ${join(d, 'alice.key')}`);
  const before = mtls.handshakes.length;
  const opts = await loadKubeconfig({ paths: [path] });
  // The sim still wants its token: certificate for TLS, token as a header.
  assert.ok((await listPods({ ...opts, token })).length > 0);
  assert.equal(runs(state), 1);
  assert.equal(mtls.handshakes.at(-1)?.clientCn, 'alice');
  assert.ok(mtls.handshakes.length > before);
});

test('kubeconfigs as gcloud and az write them: plain scalars folded over lines, block scalars with indicators', async () => {
  const d = dir('cloud-writers');
  const path = join(d, 'config');
  writeFileSync(path, `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64(pki.ca.cert)}
    server: ${proxy.url}
  name: sim
contexts:
- context:
    cluster: sim
    user: literal
  name: sim
current-context: sim
kind: Config
users:
- name: gke
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
- name: aks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - get-token
      command: kubelogin
      env: null
      installHint: |2

        kubelogin is not installed which is required to connect to AAD enabled cluster.

        # not a comment: text of the hint
      provideClusterInfo: false
- name: literal
  user:
    token: |-
      ${token}
`);
  const opts = await loadKubeconfig({ paths: [path] });
  assert.equal((opts as { token?: string }).token, token, 'a |- block keeps the token exact');
  assert.equal((await listPods(opts)).length, 3);
});

test('errors: a failing plugin is Credentials (not retried by the request); unknown context, no file, unsupported settings and YAML are Invalid', async () => {
  const { path, state } = execConfig('exec-fail', 'fail', 0, proxy.url);
  const t0 = Date.now();
  await assert.rejects(new KubeClient(await loadKubeconfig({ paths: [path] })).resource({ version: 'v1', resource: 'pods' }).list({}), (e: unknown) => {
    assert.ok(e instanceof KubeError && e.reason === 'Credentials', String(e));
    assert.match(e.message, /^getting credentials: exec credential plugin /);
    // The exit status, then the plugin's stderr once.
    assert.match(e.message, /exited with code 3: no credentials for you/);
    assert.equal(e.message.split('no credentials for you').length, 2, e.message);
    return true;
  });
  assert.equal(runs(state), 1, 'not retried');
  // Arguments of the wrong shape: named, not a TypeError or a path read letter by letter.
  await rejectsInvalid(loadKubeconfig(null as never), /options must be an object/);
  await rejectsInvalid(loadKubeconfig({ paths: path as never }), /`paths` must be an array/);
  await rejectsInvalid(loadKubeconfig({ paths: [path], context: 5 as never }), /`context` must be a string/);
  // `null` is the default, as absent is.
  assert.equal((await loadKubeconfig({ paths: [path], context: null as never })).server, proxy.url);
  assert.ok(Date.now() - t0 < 5_000);
  await rejectsInvalid(loadKubeconfig({ paths: [path], context: 'nope' }), /no context "nope"/);
  await rejectsInvalid(loadKubeconfig({ paths: [join(pki.dir, 'nowhere')] }), /none of .* exists/);
  const d = dir('unsupported');
  const write = (name: string, text: string) => (writeFileSync(join(d, name), text), [join(d, name)]);
  const base = 'clusters:\n- name: c\n  cluster: {server: "https://x"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n';
  await rejectsInvalid(loadKubeconfig({ paths: write('auth-provider', `${base}users:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n`) }), /auth-provider/);
  await rejectsInvalid(loadKubeconfig({ paths: write('anchor', `${base}users:\n- name: u\n  user: &u\n    token: x\n`) }), /line 10: unsupported YAML/);
  await rejectsInvalid(loadKubeconfig({ paths: write('tag', `${base}users:\n- name: u\n  user:\n    token: !!str x\n`) }), /line 11: unsupported YAML/);
  await rejectsInvalid(loadKubeconfig({ paths: write('nouser', base) }), /user "u", which is not defined/);
  await rejectsInvalid(loadKubeconfig({ paths: write('two-methods', `${base}users:\n- name: u\n  user:\n    token: t\n    username: a\n    password: b\n`) }), /more than one authentication method/);
  // What kubectl accepts: an empty as-user-extra; a server without a scheme (https with TLS, else http).
  const noScheme = `clusters:\n- name: c\n  cluster: {server: "127.0.0.1:6443", insecure-skip-tls-verify: true}\n- name: plain\n  cluster: {server: "localhost:8001"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n- name: p\n  context: {cluster: plain, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t, as-user-extra: {}}\n`;
  assert.equal((await loadKubeconfig({ paths: write('no-scheme', noScheme) })).server, 'https://127.0.0.1:6443');
  assert.equal((await loadKubeconfig({ paths: write('no-scheme', noScheme), context: 'p' })).server, 'http://localhost:8001');
});

test('the kubeconfig YAML reader: block and folded scalars as the YAML spec reads them, and what it refuses', async () => {
  // Not an export of the package: the file it loads, by path.
  const file = new URL('../node_modules/kubewasm/kubeconfig-yaml.js', import.meta.url).href;
  const { parseKubeconfigYaml: parse } = (await import(file)) as { parseKubeconfigYaml: (text: string) => unknown };
  const cases: [string, unknown][] = [
    ['a: |\n  x\n', { a: 'x\n' }],
    ['a: |-\n  x\n', { a: 'x' }],
    ['a: |+\n  x\n', { a: 'x\n' }],
    ['a: |+\n  x\n\n', { a: 'x\n\n' }],
    ['a: |\n  x\n   \n  y\n', { a: 'x\n \ny\n' }],
    ['a: |\n  x\n  # text, not a comment\n', { a: 'x\n# text, not a comment\n' }],
    ['a: |2\n\n    indented\n', { a: '\n  indented\n' }],
    ['- key: |2\n      x\n', [{ key: '  x\n' }]],
    ['k:\n- |\n  x\n  y\n', { k: ['x\ny\n'] }],
    ['key:\t|\n  x\n', { key: 'x\n' }],
    ['b: >-\n  one\n  two\n\n  three\n   more\n  back\n', { b: 'one two\nthree\n more\nback' }],
    ['a: |\nb: 1\n', { a: '', b: '1' }],
    ['a: one\n  two\n\n  three\n', { a: 'one two\nthree' }],
    ['a: null\n  x\n', { a: 'null x' }],
    ['a: "q: |"\nb: [x, "|"]\n', { a: 'q: |', b: ['x', '|'] }],
  ];
  for (const [text, want] of cases) assert.deepEqual(parse(text), want, JSON.stringify(text));
  // A key named __proto__ in a flow mapping is a key, not the object's prototype.
  const user = (parse('user: {__proto__: {token: x}}\n') as { user: Record<string, unknown> }).user;
  assert.deepEqual(Object.keys(user), ['__proto__']);
  assert.equal(user.token, undefined);
  assert.equal(Object.getPrototypeOf(user), Object.prototype);
  for (const [text, why] of [
    ['user: u\n      namespace: ns\n', /line 2: unexpected indentation/],
    ['a: one\n  # a comment ends it\n  two\n', /line 3: unexpected indentation/],
    ['a: b: |\n  x\n', /line 1: a plain value cannot hold/],
    ['a: |x\n  y\n', /line 1: bad block scalar header/],
    ['token: "\\U00110000"\n', /line 1: bad escape .*beyond U\+10FFFF/],
    [`a: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`, /line 1: nesting deeper than 1000 levels/],
    [`${'- '.repeat(50_000)}x\n`, /line 1: nesting deeper than 1000 levels/],
    [Array.from({ length: 2_000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n'), /line 1001: nesting deeper than 1000 levels/],
    ['user: {token: a, token: b}\n', /line 1: duplicate key "token"/],
    ['user:\n  token: a\n  token: b\n', /line 3: duplicate key "token"/],
  ] as const) {
    assert.throws(() => parse(text), (e: unknown) => e instanceof SyntaxError && why.test(e.message), JSON.stringify(text));
  }
});
