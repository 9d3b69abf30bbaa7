// The page half of the Web Worker demo: it holds no cache of its own, only the
// objects the worker posts with each coalesced diff.
import type { Message } from './cache-worker';

const worker = new Worker(new URL('./cache-worker.ts', import.meta.url), { type: 'module' });
const pods = new Map<string, unknown>();
let diffs = 0;
const el = (id: string): HTMLElement => document.getElementById(id) ?? document.body;

worker.onmessage = ({ data }: MessageEvent<Message>) => {
  if ('error' in data) {
    el('status').textContent = data.error;
    return;
  }
  diffs++;
  for (const key of data.diff.removed) pods.delete(key);
  for (const [key, p] of data.changed) pods.set(key, p);
  el('count').textContent = String(pods.size);
  el('count').dataset.count = String(pods.size);
  el('diffs').textContent = String(diffs);
  el('status').textContent = data.status.phase;
  el('changes').replaceChildren(...data.diff.added.slice(0, 5).map((k) => Object.assign(document.createElement('li'), { textContent: `+ ${k}` })));
};
