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
