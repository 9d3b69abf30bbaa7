// A small client-side controller on the package's WorkQueue: it watches pods
// through the shared pods informer and lists those not Ready for more than
// 30 s. Handlers only enqueue keys (the queue de-duplicates bursts); the
// reconcile reads the lister, so it always sees the latest state. A flagged
// pod is re-checked with the queue's per-item exponential backoff, which is
// where the retry count and the next check time come from.
import { isPodReady, readyCondition } from './describe';
import { keyOf, WorkQueue, type Cache, type KubeObject } from './kube';

export const NOT_READY_AFTER_MS = 30_000;
const BASE_DELAY_MS = 2_000;
const MAX_DELAY_MS = 60_000;

export interface Flagged {
  key: string;
  notReadySince: number;
  retries: number;
  nextCheckAt: number;
}

export class NotReadyController {
  readonly queue = new WorkQueue({ name: 'pods-not-ready', baseDelayMs: BASE_DELAY_MS, maxDelayMs: MAX_DELAY_MS, qps: 1000, burst: 1000, timings: false });
  /** Pods seen turning not-Ready while we watched: key → when. */
  private readonly observed = new Map<string, number>();
  readonly flagged = new Map<string, Flagged>();
  /** Pods not Ready yet, but not for 30 s: key → when they will be checked. */
  readonly pending = new Map<string, number>();
  checks = 0;

  constructor(private readonly pods: Cache) {
    const enqueue = (p: KubeObject): void => this.queue.add(keyOf(p));
    pods.onAdd(enqueue);
    pods.onUpdate((old, p) => {
      if (isPodReady(old) && !isPodReady(p)) this.observed.set(keyOf(p), Date.now());
      enqueue(p);
    });
    pods.onDelete(enqueue);
    this.queue.runWorkers(2, (key) => this.reconcile(key), {
      onError: (key, err) => console.warn(`not-ready controller: ${key}`, err),
    });
  }

  private forgetAll(key: string): void {
    this.flagged.delete(key);
    this.pending.delete(key);
    this.observed.delete(key);
    this.queue.forget(key);
  }

  private reconcile(key: string): { requeue: true } | { requeueAfterMs: number } | undefined {
    this.checks++;
    const pod = this.pods.get(key);
    if (!pod || isPodReady(pod)) {
      this.forgetAll(key);
      return undefined;
    }
    const now = Date.now();
    // The later of the condition's transition time and a transition we saw
    // ourselves (a server may not bump lastTransitionTime).
    const since = Math.max(Date.parse(readyCondition(pod)?.lastTransitionTime ?? '') || 0, this.observed.get(key) ?? 0) || now;
    const elapsed = now - since;
    if (elapsed < NOT_READY_AFTER_MS) {
      this.flagged.delete(key);
      const wait = NOT_READY_AFTER_MS - elapsed + 50;
      this.pending.set(key, now + wait);
      return { requeueAfterMs: wait };
    }
    this.pending.delete(key);
    // `requeue` goes through the rate limiter: 2 s, 4 s, 8 s … 60 s per pod.
    const retries = this.queue.numRequeues(key);
    const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retries);
    this.flagged.set(key, { key, notReadySince: since, retries, nextCheckAt: now + delay });
    return { requeue: true };
  }

  /** Flagged pods, longest not-Ready first. */
  worst(n: number): Flagged[] {
    return [...this.flagged.values()].sort((a, b) => a.notReadySince - b.notReadySince || (a.key < b.key ? -1 : 1)).slice(0, n);
  }
}
