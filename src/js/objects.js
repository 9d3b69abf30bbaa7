// Materializing cached objects in JS, once per object version.
//
// `lazyObject` builds a frozen object whose top-level members are getters:
// each member's JSON text is parsed on first access and kept. A handler that
// reads `metadata.name` parses only `metadata`, not `spec` and `status`
// (most of a pod); JSON.stringify, spread and structuredClone still see every
// member because the getters are own and enumerable. `layout` holds UTF-16
// offsets into `text`, four per member (key start/end, value start/end); it
// may be a view on wasm memory, so it is read at once and not kept.
//
// The getters are shared: one function per member name for every object,
// reading the object's text and parsed values from a hidden, non-enumerable
// slot. Objects built from the same member order then share one hidden class
// in the engine, which makes building one about twice as fast as with a
// closure per member, and leaves less for the garbage collector.
//
// Only the top level and `metadata` are frozen: a deep freeze walks every
// nested value and costs more than the parse itself on a busy watch, while
// freezing the top level already stops the common mistake of assigning
// fields on a shared cached object.
const STATE = Symbol('kubewasm.object');
const getters = new Map();

function memberGetter(key) {
  let get = getters.get(key);
  if (get === undefined) {
    get = function () {
      const s = this[STATE];
      return s === undefined ? undefined : s.member(key);
    };
    getters.set(key, get);
  }
  return get;
}

// The parse state of one object: its text until every member is parsed,
// member names, value offsets (two per member) and parsed values.
class Members {
  constructor(text, keys, spans, distinct) {
    this.text = text;
    this.keys = keys;
    this.spans = spans;
    this.values = new Array(keys.length);
    this.unparsed = distinct;
  }

  member(key) {
    // The last occurrence wins for a duplicate key, as with JSON.parse.
    const i = this.keys.lastIndexOf(key);
    let value = this.values[i];
    // JSON.parse never yields `undefined`, so it marks "not parsed yet".
    if (value === undefined && i >= 0) {
      value = JSON.parse(this.text.slice(this.spans[2 * i], this.spans[2 * i + 1]));
      if (key === 'metadata' && value !== null && typeof value === 'object') Object.freeze(value);
      this.values[i] = value;
      // Once every member has been parsed the text is dropped, so an object
      // read in full costs no more memory than an eagerly parsed one.
      if (--this.unparsed === 0) this.text = null;
    }
    return value;
  }
}

export function lazyObject(text, layout) {
  const n = layout.length >> 2;
  if (n === 0) return parseFrozen(text);
  const obj = {};
  const keys = new Array(n);
  const spans = new Array(2 * n);
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    let key = text.slice(layout[4 * i], layout[4 * i + 1]);
    if (key.indexOf('\\') >= 0) key = JSON.parse('"' + key + '"');
    keys[i] = key;
    spans[2 * i] = layout[4 * i + 2];
    spans[2 * i + 1] = layout[4 * i + 3];
    if (keys.indexOf(key) === i) distinct++;
    // Configurable until the freeze below, so a duplicate key redefines the
    // member instead of throwing.
    Object.defineProperty(obj, key, { enumerable: true, configurable: true, get: memberGetter(key) });
  }
  Object.defineProperty(obj, STATE, { value: new Members(text, keys, spans, distinct) });
  return Object.freeze(obj);
}

// The whole object parsed at once (no layout known), frozen like lazyObject's.
export function parseFrozen(text) {
  const obj = JSON.parse(text);
  if (obj !== null && typeof obj === 'object') {
    if (obj.metadata && typeof obj.metadata === 'object') Object.freeze(obj.metadata);
    Object.freeze(obj);
  }
  return obj;
}

// Make a wasm-bindgen iterator object usable with `for await`.
export function asyncIterable(it) {
  it[Symbol.asyncIterator] = function () {
    return this;
  };
  return it;
}

