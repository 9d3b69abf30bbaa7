// The unfiltered list of a resource, kept in (namespace, name) order by
// applying each coalesced diff: O(changed keys · log n) per frame instead of
// rebuilding an n-element snapshot whenever anything changed (which costs tens
// of ms at 10,000+ objects). Objects come from the lister, so they are the
// same cached, frozen objects a snapshot would hold.
import type { Cache, Diff, KubeObject } from './kube';

const split = (key: string): [string, string] => {
  const i = key.indexOf('/');
  return i < 0 ? ['', key] : [key.slice(0, i), key.slice(i + 1)];
};
const cmp = (a: [string, string], b: [string, string]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;

export class LiveRows {
  /** Objects in (namespace, name) order; mutated in place, see `version`. */
  readonly items: KubeObject[];
  private readonly keys: [string, string][];
  /** Bumped on every change, so readers can tell the in-place array changed. */
  version = 0;

  constructor(private readonly cache: Cache) {
    // The informer's snapshot is already in (namespace, name) order.
    this.items = [...cache.getSnapshot()];
    this.keys = this.items.map((o) => [o.metadata.namespace ?? '', o.metadata.name]);
  }

  /** Index of `k`, or `-(insertion point) - 1` when absent. */
  private find(k: [string, string]): number {
    let lo = 0;
    let hi = this.keys.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = cmp(this.keys[mid] ?? ['', ''], k);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -lo - 1;
  }

  /** Apply a diff (idempotent: an add of a present key replaces it, a removal of an absent one is ignored). */
  apply(diff: Diff): void {
    for (const key of diff.removed) {
      const i = this.find(split(key));
      if (i >= 0) {
        this.items.splice(i, 1);
        this.keys.splice(i, 1);
      }
    }
    for (const key of [...diff.added, ...diff.updated]) {
      const obj = this.cache.get(key);
      const k = split(key);
      const i = this.find(k);
      if (!obj) {
        if (i >= 0) {
          this.items.splice(i, 1);
          this.keys.splice(i, 1);
        }
      } else if (i >= 0) {
        this.items[i] = obj;
      } else {
        this.items.splice(-i - 1, 0, obj);
        this.keys.splice(-i - 1, 0, k);
      }
    }
    this.version++;
  }
}
