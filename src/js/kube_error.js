// `KubeError` is a real subclass of `Error` (stack traces, `instanceof`), which
// wasm-bindgen cannot declare from Rust. The package entry re-exports it.
export class KubeError extends Error {
  constructor(message, code, reason, status, position) {
    super(message);
    this.name = 'KubeError';
    this.code = code;
    this.reason = reason;
    this.status = status;
    if (position !== undefined) this.position = position;
  }
}

export function makeKubeError(message, code, reason, status, position) {
  return new KubeError(message, code, reason, status, position);
}

// What the web glue's `wasm` holds until `init()` has run (scripts/build-pkg.sh
// puts it there): a call made too early says what to do, where the glue would
// fail reading a property of `undefined`.
export const notInitialized = new Proxy({}, {
  get(_, name) {
    if (typeof name !== 'string' || name === 'then') return undefined;
    throw new KubeError("kubewasm is not initialized: await init() (the package's default export) before using it, and again if it failed", 0, 'Invalid');
  },
});

// The poisoned state (why: src/js/poison.rs). A panic or trap leaves Rust's
// state half-changed (RefCells stay borrowed), so once one happened no call
// may enter the module again. scripts/build-pkg.sh makes the generated glue
// store `guardExports(exports)` in place of the instance's exports, so every
// call into wasm (exports, methods, getters, closures run by timers, promises
// and cached objects) passes through `guard`.

// { message, cause } from the first panic or trap on.
let poisoned;
// The reject functions of promises returned by wasm that are still pending:
// a trap ends the task that would have settled them, so they reject instead.
const pending = new Set();
// Entry points that become no-ops once poisoned: frees and destructors (so
// finalizers and cleanup code never throw) and closures, which the host calls
// from timers, promise reactions and the like, where an error could only
// surface as an uncaught one (which exits a Node process) long after the trap
// was reported. The one closure user code calls for a value, a cached
// object's member source, reports the poisoning itself (objects.js). A
// quiet call returns an empty array, which the glue around a closure reads
// as "no error" whether it expects a value or an [value, isError] pair.
const QUIET_RESULT = Object.freeze([]);
const QUIET = /_free$|^__wbindgen_destroy_closure$|^__externref_table_dealloc$|^__externref_drop_slice$|^wasm_bindgen__convert__closures_/;

// Called by the panic hook, just before the trap the panic ends in.
export function recordPanic(message) {
  if (poisoned === undefined) poisoned = { message: `kubewasm panicked: ${message}`, cause: undefined };
}

/** Throws the poisoned module's `KubeError` if a panic or trap happened. */
export function throwIfPoisoned() {
  if (poisoned !== undefined) throw poisonedError();
}

function poisonedError() {
  const e = new KubeError(
    `${poisoned.message}. The module is poisoned: every call fails from now on; reload the page or restart the process.`,
    0,
    'Poisoned',
  );
  if (poisoned.cause !== undefined) Object.defineProperty(e, 'cause', { value: poisoned.cause, configurable: true, writable: true });
  return e;
}

// A WebAssembly trap (unreachable: a panic or an out-of-memory abort; out of
// bounds; …) or a stack overflow (RangeError in V8, InternalError in
// Firefox). Any other exception is the JS error it was (e.g. a
// wasm-bindgen borrow error thrown before the call did anything).
function isTrap(e) {
  return e instanceof WebAssembly.RuntimeError || e instanceof RangeError || (e instanceof Error && e.name === 'InternalError');
}

function isPoisonedError(e) {
  return e instanceof KubeError && e.reason === 'Poisoned';
}

// Marks the module poisoned by `cause` (if not already) and returns the error
// to throw; pending promises reject with the same.
function poison(cause, memory) {
  if (poisoned === undefined) {
    const mib = memory ? Math.round(memory.buffer.byteLength / 1048576) : '?';
    poisoned = {
      message: `kubewasm trapped without a panic (out of memory, a stack overflow or an abort; wasm memory ${mib} MiB): ${cause}`,
      cause,
    };
  } else if (poisoned.cause === undefined && cause !== undefined && !isPoisonedError(cause)) {
    poisoned.cause = cause;
  }
  for (const reject of pending) reject(poisonedError());
  pending.clear();
  return poisonedError();
}

function track(promise) {
  return new Promise((resolve, reject) => {
    pending.add(reject);
    promise.then(
      (v) => {
        pending.delete(reject);
        resolve(v);
      },
      (e) => {
        pending.delete(reject);
        reject(e);
      },
    );
  });
}

// A class's `free` export, which the glue calls with a null pointer once the
// object was freed.
const FREE = /^__wbg_[a-z0-9]+_free$/;
// What the glue's conversion throws for a method called on a freed object.
const NULL_POINTER = 'null pointer passed to rust';

function guard(f, quiet, memory, free) {
  return (...args) => {
    if (poisoned !== undefined) {
      if (quiet) return QUIET_RESULT;
      throw poisonedError();
    }
    // A second `free()` (or one after `[Symbol.dispose]`) does nothing, as
    // disposing twice does elsewhere.
    if (free && args[0] === 0) return undefined;
    let ret;
    try {
      ret = f(...args);
    } catch (e) {
      if (poisoned === undefined && e instanceof Error && e.message === NULL_POINTER) {
        throw new KubeError('this object was freed: free() has run, so it cannot be used any more', 0, 'Invalid');
      }
      if (poisoned === undefined && !isTrap(e)) throw e;
      if (isPoisonedError(e)) {
        poison(undefined, memory);
        throw e;
      }
      throw poison(e, memory);
    }
    // A nested call trapped and JS code between caught its error: this call
    // ran on in a poisoned module, so its result cannot be trusted either.
    if (poisoned !== undefined) throw poison(undefined, memory);
    return ret instanceof Promise ? track(ret) : ret;
  };
}

/**
 * The instance's exports with every function guarded (see above), after
 * installing the panic hook. Only the package's patched glue calls this.
 */
export function guardExports(exports) {
  const guarded = {};
  for (const name of Object.keys(exports)) {
    const v = exports[name];
    guarded[name] = typeof v === 'function' ? guard(v, QUIET.test(name), exports.memory, FREE.test(name)) : v;
  }
  exports.__kubewasm_install_panic_hook?.();
  return guarded;
}
