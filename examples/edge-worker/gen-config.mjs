// Writes config.capnp for workerd: every module of the built package is listed
// (workerd resolves imports only among declared modules), the API server URL
// and options come from the environment.
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const port = process.argv[2] || '8787';
const files = [];
const walk = (dir) => {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.js') || p.endsWith('.wasm')) files.push(relative(here, p));
  }
};
walk(join(here, 'pkg', 'web'));
const modules = [
  '(name = "worker.js", esModule = embed "worker.js")',
  ...files.map((f) => (f.endsWith('.wasm') ? `(name = "${f}", wasm = embed "${f}")` : `(name = "${f}", esModule = embed "${f}")`)),
];
writeFileSync(join(here, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .cacheWorker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const cacheWorker :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')}
  ],
  compatibilityDate = "2024-09-23",
  bindings = [
    (name = "API_SERVER", fromEnvironment = "API_SERVER"),
    (name = "API_TOKEN", fromEnvironment = "API_TOKEN"),
    (name = "EDGE_SECRET", fromEnvironment = "EDGE_SECRET"),
    (name = "MAX_IN_FLIGHT", fromEnvironment = "MAX_IN_FLIGHT"),
    (name = "EXTRA_INFORMERS", fromEnvironment = "EXTRA_INFORMERS"),
    (name = "CACHE", durableObjectNamespace = "ClusterCache"),
  ],
  durableObjectNamespaces = [ (className = "ClusterCache", uniqueKey = "kubewasm-cluster-cache") ],
  durableObjectStorage = (inMemory = void),
  globalOutbound = "internet",
);
`);
console.log(`wrote config.capnp (${files.length} package files, port ${port})`);
