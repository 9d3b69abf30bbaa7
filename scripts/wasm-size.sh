#!/usr/bin/env bash
# The npm package's .wasm must stay within its gzip budget (`make test-size`,
# part of `make test`): prints each target's module size raw and `gzip -9`, and
# fails when either is over the budget or names a path of the building machine.
# Run after scripts/build-pkg.sh.
#
# The budget is the size reached in the last size round plus 2 KiB of slack
# (BENCHMARKS.md, "Package size"); lower it when the module shrinks, so it
# cannot silently grow back.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=306015
status=0
for target in web bundler; do
  wasm="pkg/$target/kubewasm_bg.wasm"
  [ -f "$wasm" ] || { echo "wasm-size: $wasm missing; run scripts/build-pkg.sh" >&2; exit 1; }
  raw=$(wc -c <"$wasm")
  gz=$(gzip -9 -c "$wasm" | wc -c)
  printf 'wasm-size: %s %d B raw, %d B gzip (budget %d B)\n' "$wasm" "$raw" "$gz" "$budget"
  if [ "$gz" -gt "$budget" ]; then
    echo "wasm-size: $wasm is $((gz - budget)) B over its gzip budget" >&2
    status=1
  fi
  # Nor may it carry the building machine's home directory (panic locations
  # name source files; scripts/build-pkg.sh remaps the crates' registry path).
  if grep -qaF "${CARGO_HOME:-$HOME/.cargo}" "$wasm" || grep -qaF "$PWD" "$wasm"; then
    echo "wasm-size: $wasm names a path of the machine that built it" >&2
    status=1
  fi
done
exit "$status"
