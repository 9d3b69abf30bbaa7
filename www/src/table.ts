// The resource table: rows are derived (filter + sort) at most once per frame
// from a snapshot, and only the rows in the scroll viewport exist in the DOM
// (a fixed pool of <tr> reused as the view scrolls), so 50,000 objects cost
// the same to draw as 50.
import { age, describe } from './describe';
import { keyOf, type KubeObject } from './kube';

export type SortKey = 'name' | 'namespace' | 'status' | 'age';

export const ROW_HEIGHT = 24;
const OVERSCAN = 8;

/** Filter by a case-insensitive substring of `namespace/name`, then sort. */
export function deriveRows(src: readonly KubeObject[], text: string, sortKey: SortKey, dir: 1 | -1): readonly KubeObject[] {
  const needle = text.toLowerCase();
  const items = needle ? src.filter((o) => describe(o).search.includes(needle)) : src;
  // The informer's snapshot is already ordered by namespace/name.
  if (sortKey === 'namespace') return dir === 1 ? items : [...items].reverse();
  // Decorate once, sort on the precomputed key, undecorate.
  const keyed: [string | number, string, KubeObject][] = items.map((o) => {
    const d = describe(o);
    const k = sortKey === 'name' ? o.metadata.name : sortKey === 'status' ? d.status : -d.created;
    return [k, d.search, o];
  });
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0) * dir);
  return keyed.map((x) => x[2]);
}

interface Slot {
  tr: HTMLTableRowElement;
  cells: HTMLTableCellElement[];
  obj: KubeObject | null;
  age: string;
  selected: boolean;
}

export class ResourceTable {
  private rows: readonly KubeObject[] = [];
  private slots: Slot[] = [];
  private selected: string | null = null;
  private readonly top: HTMLTableRowElement;
  private readonly bottom: HTMLTableRowElement;
  private readonly body: HTMLTableSectionElement;

  constructor(private readonly wrap: HTMLElement, table: HTMLTableElement, private readonly onScroll: () => void) {
    this.body = table.tBodies[0] ?? table.createTBody();
    this.top = this.pad();
    this.bottom = this.pad();
    this.body.replaceChildren(this.top, this.bottom);
    wrap.addEventListener('scroll', () => this.onScroll(), { passive: true });
  }

  private pad(): HTMLTableRowElement {
    const tr = document.createElement('tr');
    tr.className = 'pad';
    tr.setAttribute('aria-hidden', 'true');
    return tr;
  }

  setRows(rows: readonly KubeObject[]): void {
    this.rows = rows;
  }

  setSelected(key: string | null): void {
    this.selected = key;
  }

  /** Keys of every row, in order (for tests). */
  keys(): string[] {
    return this.rows.map(keyOf);
  }

  get length(): number {
    return this.rows.length;
  }

  /** Scroll back to the first row (after the resource or a filter changes). */
  toTop(): void {
    this.wrap.scrollTop = 0;
  }

  /** Draw the rows in the viewport; cheap when nothing in view changed. */
  render(now: number): void {
    const head = this.wrap.querySelector('thead')?.getBoundingClientRect().height ?? ROW_HEIGHT;
    const first = Math.max(0, Math.floor((this.wrap.scrollTop - head) / ROW_HEIGHT) - OVERSCAN);
    const want = Math.ceil(this.wrap.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const last = Math.min(this.rows.length, first + want);
    const visible = Math.max(0, last - first);
    while (this.slots.length < visible) this.slots.push(this.slot());
    for (let i = 0; i < this.slots.length; i++) {
      const s = this.slots[i];
      if (s === undefined) continue;
      const obj = i < visible ? this.rows[first + i] ?? null : null;
      if (obj === null) {
        if (s.tr.isConnected) s.tr.remove();
        s.obj = null;
        continue;
      }
      // Slots are connected as a prefix of the pool, in order, so appending keeps the order.
      if (!s.tr.isConnected) this.body.insertBefore(s.tr, this.bottom);
      this.fill(s, obj, now);
    }
    this.top.style.height = `${first * ROW_HEIGHT}px`;
    this.bottom.style.height = `${Math.max(0, this.rows.length - last) * ROW_HEIGHT}px`;
  }

  private slot(): Slot {
    const tr = document.createElement('tr');
    const cells = ['name', 'ns', 'status', 'age', 'labels'].map((cls) => {
      const td = document.createElement('td');
      td.className = cls;
      tr.appendChild(td);
      return td;
    });
    return { tr, cells, obj: null, age: '', selected: false };
  }

  private fill(s: Slot, obj: KubeObject, now: number): void {
    const d = describe(obj);
    const [name, ns, status, ageCell, labels] = s.cells;
    if (s.obj !== obj && name && ns && status && labels) {
      s.obj = obj;
      const key = keyOf(obj);
      s.tr.dataset.key = key;
      name.textContent = obj.metadata.name;
      ns.textContent = obj.metadata.namespace ?? '';
      status.textContent = d.status;
      status.dataset.tone = d.tone;
      labels.textContent = d.labels;
      labels.title = d.labels;
    }
    const a = age(d.created, now);
    if (a !== s.age && ageCell) {
      ageCell.textContent = a;
      s.age = a;
    }
    const sel = s.tr.dataset.key === this.selected;
    if (sel !== s.selected) {
      s.tr.classList.toggle('selected', sel);
      s.selected = sel;
    }
  }
}
