// A Web Worker that owns the cache: the informer, its decoding and indexing
// never touch the page's main thread; the page receives one message per frame.
import init, { KubeClient, InformerFactory } from './pkg/web/index.js';

try {
  await init();
  const pods = new InformerFactory(new KubeClient({ server: self.location.origin })).informer({ version: 'v1', resource: 'pods' });
  pods.subscribe((diff) => {
    const lister = pods.lister();
    const changed = [...diff.added, ...diff.updated].map((key) => {
      const [ns, name] = key.split('/');
      return lister.get(ns, name);
    }).filter(Boolean);
    postMessage({ diff, changed, status: pods.status });
  });
  pods.start();
} catch (e) {
  postMessage({ error: String(e) });
}
