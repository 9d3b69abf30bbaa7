// A Web Worker that owns the cache: the informer, its decoding and indexing
// never touch the page's main thread; the page receives one message per diff
// (diffs are coalesced per macrotask in a worker).
import { connect, keyOf, type Diff, type InformerStatus, type KubeObject } from './kube';

export type Message = { diff: Diff; changed: [string, KubeObject][]; status: InformerStatus } | { error: string };

const post = (m: Message): void => (self as unknown as { postMessage(m: Message): void }).postMessage(m);

try {
  const conn = await connect({ server: self.location.origin });
  const pods = conn.cache({ group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, verbs: ['list', 'watch'] });
  pods.subscribe((diff) => {
    const changed: [string, KubeObject][] = [];
    for (const key of [...diff.added, ...diff.updated]) {
      const p = pods.get(key);
      if (p) changed.push([keyOf(p), p]);
    }
    post({ diff, changed, status: pods.status() });
  });
} catch (e) {
  post({ error: String(e) });
}
