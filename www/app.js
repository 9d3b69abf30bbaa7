// The kubewasm demo dashboard: a live, filterable view of any resource the
// server offers, driven only by the kubewasm package (informers, listers,
// coalesced diffs, WorkQueue). Rendering happens at most once per frame, from
// the informer's diff notifications — never once per watch event.
import init, { KubeClient, InformerFactory, WorkQueue, KubeError } from './pkg/web/index.js';

const params = new URLSearchParams(location.search);
// Same origin by default (the sim, or `kubectl proxy --www`); `?server=` overrides.
const server = params.get('server') || location.origin + (params.get('prefix') || '');
const token = params.get('token') || undefined;
// Rows rendered at most (the table scrolls within them); the count shows the rest.
const MAX_ROWS = 150;

const $ = (id) => document.getElementById(id);
const state = {
  resource: null, informer: null, unsub: [], sortKey: 'namespace', sortDir: 1,
  selected: null, selector: '', namespace: '', text: '', events: [], eventTimes: [],
};

const wasm = await init();
const client = new KubeClient({ server, token });
const factory = new InformerFactory(client);
factory.start();

// ---- discovery (legacy documents, read with fetch) ----
async function discover() {
  const get = async (path) => {
    const r = await fetch(server + path, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
    if (!r.ok) throw new Error(`${path}: ${r.status}`);
    return r.json();
  };
  const out = [];
  const add = (group, version, list) => {
    for (const r of list.resources || []) {
      if (r.name.includes('/') || !(r.verbs || []).includes('watch')) continue;
      out.push({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced });
    }
  };
  add('', 'v1', await get('/api/v1'));
  const groups = await get('/apis');
  for (const g of groups.groups || []) {
    const gv = g.preferredVersion || g.versions[0];
    add(g.name, gv.version, await get(`/apis/${gv.groupVersion}`));
  }
  return out;
}

// ---- helpers ----
const keyOf = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
function statusOf(o) {
  const s = o.status || {};
  if (o.kind === 'Pod') {
    const ready = (s.conditions || []).find((c) => c.type === 'Ready');
    return `${s.phase || '?'}${ready && ready.status !== 'True' ? ' (not ready)' : ''}`;
  }
  if (s.phase) return s.phase;
  if (s.readyReplicas !== undefined || s.replicas !== undefined) return `${s.readyReplicas ?? 0}/${s.replicas ?? 0} ready`;
  if (s.state) return s.state;
  const ready = (s.conditions || []).find((c) => c.type === 'Ready');
  return ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : '';
}
function age(ts) {
  if (!ts) return '';
  const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
  if (s < 120) return `${Math.floor(s)}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
const labelsText = (o) => Object.entries(o.metadata.labels || {}).map(([k, v]) => `${k}=${v}`).join(', ');

// ---- rendering (once per frame at most) ----
let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; render(); });
}

function rows() {
  const inf = state.informer;
  if (!inf) return [];
  let items;
  let fromSnapshot = false;
  try {
    // The unfiltered snapshot is cached by the informer (rebuilt once per diff);
    // filtered lists go through the lister's indexes.
    fromSnapshot = !state.namespace && !state.selector;
    items = fromSnapshot
      ? inf.getSnapshot()
      : inf.lister().list({ namespace: state.namespace || undefined, labelSelector: state.selector || undefined });
    $('selector-error').textContent = '';
  } catch (e) {
    if (e instanceof KubeError) {
      $('selector-error').textContent = `${e.message}${e.position !== undefined ? ` (at ${e.position})` : ''}`;
      items = [];
    } else throw e;
  }
  if (state.text) items = items.filter((o) => o.metadata.name.includes(state.text));
  const k = state.sortKey;
  // The snapshot already comes sorted by namespace/name.
  if (fromSnapshot && k === 'namespace' && state.sortDir === 1) return items;
  // Decorate once, sort by the precomputed key (not recomputed per comparison).
  const keyed = items.map((o) => [k === 'name' ? o.metadata.name
    : k === 'namespace' ? `${o.metadata.namespace || ''}/${o.metadata.name}`
      : k === 'status' ? statusOf(o) : k === 'age' ? -(Date.parse(o.metadata.creationTimestamp || 0) || 0) : '', o]);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) * state.sortDir);
  return keyed.map((x) => x[1]);
}

function render() {
  const list = rows();
  const tbody = $('table').tBodies[0];
  const frag = document.createDocumentFragment();
  for (const o of list.slice(0, MAX_ROWS)) {
    const tr = document.createElement('tr');
    const key = keyOf(o);
    tr.dataset.key = key;
    if (key === state.selected) tr.className = 'selected';
    for (const [cls, text] of [['name', o.metadata.name], ['ns', o.metadata.namespace || ''], ['status', statusOf(o)],
      ['age', age(o.metadata.creationTimestamp)], ['labels', labelsText(o)]]) {
      const td = document.createElement('td');
      td.className = cls;
      td.textContent = text;
      tr.appendChild(td);
    }
    frag.appendChild(tr);
  }
  tbody.replaceChildren(frag);
  $('truncated').textContent = list.length > MAX_ROWS ? `showing ${MAX_ROWS} of ${list.length} matching rows` : `${list.length} matching rows`;
  $('table').dataset.rows = String(list.length);
  renderDetail();
  renderStatus();
}

function renderDetail() {
  const inf = state.informer;
  if (!inf || !state.selected) return;
  const [a, b] = state.selected.split('/');
  const o = b === undefined ? inf.lister().get(a) : inf.lister().get(a, b);
  $('detail-title').textContent = o ? state.selected : `${state.selected} (deleted)`;
  $('detail-json').textContent = o ? JSON.stringify(o, null, 2) : '';
  const evs = eventsInformer ? eventsInformer.lister().list({}).filter((e) => e.involvedObject && e.involvedObject.name === (b ?? a)) : [];
  $('detail-events').replaceChildren(...evs.slice(-10).map((e) => Object.assign(document.createElement('li'), { textContent: `${e.reason}: ${e.message}` })));
}

function renderStatus() {
  const inf = state.informer;
  if (!inf) return;
  const s = inf.status;
  const pill = $('status');
  pill.dataset.phase = s.phase;
  let text = s.phase;
  if (s.phase === 'backoff' && s.nextRetryAt) text = `reconnecting in ${Math.max(0, Math.ceil((s.nextRetryAt - Date.now()) / 1000))} s`;
  if (s.phase === 'listing' && s.relists > 0) text = 'relisting';
  if (s.phase === 'watching' && s.lastEventAt) text += ` · last event ${Math.floor((Date.now() - s.lastEventAt) / 1000)} s ago`;
  text += ` · ${s.reconnects} reconnects · ${s.relists} relists`;
  pill.textContent = text;
  $('count').textContent = `${s.cached} objects`;
  $('count').dataset.count = String(s.cached);
  const bar = $('progress');
  bar.hidden = s.synced;
  if (s.listTotal) bar.firstElementChild.style.width = `${Math.min(100, (100 * s.listed) / s.listTotal)}%`;
}

// ---- events per second sparkline ----
const spark = $('spark').getContext('2d');
let lastApplied = 0;
const history = [];
setInterval(() => {
  const inf = state.informer;
  if (!inf) return;
  const applied = inf.status.eventsApplied;
  history.push(Math.max(0, applied - lastApplied));
  lastApplied = applied;
  if (history.length > 60) history.shift();
  const max = Math.max(1, ...history);
  spark.clearRect(0, 0, 120, 24);
  spark.beginPath();
  history.forEach((v, i) => spark.lineTo((i * 120) / 60, 24 - (v / max) * 22));
  spark.strokeStyle = '#7fb3ff';
  spark.stroke();
  $('eps').textContent = `${history[history.length - 1] ?? 0} ev/s`;
  renderStatus();
}, 1000);

// ---- the resource being browsed ----
function show(res) {
  for (const off of state.unsub) off();
  state.unsub = [];
  state.resource = res;
  state.selected = null;
  state.informer = factory.informer({ group: res.group, version: res.version, resource: res.resource });
  state.informer.start();
  state.unsub.push(state.informer.subscribe(scheduleRender));
  state.unsub.push(state.informer.on('status', scheduleRender));
  scheduleRender();
}

// ---- a small controller: pods not Ready for more than 30 s ----
const unhealthy = new Map();
const queue = new WorkQueue({ name: 'not-ready', timings: false });
const pods = factory.informer({ version: 'v1', resource: 'pods' });
const isReady = (p) => ((p.status || {}).conditions || []).some((c) => c.type === 'Ready' && c.status === 'True');
pods.on('add', (p) => { if (!isReady(p)) queue.addAfter(keyOf(p), 30_000); });
pods.on('update', (_old, p) => { if (!isReady(p)) queue.addAfter(keyOf(p), 30_000); else { unhealthy.delete(keyOf(p)); queue.forget(keyOf(p)); } });
pods.on('delete', (p) => { unhealthy.delete(keyOf(p)); queue.forget(keyOf(p)); });
queue.runWorkers(2, (key) => {
  const [ns, name] = key.split('/');
  const p = pods.lister().get(ns, name);
  if (!p || isReady(p)) { unhealthy.delete(key); return; }
  unhealthy.set(key, { retries: queue.numRequeues(key), next: Date.now() + 30_000 });
  return { requeueAfterMs: 30_000 };
}, {});
setInterval(() => {
  $('unhealthy').replaceChildren(...[...unhealthy].slice(0, 20).map(([k, v]) =>
    Object.assign(document.createElement('li'), { textContent: `${k} · checks ${v.retries + 1} · next in ${Math.max(0, Math.round((v.next - Date.now()) / 1000))} s` })));
}, 1000);

const eventsInformer = factory.informer({ version: 'v1', resource: 'events' });
const namespaces = factory.informer({ version: 'v1', resource: 'namespaces' });
namespaces.subscribe(() => {
  const sel = $('namespace');
  const current = sel.value;
  const names = namespaces.getSnapshot().map((n) => n.metadata.name);
  sel.replaceChildren(new Option('all namespaces', ''), ...names.map((n) => new Option(n, n)));
  sel.value = names.includes(current) ? current : '';
});

// ---- wiring ----
$('selector').addEventListener('input', (e) => { state.selector = e.target.value.trim(); scheduleRender(); });
$('text').addEventListener('input', (e) => { state.text = e.target.value.trim(); scheduleRender(); });
$('namespace').addEventListener('change', (e) => { state.namespace = e.target.value; scheduleRender(); });
$('table').tHead.addEventListener('click', (e) => {
  const k = e.target.dataset && e.target.dataset.sort;
  if (!k) return;
  state.sortDir = state.sortKey === k ? -state.sortDir : 1;
  state.sortKey = k;
  scheduleRender();
});
$('table').tBodies[0].addEventListener('click', (e) => {
  const tr = e.target.closest('tr');
  if (tr) { state.selected = tr.dataset.key; scheduleRender(); }
});
const resources = await discover();
const sel = $('resource');
sel.replaceChildren(...resources.map((r, i) => new Option(`${r.resource}${r.group ? '.' + r.group : ''}`, String(i))));
const podsIndex = resources.findIndex((r) => r.resource === 'pods' && r.group === '');
sel.value = String(Math.max(0, podsIndex));
sel.addEventListener('change', () => show(resources[Number(sel.value)]));
show(resources[Number(sel.value)]);
window.kubewasmDashboard = { state, factory, wasmBytes: () => wasm.memory.buffer.byteLength };
