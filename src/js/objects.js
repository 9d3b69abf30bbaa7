// Materializing cached objects in JS, once per object version.
//
// `lazyObject` builds a frozen object whose top-level members are getters:
// the first read of a member asks the cache (in wasm) for that member's JSON
// text, parses it and keeps the value. A handler that reads `metadata.name`
// parses only `metadata`, not `spec` and `status` (most of a pod), and an
// object never holds a copy of its whole text in the JS heap. JSON.stringify,
// spread and structuredClone still see every member because the getters are
// own and enumerable.
//
// The getters are shared: one function per member name for every object,
// reading a hidden, non-enumerable parse state. Objects built from the same
// member order then share one hidden class in the engine, which makes them
// cheaper to build and smaller than with a closure per member.
//
// Only the top level and `metadata` (all of it) are frozen: a deep freeze
// of `spec` and `status` walks every nested value and costs more than the
// parse itself on a busy watch, while freezing the top level already stops
// the common mistake of assigning fields on a shared cached object.
import { throwIfPoisoned } from './kube_error.js';

const STATE = Symbol('kubewasm.object');
const utf8 = new TextDecoder();
const getters = new Map();
// (id, index) => the member's JSON text while its version is cached
// (set once by the wasm module).
let memberSource = () => undefined;

export function setMemberSource(f) {
  memberSource = f;
}

function memberGetter(key) {
  let get = getters.get(key);
  if (get === undefined) {
    get = function () {
      const s = this[STATE];
      return s === undefined ? undefined : s.member(key);
    };
    // Bounded: member names are few (a hostile server's others get their own).
    if (getters.size < 4096) getters.set(key, get);
  }
  return get;
}

// Member names by the keys text the cache sends (names as written, escapes
// included, separated by U+0001), decoded once per distinct member order.
const keyLists = new Map();

function keysOf(keysText) {
  let keys = keyLists.get(keysText);
  if (keys === undefined) {
    keys = keysText.split('\u0001').map((k) => (k.indexOf('\\') >= 0 ? JSON.parse('"' + k + '"') : k));
    // Bounded: member orders are few (one or two per kind) in practice.
    if (keyLists.size < 4096) keyLists.set(keysText, keys);
  }
  return keys;
}

// The parse state of one object: the id of its cached version, member names,
// parsed values, and the text of unparsed members once the version has left
// the cache (see adoptMembers).
class Members {
  constructor(id, keys) {
    this.id = id;
    this.keys = keys;
    this.values = new Array(keys.length);
    // Set by adoptMembers: the handed-over UTF-8 bytes, per member index
    // its start and end in them, and how many are still unread (the bytes
    // go with the last one).
    this.bytes = null;
    this.spans = null;
    this.unread = 0;
  }

  member(key) {
    // The last occurrence wins for a duplicate key, as with JSON.parse.
    const i = this.keys.lastIndexOf(key);
    let value = this.values[i];
    // JSON.parse never yields `undefined`, so it marks "not parsed yet".
    if (value === undefined && i >= 0) {
      let text;
      // Handed over (see adoptMembers): cut out, and decoded, when read.
      if (this.spans !== null && this.spans[2 * i + 1] !== undefined) {
        const [b, from, to] = [this.bytes, this.spans[2 * i], this.spans[2 * i + 1]];
        text = utf8.decode(b.subarray(from, to));
        this.spans[2 * i + 1] = undefined;
        if (--this.unread === 0) this.bytes = this.spans = null;
      } else {
        // The source is a closure into wasm, which does nothing once the
        // module is poisoned: say so instead.
        throwIfPoisoned();
        text = memberSource(this.id, i);
      }
      if (text === undefined) return undefined;
      value = JSON.parse(text);
      if (key === 'metadata') freezeDeep(value);
      this.values[i] = value;
    }
    return value;
  }
}

// The keys of a diff's list, sent as one string of `n` keys joined by
// newlines: one string crossing instead of one per key.
export function splitLines(text, n) {
  return n === 0 ? [] : text.split('\n');
}

// A snapshot array patched: a copy of `old` with, at each position `at[i]`
// (last first), the element there replaced by `objs[i]` (`replace[i]` 1),
// removed (1, `objs[i]` undefined), or `objs[i]` inserted before it (0);
// `old` itself when that changes nothing (the same versions).
export function patchedSnapshot(old, at, replace, objs) {
  let out;
  for (let i = 0; i < at.length; i++) {
    // Positions go down, so what is at `at[i]` is still `old`'s.
    if (replace[i] && objs[i] !== undefined && old[at[i]] === objs[i]) continue;
    out ??= old.slice();
    if (!replace[i]) out.splice(at[i], 0, objs[i]);
    else if (objs[i] === undefined) out.splice(at[i], 1);
    else out[at[i]] = objs[i];
  }
  return out === undefined ? old : Object.freeze(out);
}

// Whether two snapshot arrays hold the same objects in the same order.
export function sameElements(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function lazyObject(keysText, id) {
  const keys = keysOf(keysText);
  const obj = {};
  for (let i = 0; i < keys.length; i++) {
    // Configurable until the freeze below, so a duplicate key redefines the
    // member instead of throwing.
    Object.defineProperty(obj, keys[i], { enumerable: true, configurable: true, get: memberGetter(keys[i]) });
  }
  Object.defineProperty(obj, STATE, { value: new Members(id, keys) });
  return Object.freeze(obj);
}

// The text of the members not read yet, handed over as the object's version
// leaves the cache: `bytes` (UTF-8, a view of wasm memory valid only during
// this call) holds them, `triples` each one's index and its start and end
// byte offsets in `bytes`. They are copied out as bytes and decoded only if
// read: on a watch flood every replaced version comes here, and its object
// is usually never read again.
export function adoptMembers(obj, bytes, triples) {
  adopt(obj, bytes, triples);
}

// Handed-over bytes are copied into shared slabs: an ArrayBuffer per replaced
// version costs an allocation each, and decoding every version's text into a
// string at once (most are never read) was a fifth of a page's flood. An
// object the app keeps holds its slab: at most SLAB bytes beyond its own
// text; a large stretch gets a buffer of its own.
const SLAB = 64 * 1024;
let slab = null;
let slabUsed = 0;

function keep(bytes) {
  const n = bytes.length;
  if (n > SLAB / 4) return bytes.slice();
  if (slab === null || slabUsed + n > SLAB) {
    slab = new Uint8Array(SLAB);
    slabUsed = 0;
  }
  const view = slab.subarray(slabUsed, slabUsed + n);
  view.set(bytes);
  slabUsed += n;
  return view;
}

function adopt(obj, bytes, triples) {
  const s = obj[STATE];
  if (s === undefined) return;
  // One copy and one array of offsets; a view per member only when read.
  const spans = [];
  let unread = 0;
  for (let t = 0; t + 2 < triples.length; t += 3) {
    const i = triples[t];
    if (s.values[i] === undefined && spans[2 * i + 1] === undefined) {
      spans[2 * i] = triples[t + 1];
      spans[2 * i + 1] = triples[t + 2];
      unread++;
    }
  }
  if (unread === 0) return;
  s.bytes = keep(bytes);
  s.spans = spans;
  s.unread = unread;
}

// Freeze a parsed value and everything in it (metadata: small, and shared by
// every handler and reader of the version, so one cannot change another's).
function freezeDeep(value) {
  if (value === null || typeof value !== 'object') return value;
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    Object.freeze(v);
    for (const k in v) {
      const m = v[k];
      if (m !== null && typeof m === 'object') stack.push(m);
    }
  }
  return value;
}

// The whole object parsed at once (no layout known), frozen like lazyObject's.
export function parseFrozen(text) {
  const obj = JSON.parse(text);
  if (obj !== null && typeof obj === 'object') {
    freezeDeep(obj.metadata);
    Object.freeze(obj);
  }
  return obj;
}

// Make a wasm-bindgen iterator object usable with `for await`, with calls of
// `next()` queued as the async iterator protocol has them: callers that do
// not wait for each other get one item each, in order. `return()` is not
// queued, so it still ends a pending `next()`.
export function asyncIterable(it) {
  const next = it.next;
  let last = Promise.resolve();
  it.next = function () {
    const mine = last.then(() => next.call(this));
    last = mine.catch(() => {});
    return mine;
  };
  it[Symbol.asyncIterator] = function () {
    return this;
  };
  return it;
}

// A log's lines: `for await`, or `readable()` for a `ReadableStream`.
export function lineStream(it) {
  asyncIterable(it);
  it.readable = function () {
    return readableOf(this);
  };
  return it;
}

// A `ReadableStream` pulling from an async iterator; cancelling it ends the iterator.
function readableOf(it) {
  return new ReadableStream({
    async pull(controller) {
      const r = await it.next();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel() {
      return it.return();
    },
  }, { highWaterMark: 0 });
}
