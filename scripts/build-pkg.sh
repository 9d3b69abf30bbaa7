#!/usr/bin/env bash
# Builds the npm package: wasm-pack for the `web` target (direct browser use,
# workers, Node via fetch of the .wasm) and the `bundler` target, then merges
# pkg-template/ (package.json, README, typings, thin TS wrapper) on top.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
rm -rf pkg
wasm-pack build --release --weak-refs --target web --out-dir pkg/web --out-name kubewasm . 
wasm-pack build --release --weak-refs --target bundler --out-dir pkg/bundler --out-name kubewasm .
# wasm-pack writes its own package.json/README/.gitignore per target; the
# package's top level comes from pkg-template/.
rm -f pkg/web/package.json pkg/bundler/package.json pkg/web/.gitignore pkg/bundler/.gitignore pkg/web/README.md pkg/bundler/README.md
cp -R pkg-template/. pkg/
# The generic class declarations sit beside each target's generated typings.
for target in web bundler; do cp pkg/typed.d.ts "pkg/$target/typed.d.ts"; done
rm pkg/typed.d.ts
# Each target's entry re-exports the generated API plus `KubeError`, which
# lives in a JS snippet whose folder name carries a content hash.
for target in web bundler; do
  snippet=$(cd "pkg/$target" && ls snippets/*/src/js/kube_error.js)
  exports="export * from './kubewasm.js';"
  # The web target's default export is its init function.
  [ "$target" = web ] && exports="$exports
export { default } from './kubewasm.js';"
  printf '%s\n%s\n' "$exports" \
    "export { KubeClient, ResourceClient, InformerFactory, Informer, Lister, ScopedView, type InformerHandlers } from './typed.js';" \
    > "pkg/$target/index.d.ts"
  printf '%s\nexport { KubeError } from %s;\n' "$exports" "'./$snippet'" > "pkg/$target/index.js"
done
echo "built pkg/ ($(du -sh pkg | cut -f1))"
