#!/usr/bin/env bash
# Usage: scripts/wasm-test.sh node|page|worker [--release] [--features F] [--crate DIR] test_name...
# (--crate: another crate of the workspace, e.g. examples/rust-app; default: kubewasm.)
# Runs wasm_bindgen_test suites on one host. The runner silently skips suites
# configured for another host, so this forces the host and fails on a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$1; shift
flags=(); cargo_flags=(); tests=(); crate=.
while [ $# -gt 0 ]; do
  case "$1" in
    --release) flags+=(--release) ;;
    --features) cargo_flags+=(--features "$2"); shift ;;
    --crate) crate=$2; shift ;;
    --) shift; break ;;
    *) tests+=(--test "$1") ;;
  esac
  shift
done
case "$host" in
  node) mode=(--node)
    # Node 20 and 21 have a global WebSocket only behind a flag; the
    # WebSocket watch suites need it (22 and later have it by default).
    if ! node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null \
      && NODE_OPTIONS=--experimental-websocket node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' 2>/dev/null; then
      export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--experimental-websocket"
    fi ;;
  page) mode=(--headless --chrome); export WASM_BINDGEN_USE_BROWSER=1 ;;
  worker) mode=(--headless --chrome); export WASM_BINDGEN_USE_DEDICATED_WORKER=1 ;;
  *) echo "unknown host $host" >&2; exit 2 ;;
esac
export KUBEWASM_EXPECT_HOST=$host CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
# wasm-pack's own flags, then the crate path, then what it passes to cargo.
wasm-pack test "${mode[@]}" "${flags[@]}" "$crate" "${cargo_flags[@]}" "${tests[@]}" ${1:+-- "$@"} 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
if grep -q "so skipping" "$log"; then
  echo "wasm-test: a suite was skipped instead of run on $host" >&2
  exit 1
fi
exit "$status"
