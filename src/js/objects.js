// Materializing cached objects in JS: the engine's own JSON.parse, once per
// object version. Only the top level and `metadata` are frozen: a deep freeze
// walks every nested value and costs more than the parse itself on a busy
// watch (measured: tests/compare), while freezing the top level already stops
// the common mistake of assigning fields on a shared cached object.
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
