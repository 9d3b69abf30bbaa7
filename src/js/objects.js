// Materializing cached objects in JS. Freezing runs here rather than from Rust:
// one call per object instead of two boundary crossings per nested value.
function freeze(v) {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const k in v) freeze(v[k]);
  }
  return v;
}

export function parseFrozen(text) {
  return freeze(JSON.parse(text));
}

// Make a wasm-bindgen iterator object usable with `for await`.
export function asyncIterable(it) {
  it[Symbol.asyncIterator] = function () {
    return this;
  };
  return it;
}
