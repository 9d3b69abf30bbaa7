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
// Only the top level and `metadata` are frozen: a deep freeze walks every
// nested value and costs more than the parse itself on a busy watch, while
// freezing the top level already stops the common mistake of assigning
// fields on a shared cached object.
export function lazyObject(text, layout) {
  const n = layout.length;
  if (n === 0) return parseFrozen(text);
  const obj = {};
  // Once every member has been parsed the text is dropped, so an object
  // read in full costs no more memory than an eagerly parsed one.
  let unparsed = n >> 2;
  for (let i = 0; i + 3 < n; i += 4) {
    const vs = layout[i + 2];
    const ve = layout[i + 3];
    let key = text.slice(layout[i], layout[i + 1]);
    if (key.indexOf('\\') >= 0) key = JSON.parse('"' + key + '"');
    const isMeta = key === 'metadata';
    let parsed = false;
    let value;
    // Configurable until the freeze below, so a duplicate key redefines the
    // member (the last one wins, as with JSON.parse) instead of throwing.
    Object.defineProperty(obj, key, {
      enumerable: true,
      configurable: true,
      get() {
        if (!parsed) {
          value = JSON.parse(text.slice(vs, ve));
          if (isMeta && value !== null && typeof value === 'object') Object.freeze(value);
          parsed = true;
          if (--unparsed === 0) text = null;
        }
        return value;
      },
    });
  }
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
