#!/usr/bin/env bash
# A copy of the built package whose .wasm keeps its function names, for CPU
# profiles that name wasm functions (BENCHMARKS.md, "what was tried"):
#   scripts/profiling-pkg.sh OUT_DIR
# The package's own .wasm has no name section (wasm-opt drops it); this one is
# the same release build passed through wasm-bindgen only, so the package's
# JS glue (identical for the same build) loads it unchanged. Run after
# scripts/build-pkg.sh, which leaves that release build in target/.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/profiling-pkg.sh OUT_DIR}
export PATH="$HOME/.cargo/bin:$PATH"
wasm=target/wasm32-unknown-unknown/release/kubewasm.wasm
[ -f pkg/web/kubewasm_bg.wasm ] && [ -f "$wasm" ] || { echo "profiling-pkg: run scripts/build-pkg.sh first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wasm-bindgen --weak-refs --target web --out-dir "$tmp" --out-name kubewasm "$wasm"
rm -rf "$out"
cp -R pkg "$out"
cp "$tmp/kubewasm_bg.wasm" "$out/web/kubewasm_bg.wasm"
echo "profiling-pkg: $out ($(wc -c <"$out/web/kubewasm_bg.wasm") B .wasm with names)"
