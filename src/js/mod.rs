//! The wasm-bindgen surface exported to TypeScript.
