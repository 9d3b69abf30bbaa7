#!/usr/bin/env bash
# Usage: scripts/with-sim.sh [sim flags...] -- command [args...]
# Starts kubewasm-sim on a free port, exports KUBEWASM_SIM_URL and
# KUBEWASM_SIM_TOKEN for the command, and stops the sim by PID however the
# command ends. Exits with the command's status.
set -euo pipefail
cd "$(dirname "$0")/.."
sim_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sim_args+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "usage: $0 [sim flags] -- command" >&2; exit 2; }

cargo build -q --release -p kubewasm-sim
token=${KUBEWASM_SIM_TOKEN:-kubewasm-test-token}
out=$(mktemp)
target/release/kubewasm-sim --port 0 --token "$token" "${sim_args[@]}" >"$out" &
sim_pid=$!
cleanup() { kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; rm -f "$out"; }
trap cleanup EXIT INT TERM

url=""
for _ in $(seq 1 200); do
  url=$(sed -n 's/^LISTENING \(http[^ ]*\).*/\1/p' "$out" | head -n1)
  [ -n "$url" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { echo "kubewasm-sim exited before listening" >&2; exit 1; }
  sleep 0.05
done
[ -n "$url" ] || { echo "kubewasm-sim did not report its address" >&2; exit 1; }
echo "[with-sim] kubewasm-sim at $url (pid $sim_pid)" >&2
export KUBEWASM_SIM_URL="$url" KUBEWASM_SIM_TOKEN="$token"
set +e
"$@"
status=$?
set -e
exit $status
