// Per-object display values. Objects from the cache keep their identity until
// they change, so each value is computed once per object version (WeakMap).
import type { KubeObject } from './kube';

interface Condition { type?: string; status?: string; lastTransitionTime?: string }
interface Described { status: string; tone: Tone; labels: string; created: number; search: string }
export type Tone = 'ok' | 'warn' | 'bad' | 'none';

const cache = new WeakMap<KubeObject, Described>();

const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const conditions = (o: KubeObject): Condition[] => {
  const c = rec(o.status).conditions;
  return Array.isArray(c) ? (c as Condition[]) : [];
};

export const readyCondition = (o: KubeObject): Condition | undefined => conditions(o).find((c) => c.type === 'Ready');
export const isPodReady = (o: KubeObject): boolean => readyCondition(o)?.status === 'True';

function restarts(o: KubeObject): number {
  const cs = rec(o.status).containerStatuses;
  if (!Array.isArray(cs)) return 0;
  return cs.reduce((n: number, c) => n + (Number(rec(c).restartCount) || 0), 0);
}

function statusOf(o: KubeObject): [string, Tone] {
  const s = rec(o.status);
  if (o.metadata.deletionTimestamp) return ['Terminating', 'warn'];
  if (o.kind === 'Pod' || (typeof s.phase === 'string' && 'containerStatuses' in s)) {
    const phase = typeof s.phase === 'string' ? s.phase : 'Unknown';
    const r = restarts(o);
    const suffix = r > 0 ? ` · ${r} restart${r === 1 ? '' : 's'}` : '';
    if (phase === 'Running') return isPodReady(o) ? [`Running${suffix}`, 'ok'] : [`Running, not ready${suffix}`, 'warn'];
    return [phase + suffix, phase === 'Failed' ? 'bad' : phase === 'Succeeded' ? 'none' : 'warn'];
  }
  if (typeof s.phase === 'string') return [s.phase, s.phase === 'Active' || s.phase === 'Bound' ? 'ok' : 'warn'];
  if (typeof s.replicas === 'number' || typeof s.readyReplicas === 'number') {
    const ready = Number(s.readyReplicas ?? 0);
    const want = Number(rec(o.spec).replicas ?? s.replicas ?? 0);
    return [`${ready}/${want} ready`, ready >= want ? 'ok' : 'warn'];
  }
  if (typeof s.state === 'string') return [s.state, s.state === 'Ready' ? 'ok' : 'warn'];
  const ready = readyCondition(o);
  if (ready) return ready.status === 'True' ? ['Ready', 'ok'] : ['NotReady', 'bad'];
  if (o.kind === 'Event') {
    const t = String((o as Record<string, unknown>).type ?? '');
    return [`${t} ${String((o as Record<string, unknown>).reason ?? '')}`.trim(), t === 'Warning' ? 'warn' : 'none'];
  }
  return ['', 'none'];
}

/** Display values of an object, computed once per object version. */
export function describe(o: KubeObject): Described {
  let d = cache.get(o);
  if (!d) {
    const [status, tone] = statusOf(o);
    const labels = Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
    d = {
      status, tone, labels,
      created: Date.parse(o.metadata.creationTimestamp ?? '') || 0,
      search: `${o.metadata.namespace ?? ''}/${o.metadata.name}`.toLowerCase(),
    };
    cache.set(o, d);
  }
  return d;
}

/** kubectl-style age: 42s, 7m, 5h, 12d. */
export function age(created: number, now: number): string {
  if (!created) return '';
  const s = Math.max(0, (now - created) / 1000);
  if (s < 120) return `${Math.floor(s)}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** "3 s ago" for a past epoch-ms time. */
export const ago = (t: number | undefined, now: number): string =>
  t === undefined ? 'never' : `${Math.max(0, Math.round((now - t) / 1000))} s ago`;
