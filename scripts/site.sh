#!/usr/bin/env bash
# Builds the dashboard (www/, a Vite + TypeScript app that depends on the
# built package in pkg/ through `file:../pkg`) into target/demo-site.
# Run `make build` (scripts/build-pkg.sh) first.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f pkg/package.json ] || { echo "pkg/ is missing: run make build first" >&2; exit 1; }
cd www
# Install once per lockfile change; `file:../pkg` is a symlink, so a rebuilt
# package is picked up without reinstalling.
{ [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] && [ -e node_modules/kubewasm/package.json ]; } \
  || npm ci --no-audit --no-fund --loglevel=error
npm run --silent build -- --outDir ../target/demo-site --emptyOutDir --logLevel warn
cd ..
# The no-bundler example, beside a copy of the package it imports.
mkdir -p target/demo-site/plain
cp examples/plain-page/index.html target/demo-site/plain/
cp -R pkg target/demo-site/plain/pkg
echo "built the dashboard in target/demo-site"
