#!/usr/bin/env bash
# Builds the npm package: wasm-pack for the `web` target (direct browser use,
# workers, Node via fetch of the .wasm) and the `bundler` target, then merges
# pkg-template/ (package.json, README, typings, thin TS wrapper) on top.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
rm -rf pkg
# Panic locations name their source files: the crates' registry path on the
# building machine (its home directory) is written as `crates/` instead, so a
# published module does not carry it.
export RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}/registry/src=crates"
wasm-pack build --release --weak-refs --target web --out-dir pkg/web --out-name kubewasm . 
wasm-pack build --release --weak-refs --target bundler --out-dir pkg/bundler --out-name kubewasm .
# wasm-opt from binaryen's npm release (scripts/tools, installed by scripts/deps.sh):
# wasm-pack's own wasm-opt stays off (Cargo.toml). Without `-g` it also drops the
# name section. Binaryen's inlining shrinks the raw module but grows its gzip
# size, so that pass is skipped. The features are the ones rustc's wasm32 target
# enables (the module's target_features section).
wasm_opt=scripts/tools/node_modules/.bin/wasm-opt
[ -x "$wasm_opt" ] || { echo "build-pkg: $wasm_opt missing; run scripts/deps.sh" >&2; exit 1; }
for target in web bundler; do
  wasm="pkg/$target/kubewasm_bg.wasm"
  "$wasm_opt" -Os --skip-pass=inlining-optimizing --strip-debug --strip-producers \
    --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
    --enable-bulk-memory --enable-reference-types --enable-multivalue \
    "$wasm" -o "$wasm.opt"
  mv "$wasm.opt" "$wasm"
done
# wasm-pack writes its own package.json/README/.gitignore per target; the
# package's top level comes from pkg-template/.
rm -f pkg/web/package.json pkg/bundler/package.json pkg/web/.gitignore pkg/bundler/.gitignore pkg/web/README.md pkg/bundler/README.md
cp -R pkg-template/. pkg/
# The generic class declarations sit beside each target's generated typings.
# An empty `typed.js` that names them as its types: Deno's type check resolves
# index.d.ts's `./typed.js` to a file, not to the declarations beside it.
for target in web bundler; do
  cp pkg/typed.d.ts "pkg/$target/typed.d.ts"
  printf '/* @ts-self-types="./typed.d.ts" */\nexport {};\n' > "pkg/$target/typed.js"
done
rm pkg/typed.d.ts
# A panic or trap poisons the module (src/js/poison.rs): the glue stores the
# instance's exports through `guardExports` from the KubeError snippet, so every
# call into wasm is guarded. The pinned wasm-bindgen writes each line once; the
# build fails if that ever changes.
guard_glue() { # file, line as generated, line guarded, snippet path
  node -e '
    const fs = require("fs");
    const [file, from, to, snippet] = process.argv.slice(1);
    const js = fs.readFileSync(file, "utf8");
    if (js.split(from).length !== 2) { console.error(`build-pkg: ${file}: expected one "${from}"`); process.exit(1); }
    const nl = js.indexOf("\n") + 1; // after the @ts-self-types line
    fs.writeFileSync(file, js.slice(0, nl) + `import { guardExports } from "./${snippet}";\n` + js.slice(nl).replace(from, to));
  ' "$@"
}
# Each target's entry re-exports the generated API plus `KubeError`, which
# lives in a JS snippet whose folder name carries a content hash.
for target in web bundler; do
  snippet=$(cd "pkg/$target" && ls snippets/*/src/js/kube_error.js)
  # guardExports knows closures by this export name prefix (quiet once poisoned).
  grep -q 'wasm\.wasm_bindgen__convert__closures_' "pkg/$target/kubewasm"*.js \
    || { echo "build-pkg: no closure exports named as guardExports expects" >&2; exit 1; }
  if [ "$target" = web ]; then
    guard_glue pkg/web/kubewasm.js 'wasm = instance.exports;' 'wasm = guardExports(instance.exports);' "$snippet"
  else
    guard_glue pkg/bundler/kubewasm.js '__wbg_set_wasm(wasm);' '__wbg_set_wasm(guardExports(wasm));' "$snippet"
  fi
  # A class argument of the wrong type (`new InformerFactory(null)`) is a
  # KubeError `Invalid` like every other bad argument, not the glue's bare
  # Error; one of the same name comes from a second copy of the package.
  # `makeKubeError` is already imported where `_assertClass` lives.
  node -e '
    const fs = require("fs");
    const from = "throw new Error(`expected instance of ${klass.name}`);";
    const to = "{ const got = instance === null ? \"null\" : typeof instance === \"object\" ? instance.constructor?.name ?? \"an object\" : typeof instance; throw makeKubeError(got === klass.name ? `expected a ${klass.name} of this copy of kubewasm, not one made by another copy (the package is loaded twice: two versions of it, or two paths to it)` : `expected a ${klass.name}, not ${got}`, 0, \"Invalid\"); }";
    const file = process.argv[1];
    const js = fs.readFileSync(file, "utf8");
    if (js.split(from).length !== 2 || !js.includes("import { makeKubeError")) { console.error(`build-pkg: ${file}: expected one _assertClass throw and makeKubeError imported`); process.exit(1); }
    fs.writeFileSync(file, js.replace(from, to));
  ' "pkg/$target/$([ "$target" = web ] && echo kubewasm.js || echo kubewasm_bg.js)"
  # Until `init()` has run, the web glue's `wasm` is a stand-in whose every
  # use throws a KubeError saying so (a client made at module level before
  # `await init()`), and the glue's "already initialized" checks compare
  # with it.
  if [ "$target" = web ]; then
    node -e '
      const fs = require("fs");
      const [file, snippet] = process.argv.slice(1);
      let js = fs.readFileSync(file, "utf8");
      const decl = "let wasmModule, wasmInstance, wasm;";
      const check = "if (wasm !== undefined) return wasm;";
      if (js.split(decl).length !== 2 || js.split(check).length !== 3) { console.error(`build-pkg: ${file}: expected one declaration of wasm and two checks of it`); process.exit(1); }
      js = js.replace(decl, "let wasmModule, wasmInstance, wasm = notInitialized;").split(check).join("if (wasm !== notInitialized) return wasm;");
      const nl = js.indexOf("\n") + 1;
      fs.writeFileSync(file, js.slice(0, nl) + `import { notInitialized } from "./${snippet}";\n` + js.slice(nl));
    ' pkg/web/kubewasm.js "$snippet"
  fi
  # The web build's default `init()` fetches the .wasm beside it; Node's
  # `fetch` cannot read a file: URL, and its bare "fetch failed" says nothing
  # of why. The failure names the way that works instead.
  if [ "$target" = web ]; then
    node -e '
      const fs = require("fs");
      const from = "        module_or_path = fetch(module_or_path);";
      const to = "        const source = module_or_path;\n        module_or_path = fetch(source).catch((e) => { const url = String(source.url ?? source); throw url.startsWith(\"file:\") ? makeKubeError(`cannot fetch ${url} (${e?.message ?? e}): in Node, import the package itself (its Node entry loads the module), or pass the module: init({ module_or_path: bytes })`, 0, \"Invalid\") : e; });";
      const file = process.argv[1];
      const js = fs.readFileSync(file, "utf8");
      if (js.split(from).length !== 2) { console.error(`build-pkg: ${file}: expected one fetch of module_or_path`); process.exit(1); }
      fs.writeFileSync(file, js.replace(from, to));
    ' pkg/web/kubewasm.js
  fi
  # wasm-bindgen imports a snippet once per group of its functions, and each
  # import is a key of the instance's import object: duplicate keys, which
  # bundlers (esbuild) warn about. They are the same module: one import each.
  if [ "$target" = web ]; then
    node -e '
      const fs = require("fs");
      const file = process.argv[1];
      let js = fs.readFileSync(file, "utf8");
      const first = new Map();
      for (const [, name, path] of js.matchAll(/^import \* as (import\d+) from "([^"]+)"$/gm)) {
        if (!first.has(path)) { first.set(path, name); continue; }
        const line = new RegExp(`^import \\* as ${name} from "[^"]+"\\n`, "m");
        const key = new RegExp(`^ *"[^"]+": ${name},\\n`, "m");
        if (!line.test(js) || !key.test(js)) { console.error(`build-pkg: ${file}: ${name} not imported and keyed as expected`); process.exit(1); }
        js = js.replace(line, "").replace(key, "");
        if (new RegExp(`\\b${name}\\b`).test(js)) { console.error(`build-pkg: ${file}: ${name} used elsewhere`); process.exit(1); }
      }
      fs.writeFileSync(file, js);
    ' pkg/web/kubewasm.js
  fi
  exports="export * from './kubewasm.js';"
  # The web target's default export is its init function.
  [ "$target" = web ] && exports="$exports
export { default } from './kubewasm.js';"
  printf '%s\n%s\n' "$exports" \
    "export { KubeClient, ResourceClient, InformerFactory, Informer, Lister, ScopedView, WorkQueue, type InformerHandlers } from './typed.js';" \
    > "pkg/$target/index.d.ts"
  printf '%s\nexport { KubeError } from %s;\n' "$exports" "'./$snippet'" > "pkg/$target/index.js"
done
echo "built pkg/ ($(du -sh pkg | cut -f1))"
