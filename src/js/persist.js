// IndexedDB storage of informer caches for warm starts (see persist.rs).
//
// One database per `persist.name`: `meta` maps an informer key to what its
// stored copy is current at, `objects` maps [informer key, bucket] to the
// objects in that bucket: their JSON as UTF-8 back to back (`bytes`) and
// where each ends (`ends`). A few hundred such records per copy read far
// faster than one record per object, and bytes cross into wasm without any
// string conversion. An informer key starts with a hash of the server URL and the
// identity (never the credential itself), so two users of one browser never
// read each other's copy. Everything read is checked; what does not fit this
// schema is discarded and reported, never trusted.

const SCHEMA = 3;
const FORMAT = 'kubewasm';
const META = 'meta';
const OBJECTS = 'objects';
/** How long opening may wait for other connections (an old tab holding an older schema). */
const OPEN_TIMEOUT_MS = 3000;

const request = (req) =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });

const done = (tx) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'));
  });

async function sha256hex(text) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

function openDb(name, warn) {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = indexedDB.open(name, SCHEMA);
    } catch (e) {
      reject(e);
      return;
    }
    const timer = setTimeout(() => reject(new DOMException(`opening ${name} timed out`, 'TimeoutError')), OPEN_TIMEOUT_MS);
    req.onupgradeneeded = (ev) => {
      const db = req.result;
      if (ev.oldVersion !== 0) {
        const ours = db.objectStoreNames.contains(META) && db.objectStoreNames.contains(OBJECTS);
        warn(ours ? `stored data of an older schema (${ev.oldVersion}) was discarded` : `the database ${name} was not written by kubewasm and was discarded`);
      }
      for (const s of Array.from(db.objectStoreNames)) db.deleteObjectStore(s);
      db.createObjectStore(META);
      db.createObjectStore(OBJECTS);
    };
    req.onsuccess = () => {
      clearTimeout(timer);
      resolve(req.result);
    };
    req.onerror = () => {
      clearTimeout(timer);
      reject(req.error);
    };
  });
}

/** Storage of one factory's informers. Every method reports failures by rejecting. */
export class PersistStore {
  /** `identity` only enters a hash; `onWarning(message)` hears what was discarded. */
  constructor(name, server, identity, onWarning, maxCopies) {
    this.dbName = `kubewasm:${name}`;
    this.maxCopies = maxCopies;
    this.warn = onWarning;
    this.prefix = sha256hex(`${server}\n${identity}`);
    this.opening = null;
    // scope → the function that lets go of its lock
    this.claimed = new Map();
  }

  /**
   * Whether this store may write `scope`'s copy. Two tabs writing one copy
   * would mix buckets of different versions, so each copy has one writer
   * across tabs (a Web Lock, held until `release()` or the page goes).
   */
  async claim(scope) {
    if (this.claimed.has(scope)) return true;
    const locks = globalThis.navigator?.locks;
    if (!locks) {
      this.claimed.set(scope, () => {});
      return true;
    }
    const name = `${this.dbName}|${await this.key(scope)}`;
    let release = () => {};
    const got = await new Promise((resolve) => {
      locks
        .request(name, { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          return lock === null ? undefined : new Promise((r) => (release = r));
        })
        .catch(() => resolve(false));
    });
    if (got) this.claimed.set(scope, release);
    return got;
  }

  /** Let go of one copy (its informer was dropped): another tab may write it, or a sweep delete it. */
  unclaim(scope) {
    this.claimed.get(scope)?.();
    this.claimed.delete(scope);
  }

  /**
   * Call `onCleared` when another tab or worker clears this name's stored
   * copies (`clearStore`, at logout): each one still persisting would
   * otherwise write its copy back.
   */
  listen(onCleared) {
    if (typeof BroadcastChannel !== 'function' || this.channel) return;
    this.channel = new BroadcastChannel(this.dbName);
    this.channel.onmessage = (e) => {
      if (e.data === 'cleared') onCleared();
    };
  }

  /** Let go of every copy this store writes, and stop listening. */
  release() {
    for (const release of this.claimed.values()) release();
    this.claimed.clear();
    this.channel?.close();
    this.channel = undefined;
  }

  /** The database, opened once for every informer of the factory. */
  open() {
    this.opening ??= this.openOnce().catch((e) => {
      this.opening = null;
      throw e;
    });
    return this.opening;
  }

  async openOnce() {
    if (typeof indexedDB === 'undefined') throw new DOMException('IndexedDB is not available here', 'NotSupportedError');
    let db;
    try {
      db = await openDb(this.dbName, this.warn);
    } catch (e) {
      if (e?.name !== 'VersionError') throw e;
      // Written by a newer schema (or by someone else): not ours to read.
      this.warn(`stored data of an unknown newer schema was discarded`);
      await request(indexedDB.deleteDatabase(this.dbName));
      db = await openDb(this.dbName, this.warn);
    }
    if (!db.objectStoreNames.contains(META) || !db.objectStoreNames.contains(OBJECTS)) {
      // Same name, someone else's layout.
      db.close();
      this.warn(`the database ${this.dbName} was not written by kubewasm and was discarded`);
      await request(indexedDB.deleteDatabase(this.dbName));
      db = await openDb(this.dbName, this.warn);
    }
    // Another tab deleting or upgrading the database: let it.
    db.onversionchange = () => {
      db.close();
      this.opening = null;
    };
    return db;
  }

  async key(scope) {
    return `${await this.prefix}|${scope}`;
  }

  /**
   * The stored copy of one informer: `{ rv, savedAt, buckets, parts }`
   * (`parts`: the `{ bytes, ends, bucket }` records), or `null` when there is none or
   * it was discarded.
   */
  async load(scope) {
    const key = await this.key(scope);
    const db = await this.open();
    const tx = db.transaction([META, OBJECTS], 'readonly');
    const range = IDBKeyRange.bound([key], [key, []]);
    const objects = tx.objectStore(OBJECTS);
    const [meta, buckets, keys] = await Promise.all([request(tx.objectStore(META).get(key)), request(objects.getAll(range)), request(objects.getAllKeys(range))]);
    if (meta === undefined) return null;
    const wellFormed = (p) => p !== null && typeof p === 'object' && p.bytes instanceof Uint8Array &&
      p.ends instanceof Uint32Array && p.ends.every((e, i) => e <= p.bytes.length && (i === 0 || e >= p.ends[i - 1]));
    const count = buckets.reduce((n, p) => n + (p?.ends?.length ?? 0), 0);
    const valid =
      meta !== null && typeof meta === 'object' && meta.format === FORMAT && meta.schema === SCHEMA &&
      typeof meta.rv === 'string' && meta.rv !== '' && Number.isFinite(meta.savedAt) &&
      Number.isInteger(meta.buckets) && meta.buckets > 0 && buckets.length <= meta.buckets &&
      buckets.every(wellFormed) && meta.count === count && keys.length === buckets.length &&
      keys.every((k) => Array.isArray(k) && Number.isInteger(k[1]) && k[1] >= 0 && k[1] < meta.buckets);
    if (!valid) {
      this.warn(`the stored copy of ${scope} was unreadable and was discarded`);
      await this.drop(scope);
      return null;
    }
    const parts = buckets.map((p, i) => ({ bytes: p.bytes, ends: p.ends, bucket: keys[i][1] }));
    return { rv: meta.rv, savedAt: meta.savedAt, buckets: meta.buckets, parts };
  }

  /** Remove one informer's stored copy. */
  async drop(scope) {
    const key = await this.key(scope);
    const db = await this.open();
    const tx = db.transaction([META, OBJECTS], 'readwrite');
    tx.objectStore(META).delete(key);
    tx.objectStore(OBJECTS).delete(IDBKeyRange.bound([key], [key, []]));
    await done(tx);
  }

  /** `drop` in the background: failing only means the copy is discarded again next time. */
  forget(scope) {
    this.drop(scope).catch(() => {});
  }

  /**
   * One transaction: `puts` ([bucket, bytes, ends] triples; an empty
   * bucket is deleted) and, when `meta` (`{ rv, count, buckets, savedAt }`)
   * is given, what the copy is current at, its entries and its layout. `base` is the scope without its cache shape; with
   * `sweep`, copies of the same base under another shape (a transform
   * changed by a new deploy) that nobody writes now are deleted in the same
   * transaction, and so are the least recently written copies of other
   * scopes beyond `maxCopies`.
   */
  async write(scope, puts, meta, base, sweep) {
    const key = await this.key(scope);
    const prefix = await this.prefix;
    // A copy another tab or factory writes (it holds the copy's lock) is in
    // use: only the others are swept.
    const held = new Set();
    if (sweep) {
      const locks = await globalThis.navigator?.locks?.query?.().catch(() => undefined);
      for (const l of locks?.held ?? []) held.add(l.name);
    }
    const db = await this.open();
    const tx = db.transaction([META, OBJECTS], 'readwrite');
    const finished = done(tx);
    try {
      const objects = tx.objectStore(OBJECTS);
      for (const [b, bytes, ends] of puts) {
        if (ends.length) objects.put({ bytes, ends }, [key, b]);
        else objects.delete([key, b]);
      }
      if (meta !== undefined) {
        const { rv, count, buckets, savedAt } = meta;
        tx.objectStore(META).put({ format: FORMAT, schema: SCHEMA, rv, count, buckets, savedAt, base }, key);
      }
      if (sweep) {
        const meta = tx.objectStore(META);
        // Only this identity's copies (keys start with its prefix).
        const cursor = meta.openCursor(IDBKeyRange.bound(`${prefix}|`, `${prefix}|\uffff`));
        const others = [];
        const remove = (k) => {
          meta.delete(k);
          objects.delete(IDBKeyRange.bound([k], [k, []]));
        };
        cursor.onsuccess = () => {
          const c = cursor.result;
          if (c === null) {
            // Newest first; this scope's own copy is one of the kept.
            others.sort((a, b) => b.savedAt - a.savedAt);
            for (const o of others.slice(Math.max(0, this.maxCopies - 1))) remove(o.key);
            return;
          }
          if (c.key !== key && !held.has(`${this.dbName}|${c.key}`)) {
            if (c.value?.base === base) remove(c.key);
            else others.push({ key: c.key, savedAt: Number(c.value?.savedAt) || 0 });
          }
          c.continue();
        };
      }
    } catch (e) {
      // Nothing of a half-built batch may be committed.
      finished.catch(() => {});
      tx.abort();
      throw e;
    }
    await finished;
  }
}

/**
 * Delete every stored copy kept under `name` (every identity's): for logout.
 * Every other tab and worker persisting under that name is told first, and
 * stops.
 */
export async function clearStore(name) {
  if (typeof indexedDB === 'undefined') return;
  if (typeof BroadcastChannel === 'function') {
    const channel = new BroadcastChannel(`kubewasm:${name}`);
    channel.postMessage('cleared');
    channel.close();
  }
  try {
    await request(indexedDB.deleteDatabase(`kubewasm:${name}`));
  } catch (e) {
    // Where storage is denied (an opaque origin, say) nothing can have been stored.
    if (e?.name === 'SecurityError') return;
    throw e;
  }
}

/** Delete `name`'s stored copies without telling anyone, in the background (told of a clear: a write of ours may have crossed it). */
export function dropStore(name) {
  if (typeof indexedDB === 'undefined') return;
  request(indexedDB.deleteDatabase(`kubewasm:${name}`)).catch(() => {});
}
