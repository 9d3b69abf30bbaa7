#!/usr/bin/env bash
# Serves the dashboard from www/ with the built package on the embedded
# simulated cluster, same-origin (the sim serves the static files too).
# Ctrl-C stops everything. Scale with DEMO_PODS, DEMO_NAMESPACES, DEMO_CHURN.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-8080}
cargo build -q --release -p kubewasm-sim
scripts/site.sh
site=target/demo-site
echo "kubewasm demo: open http://127.0.0.1:$port/ (Ctrl-C stops)"
exec target/release/kubewasm-sim --port "$port" --static-dir "$site" \
  --namespaces "${DEMO_NAMESPACES:-20}" --pods "${DEMO_PODS:-3000}" \
  --churn-per-sec "${DEMO_CHURN:-20}" --seed "${DEMO_SEED:-1}"
