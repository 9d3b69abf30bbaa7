// The kubewasm demo dashboard: a live view of any resource the server offers,
// driven only by the kubewasm package. Informers deliver coalesced diffs (at
// most one per frame); this file turns them into dirty flags and does all
// DOM work in one requestAnimationFrame callback, so a burst of watch events
// costs one render, not one per event.
import './style.css';
import { NotReadyController } from './controller';
import { ago, age } from './describe';
import { connect, keyOf, resourceLabel, SelectorError, type Cache, type InformerStatus, type KubeObject, type LiveView, type ResourceInfo, type SharedHost } from './kube';
import { LiveRows } from './rows';
import { forgetToken, loadToken, safeDecode, saveToken, withoutUrlToken } from './settings';
import { Sparkline } from './sparkline';
import { deriveRows, ResourceTable, type SortKey } from './table';
import { toYaml } from './yaml';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
};

// ---- configuration: same origin unless ?server= says otherwise ----
const params = new URLSearchParams(location.search);
const server = params.get('server') ?? '';
// A token in the address is never used: take it out of the address (this
// history entry) and say why, so the user moves it to the token field.
const cleaned = withoutUrlToken(location.href);
if (cleaned !== null) {
  history.replaceState(history.state, '', cleaned);
  showNotice('The token in the address (?token=) was not used and has been removed from it: addresses are kept in '
    + 'history, bookmarks and server logs. Enter it in the token field instead (kept for this tab only), and '
    + 'remove the old address from bookmarks and history.');
}
// Only a token saved for this very server; one saved for another is dropped.
const token = loadToken(server);
const serverInput = $<HTMLInputElement>('server');
const tokenInput = $<HTMLInputElement>('token');
serverInput.value = server;
tokenInput.value = token ?? '';
// Editing the server clears the token field, so a token typed for one server
// is not submitted with another.
serverInput.addEventListener('input', () => {
  if (serverInput.value.trim() !== server) tokenInput.value = '';
});
$('server-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const next = new URL(location.href);
  const v = serverInput.value.trim();
  if (v) next.searchParams.set('server', v);
  else next.searchParams.delete('server');
  next.searchParams.delete('token');
  const typed = tokenInput.value.trim();
  if (v !== server) {
    forgetToken();
    // Belt and braces beside the input listener: never carry the old token over.
    saveToken(v, typed === token ? '' : typed);
  } else {
    saveToken(v, typed);
  }
  // Same address (a new token only): assigning it would be a same-document
  // fragment navigation, which connects nothing.
  if (next.href === location.href) location.reload();
  else location.assign(next);
});

function showNotice(text: string): void {
  const el = $('notice');
  $('notice-text').textContent = text;
  el.hidden = false;
}
$('notice-close').addEventListener('click', () => { $('notice').hidden = true; });

const nf = new Intl.NumberFormat('en');
const mib = (b: number): string => `${(b / 1048576).toFixed(0)} MiB`;

/** The words the connection status shows for an informer's state. */
export function phaseText(s: InformerStatus, now: number): string {
  switch (s.phase) {
    case 'backoff':
      return s.nextRetryAt !== undefined ? `reconnecting in ${Math.max(0, Math.ceil((s.nextRetryAt - now) / 1000))} s` : 'reconnecting';
    case 'listing': {
      const what = s.relists > 0 ? 'relisting' : s.synced ? 'listing' : 'initial list';
      // A list that waits (on a server that is down, or a shared worker that
      // backs off) says why, from the error it met last.
      const err = s.lastError;
      return err !== undefined && now - err.at < 60_000 ? `${what} · ${err.reason || 'error'} ${ago(err.at, now)}` : what;
    }
    case 'stored':
      // Rows from the copy in IndexedDB: not live yet.
      return `stored copy from ${ago(s.storedAt, now)}`;
    default:
      return s.phase;
  }
}

// ---- state ----
interface Filters { namespace: string; selector: string; text: string; sortKey: SortKey; dir: 1 | -1 }
const filters: Filters = { namespace: '', selector: '', text: '', sortKey: 'namespace', dir: 1 };
let current: Cache | null = null;
let view: LiveView<KubeObject> | null = null;
let unsubscribe: (() => void)[] = [];
let selected: string | null = null;
type Format = 'yaml' | 'json';
let format: Format = 'yaml';
const opened: Cache[] = [];

// ---- the frame loop: dirty flags in, one render out ----
const dirty = { rows: true, table: true, detail: true, events: true, panels: true };
let frameQueued = false;
let nextDeriveAt = 0;
let lastSnapshot: readonly KubeObject[] | null = null;
let lastFilterKey = '';
/** The unfiltered rows, maintained from diffs (null while a namespace or selector filter is on). */
let live: LiveRows | null = null;

function invalidate(what: keyof typeof dirty): void {
  dirty[what] = true;
  if (!frameQueued) {
    frameQueued = true;
    requestAnimationFrame(frame);
  }
}

const table = new ResourceTable($('table-wrap'), $<HTMLTableElement>('table'), () => invalidate('table'));

/** Frames that took over 30 ms, with where the time went (for the benchmark and debugging). */
const slowFrames: Record<string, number>[] = [];

function frame(): void {
  frameQueued = false;
  const now = Date.now();
  const t0 = performance.now();
  const marks: Record<string, number> = {};
  const mark = (name: string): void => { marks[name] = performance.now() - t0; };
  if (dirty.rows) {
    const t = performance.now();
    if (t >= nextDeriveAt) {
      dirty.rows = false;
      derive();
      // Adaptive pacing: when deriving is expensive (tens of thousands of rows
      // re-sorted), re-derive less often so frames stay short; small lists
      // update every frame.
      const cost = performance.now() - t;
      nextDeriveAt = performance.now() + Math.min(1000, Math.max(0, cost * 8 - 16));
    } else {
      setTimeout(() => invalidate('rows'), nextDeriveAt - t);
    }
  }
  mark('derive');
  if (dirty.table) {
    dirty.table = false;
    table.render(now);
  }
  mark('table');
  if (dirty.detail || dirty.events) renderDetail(now);
  mark('detail');
  if (dirty.panels) {
    dirty.panels = false;
    renderPanels(now);
  }
  mark('panels');
  if ((marks.panels ?? 0) > 30 && slowFrames.length < 100) slowFrames.push({ at: now, rows: table.length, ...marks });
}

function derive(): void {
  if (!view) return;
  const snap = live ? live.items : view.getSnapshot();
  const key = `${filters.text}\u0000${filters.sortKey}\u0000${filters.dir}\u0000${live?.version ?? ''}`;
  if (snap === lastSnapshot && key === lastFilterKey) return;
  lastSnapshot = snap;
  lastFilterKey = key;
  const rows = deriveRows(snap, filters.text, filters.sortKey, filters.dir);
  table.setRows(rows);
  dirty.table = true;
  const t = $('table');
  t.dataset.rows = String(rows.length);
  // The total comes from the same snapshot as the rows when the rows are the
  // whole cache (the live count can be a frame ahead of the rows under churn).
  const total = live ? snap.length : (current?.status().cached ?? rows.length);
  $('matching').textContent = rows.length === total ? `${nf.format(rows.length)} rows` : `${nf.format(rows.length)} of ${nf.format(total)} match`;
  const empty = $('empty');
  empty.hidden = rows.length > 0;
  empty.textContent = current && !current.status().synced ? 'loading…' : 'nothing matches';
}

// ---- filters ----
function applyView(): void {
  if (!current) return;
  for (const off of unsubscribe.splice(0)) off();
  const err = $('selector-error');
  const input = $<HTMLInputElement>('selector');
  try {
    view = current.view({ namespace: filters.namespace || undefined, labelSelector: filters.selector || undefined });
    err.textContent = '';
    input.removeAttribute('aria-invalid');
  } catch (e) {
    if (!(e instanceof SelectorError)) throw e;
    // Keep showing the last valid view; say what is wrong and where.
    const { message, position } = e.problem;
    const at = position !== undefined && !/\bat\b|position|column/.test(message) ? ` (at ${position})` : '';
    err.textContent = `${message}${at}`;
    input.setAttribute('aria-invalid', 'true');
    if (!view) view = current.view({ namespace: filters.namespace || undefined });
  }
  const v = view;
  if (!filters.namespace && !filters.selector) {
    // Unfiltered: keep the rows from diffs rather than re-reading the whole snapshot.
    const rows = new LiveRows(current);
    live = rows;
    unsubscribe.push(current.subscribe((diff) => {
      rows.apply(diff);
      invalidate('rows');
    }));
  } else {
    live = null;
    unsubscribe.push(v.subscribe(() => invalidate('rows')));
  }
  const c = current;
  unsubscribe.push(c.subscribe((diff) => {
    if (selected && (diff.updated.includes(selected) || diff.removed.includes(selected) || diff.added.includes(selected))) invalidate('detail');
    invalidate('panels');
  }));
  lastSnapshot = null;
  table.toTop();
  invalidate('rows');
}

$<HTMLInputElement>('selector').addEventListener('input', (e) => {
  filters.selector = (e.target as HTMLInputElement).value.trim();
  applyView();
});
$<HTMLSelectElement>('namespace').addEventListener('change', (e) => {
  filters.namespace = (e.target as HTMLSelectElement).value;
  applyView();
});
$<HTMLInputElement>('text').addEventListener('input', (e) => {
  filters.text = (e.target as HTMLInputElement).value.trim();
  table.toTop();
  invalidate('rows');
});
$('table').querySelector('thead')?.addEventListener('click', (e) => {
  const th = (e.target as HTMLElement).closest('th');
  const k = th?.dataset.sort as SortKey | undefined;
  if (!th || !k) return;
  filters.dir = filters.sortKey === k ? (filters.dir === 1 ? -1 : 1) : 1;
  filters.sortKey = k;
  for (const h of th.parentElement?.children ?? []) h.classList.remove('sorted', 'asc', 'desc');
  th.classList.add('sorted', filters.dir === 1 ? 'asc' : 'desc');
  invalidate('rows');
});
$<HTMLTableElement>('table').tBodies[0]?.addEventListener('click', (e) => {
  const tr = (e.target as HTMLElement).closest('tr');
  if (!tr?.dataset.key) return;
  select(tr.dataset.key);
});

// ---- detail pane ----
let detailObj: KubeObject | undefined;
let detailFormat: Format = format;
let lastEventsAt = 0;

function select(key: string | null): void {
  if (key === null) closeEvents();
  else openEvents();
  selected = key;
  table.setSelected(key);
  detailObj = undefined;
  $('detail').hidden = key === null;
  invalidate('table');
  invalidate('detail');
  invalidate('events');
}
$('detail-close').addEventListener('click', () => select(null));
for (const [id, f] of [['tab-yaml', 'yaml'], ['tab-json', 'json']] as const) {
  $(id).addEventListener('click', () => {
    format = f;
    for (const b of ['tab-yaml', 'tab-json']) {
      $(b).classList.toggle('active', b === id);
      $(b).setAttribute('aria-selected', String(b === id));
    }
    invalidate('detail');
  });
}

interface EventObj extends KubeObject {
  involvedObject?: { kind?: string; namespace?: string; name?: string };
  reason?: string; message?: string; type?: string; count?: number;
  lastTimestamp?: string; eventTime?: string;
}
const involvedKey = (kind: string, ns: string | undefined, name: string): string => `${kind}/${ns ?? ''}/${name}`;
let events: Cache<EventObj> | null = null;

function renderDetail(now: number): void {
  if (!current || selected === null) {
    dirty.detail = dirty.events = false;
    return;
  }
  const obj = current.get(selected);
  if (dirty.detail) {
    dirty.detail = false;
    // Same object identity = same version: nothing to redraw.
    if (obj !== detailObj || format !== detailFormat || !obj) {
      const kind = obj?.kind ?? current.info.kind;
      $('detail-title').textContent = `${kind} ${selected}${obj ? '' : ' (deleted)'}`;
      $('detail').classList.toggle('gone', !obj);
      if (obj) {
        $('detail-body').textContent = format === 'yaml' ? toYaml(obj) : JSON.stringify(obj, null, 2);
        const m = obj.metadata;
        $('detail-meta').textContent = `resourceVersion ${m.resourceVersion ?? '?'} · created ${age(Date.parse(m.creationTimestamp ?? '') || 0, now)} ago · uid ${m.uid ?? '?'}`;
      }
      detailObj = obj;
      detailFormat = format;
      dirty.events = true;
    }
  }
  // Events change constantly on a busy cluster; look them up at most twice a second.
  if (dirty.events && events && (now - lastEventsAt > 500 || !obj)) {
    dirty.events = false;
    lastEventsAt = now;
    const [a, b] = selected.includes('/') ? selected.split('/') : [undefined, selected];
    const kind = obj?.kind ?? current.info.kind;
    const list = events.byIndex('involved', involvedKey(kind, a, b ?? ''));
    const when = (e: EventObj): number => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '') || 0;
    const recent = [...list].sort((x, y) => when(y) - when(x)).slice(0, 10);
    const ul = $('detail-events');
    ul.replaceChildren(...recent.map((e) => {
      const li = document.createElement('li');
      li.className = e.type === 'Warning' ? 'warn' : '';
      li.textContent = `${age(when(e), now)} · ${e.reason ?? ''}${e.count && e.count > 1 ? ` ×${e.count}` : ''}: ${e.message ?? ''}`;
      return li;
    }));
    if (recent.length === 0) ul.replaceChildren(Object.assign(document.createElement('li'), { className: 'muted', textContent: 'no events' }));
  } else if (dirty.events) {
    setTimeout(() => invalidate('events'), 500);
  }
}

// ---- header, connections and controller panels ----
const spark = new Sparkline($<HTMLCanvasElement>('spark'), 60);
let controller: NotReadyController | null = null;

function renderPanels(now: number): void {
  if (current) {
    const s = current.status();
    const pill = $('status');
    pill.dataset.phase = s.relists > 0 && s.phase === 'listing' ? 'relisting' : s.phase;
    pill.textContent = `${current.label}: ${phaseText(s, now)}`;
    // The pill may be cut short to keep the header on screen: the title has it all.
    const why = s.lastError ? ` — last error: ${s.lastError.message}` : s.persistence?.warning ? ` — ${s.persistence.warning}` : '';
    pill.title = pill.textContent + why;
    const count = $('count');
    count.textContent = `${nf.format(s.cached)} cached`;
    count.dataset.count = String(s.cached);
    const bar = $('progress');
    bar.hidden = s.synced;
    if (!s.synced) {
      const pct = s.listTotal ? Math.min(100, (100 * s.listed) / s.listTotal) : undefined;
      bar.classList.toggle('indeterminate', pct === undefined);
      (bar.querySelector('.bar') as HTMLElement).style.width = pct === undefined ? '' : `${pct}%`;
      (bar.querySelector('.text') as HTMLElement).textContent =
        `listing ${current.label}: ${nf.format(s.listed)}${s.listTotal ? ` of ${nf.format(s.listTotal)}` : ''}`;
    }
  }
  const rows = opened.map((c) => {
    const s = c.status();
    const tr = document.createElement('tr');
    tr.dataset.informer = c.label;
    tr.dataset.phase = s.phase;
    if (c === current) tr.className = 'current';
    const cells = [c.label, phaseText(s, now), ago(s.lastEventAt, now), nf.format(s.cached), `${s.reconnects} / ${s.relists}`];
    for (const [i, text] of cells.entries()) {
      const td = document.createElement('td');
      td.textContent = text;
      if (i === 1) { td.className = 'state'; td.dataset.phase = s.relists > 0 && s.phase === 'listing' ? 'relisting' : s.phase; }
      if (i === 1 && s.lastError) td.title = s.lastError.message;
      tr.appendChild(td);
    }
    return tr;
  });
  $('connections').querySelector('tbody')?.replaceChildren(...rows);
  if (controller) {
    const worst = controller.worst(12);
    $('ctl-count').textContent = nf.format(controller.flagged.size);
    $('ctl-summary').textContent = `${nf.format(controller.pending.size)} more not Ready for under 30 s · ${nf.format(controller.checks)} checks · queue depth ${controller.queue.len}`;
    $('controller').querySelector('tbody')?.replaceChildren(...worst.map((f) => {
      const tr = document.createElement('tr');
      for (const text of [f.key, age(f.notReadySince, now), String(f.retries), `in ${Math.max(0, Math.ceil((f.nextCheckAt - now) / 1000))} s`]) {
        tr.appendChild(Object.assign(document.createElement('td'), { textContent: text }));
      }
      return tr;
    }));
  }
}

// Once a second: ages, "last event N s ago", countdowns, the sparkline.
const baseline = new Map<Cache, number>();
function tick(): void {
  let delta = 0;
  for (const c of opened) {
    const s = c.status();
    // Count watch events only: the initial list would dwarf them.
    if (!s.synced) continue;
    const prev = baseline.get(c);
    if (prev !== undefined) delta += Math.max(0, s.eventsApplied - prev);
    baseline.set(c, s.eventsApplied);
  }
  spark.push(delta);
  $('eps').textContent = `${nf.format(delta)} ev/s`;
  const heap = (performance as Performance & { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize;
  $('memory').textContent = `wasm ${mib(conn.wasmBytes())}${heap ? ` · JS heap ${mib(heap)}` : ''}`;
  invalidate('table');
  invalidate('panels');
}

/** Where the watches live, as the memory readout names it. */
const HOSTS: Record<SharedHost['kind'], string> = {
  'shared-worker': 'watches shared by every tab',
  worker: 'watches in a worker',
  page: 'watches in this tab',
};

// ---- start ----
const statusOff = new Map<Cache, () => void>();
function track(c: Cache): Cache {
  if (!opened.includes(c)) {
    opened.push(c);
    statusOff.set(c, c.onStatus(() => invalidate('panels')));
  }
  return c;
}

/** Give a cache back; the panels forget it once nothing here uses it. */
function untrack(c: Cache): void {
  if (!c.release()) return;
  statusOff.get(c)?.();
  statusOff.delete(c);
  const i = opened.indexOf(c);
  if (i >= 0) opened.splice(i, 1);
}

function show(res: ResourceInfo): void {
  const prev = current;
  current = track(conn.cache(res));
  view = null;
  select(null);
  const ns = $<HTMLSelectElement>('namespace');
  ns.disabled = !res.namespaced;
  if (!res.namespaced) filters.namespace = '';
  history.replaceState(null, '', `#${resourceLabel(res)}`);
  applyView();
  // The previous resource's informer stops watching once its grace period passes.
  if (prev) untrack(prev);
  invalidate('panels');
}

const conn = await connect({ server, token }).catch((e: unknown) => {
  $('status').textContent = `cannot load kubewasm: ${String(e)}`;
  throw e;
});
$('memory').dataset.host = conn.host.kind;
$('memory').title = `watches: ${HOSTS[conn.host.kind]} (${conn.host.reason})`;

setInterval(tick, 1000);

let resources: ResourceInfo[];
try {
  resources = await conn.discover();
} catch (e) {
  $('status').dataset.phase = 'backoff';
  $('status').textContent = `discovery failed: ${String(e)}`;
  throw e;
}
resources.sort((a, b) => (a.group === b.group ? a.resource.localeCompare(b.resource) : a.group === '' ? -1 : b.group === '' ? 1 : a.group.localeCompare(b.group)));
const core = (name: string): ResourceInfo | undefined => resources.find((r) => r.group === '' && r.resource === name);

const resSelect = $<HTMLSelectElement>('resource');
const groups = new Map<string, HTMLOptGroupElement>();
resSelect.replaceChildren();
resources.forEach((r, i) => {
  const g = r.group || 'core';
  let og = groups.get(g);
  if (!og) {
    og = Object.assign(document.createElement('optgroup'), { label: g });
    groups.set(g, og);
    resSelect.appendChild(og);
  }
  og.appendChild(new Option(`${r.resource} (${r.kind})`, String(i)));
});
resSelect.addEventListener('change', () => {
  const r = resources[Number(resSelect.value)];
  if (r) show(r);
});

// Supporting informers: namespaces (the filter), events (the detail pane), pods (the controller).
const nsInfo = core('namespaces');
if (nsInfo) {
  const nsCache = track(conn.cache(nsInfo));
  let names = '';
  nsCache.subscribe(() => {
    const list = nsCache.getSnapshot().map((n) => n.metadata.name);
    if (list.join() === names) return;
    names = list.join();
    const sel = $<HTMLSelectElement>('namespace');
    const keep = sel.value;
    sel.replaceChildren(new Option('all namespaces', ''), ...list.map((n) => new Option(n, n)));
    sel.value = list.includes(keep) ? keep : '';
  });
}
const evInfo = core('events');
/** Defined once: the factory refuses an index name bound to another function. */
const eventIndexers = {
  involved: (e: EventObj) => (e.involvedObject?.name ? [involvedKey(e.involvedObject.kind ?? '', e.involvedObject.namespace, e.involvedObject.name)] : []),
};
let eventsOff: (() => void) | null = null;
/** The detail pane's events informer: held only while the pane is open. */
function openEvents(): void {
  if (events || !evInfo) return;
  events = track(conn.cache<EventObj>(evInfo, { indexers: eventIndexers })) as Cache<EventObj>;
  eventsOff = events.subscribe(() => { if (selected) invalidate('events'); });
}
function closeEvents(): void {
  if (!events) return;
  eventsOff?.();
  eventsOff = null;
  const e = events as Cache;
  events = null;
  untrack(e);
}
const podInfo = core('pods');
if (podInfo) controller = new NotReadyController(track(conn.cache(podInfo)));

// The hash is whatever was typed or linked: a malformed escape must not stop the page.
const wanted = safeDecode(location.hash.slice(1));
const first = resources.findIndex((r) => resourceLabel(r) === wanted);
const initial = first >= 0 ? first : Math.max(0, resources.findIndex((r) => r === podInfo));
resSelect.value = String(initial);
const initialRes = resources[initial];
if (initialRes) show(initialRes);

/** Hooks for the browser tests and the benchmark. */
declare global {
  interface Window { kubewasmDashboard: unknown }
}
window.kubewasmDashboard = {
  ready: true,
  current: () => current,
  /** The keys in table order (to compare with the informer's snapshot). */
  rowKeys: () => table.keys(),
  rows: () => table.length,
  cache: (label: string) => opened.find((c) => c.label === label),
  state: (label: string): Record<string, string> => {
    const c = opened.find((x) => x.label === label);
    return Object.fromEntries((c?.getSnapshot() ?? []).map((o) => [keyOf(o), o.metadata.resourceVersion ?? '']));
  },
  status: (label: string) => opened.find((c) => c.label === label)?.status(),
  /** The kinds whose informers this tab holds (each is one watch). */
  openLabels: () => opened.map((c) => c.label),
  controller: () => controller,
  wasmBytes: () => conn.wasmBytes(),
  slowFrames,
};
