#!/usr/bin/env bash
# `make demo`: builds the dashboard (the Vite app in www/, on the package in
# pkg/) into target/demo-site and serves it with kubewasm-sim, same-origin,
# on a seeded, churning cluster. Ctrl-C stops everything.
# Scale: DEMO_PODS (3000), DEMO_NAMESPACES (20), DEMO_CHURN (writes/s, 20), DEMO_SEED (1).
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-8080}
cargo build -q --release -p kubewasm-sim
scripts/site.sh
echo "kubewasm demo: open http://127.0.0.1:$port/ (Ctrl-C stops)"
exec target/release/kubewasm-sim --port "$port" --static-dir target/demo-site \
  --namespaces "${DEMO_NAMESPACES:-20}" --pods "${DEMO_PODS:-3000}" \
  --churn-per-sec "${DEMO_CHURN:-20}" --seed "${DEMO_SEED:-1}"
