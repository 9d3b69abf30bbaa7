#!/usr/bin/env bash
# What kubewasm's JS surface (the `js` feature) adds to a downstream cdylib:
# builds examples/rust-app for the web without and with it (the same release
# profile and pinned wasm-opt pass as the npm package) and prints the .wasm
# and JS glue sizes, raw and gzip -9. Used by `make bench` (BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
wasm_opt=scripts/tools/node_modules/.bin/wasm-opt
[ -x "$wasm_opt" ] || { echo "rust-app-size: $wasm_opt missing; run scripts/deps.sh" >&2; exit 1; }
out=target/rust-app-size
rm -rf "$out"
size() { printf '%8d B raw %8d B gzip' "$(wc -c <"$1")" "$(gzip -9 -c "$1" | wc -c)"; }
for variant in without-js with-js; do
  features=(); [ "$variant" = with-js ] && features=(--features kubewasm-js)
  wasm-pack --quiet build --release --target web --out-dir "../../$out/$variant" --out-name app examples/rust-app "${features[@]}" >/dev/null
  wasm="$out/$variant/app_bg.wasm"
  "$wasm_opt" -Os --skip-pass=inlining-optimizing --strip-debug --strip-producers \
    --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
    --enable-bulk-memory --enable-reference-types --enable-multivalue \
    "$wasm" -o "$wasm.opt"
  mv "$wasm.opt" "$wasm"
  exports=$(grep -c '^export ' "$out/$variant/app.d.ts" || true)
  printf '%-11s wasm %s | glue %s | %s exports\n' "$variant" "$(size "$wasm")" "$(size "$out/$variant/app.js")" "$exports"
done
