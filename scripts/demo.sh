#!/usr/bin/env bash
# `make demo`: builds the dashboard (the Vite app in www/, on the package in
# pkg/) into target/demo-site and serves it with kubewasm-sim, same-origin,
# on a seeded, churning cluster. Ctrl-C stops everything.
# Port: DEMO_PORT (8080). Scale: DEMO_PODS (3000), DEMO_NAMESPACES (20),
# DEMO_CHURN (writes/s, 20), DEMO_SEED (1).
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-${DEMO_PORT:-8080}}

# Checked before the build (minutes on a cold tree) and before the URL is
# printed, so a busy port is reported as what to do, not as a bind error.
port_free() {
  node -e 'const s = require("node:net").createServer();
s.once("error", () => process.exit(1));
s.listen(Number(process.argv[1]), "127.0.0.1", () => s.close(() => process.exit(0)));' "$1"
}
if ! port_free "$port"; then
  echo "kubewasm demo: port $port on 127.0.0.1 is already in use (a demo still running?)." >&2
  echo "Stop whatever holds it, or pick another port: DEMO_PORT=8081 make demo" >&2
  exit 1
fi

cargo build -q --release -p kubewasm-sim
scripts/site.sh
echo "kubewasm demo: open http://127.0.0.1:$port/ (Ctrl-C stops)"
exec target/release/kubewasm-sim --port "$port" --static-dir target/demo-site \
  --namespaces "${DEMO_NAMESPACES:-20}" --pods "${DEMO_PODS:-3000}" \
  --churn-per-sec "${DEMO_CHURN:-20}" --seed "${DEMO_SEED:-1}"
