#!/usr/bin/env bash
# Installs what `make test`, `make demo` and `make bench` need, skipping anything
# already present at the right version, so it is cheap to run every time.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

log() { printf '[deps] %s\n' "$*" >&2; }

# Rust toolchain and the wasm target (toolchain auto-install may be disabled).
toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
if ! rustup toolchain list | grep -q "^$toolchain"; then
  log "installing Rust $toolchain"
  rustup toolchain install "$toolchain" --profile minimal --component clippy,rustfmt
fi
if ! rustup target list --installed --toolchain "$toolchain" | grep -q wasm32-unknown-unknown; then
  log "adding wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown --toolchain "$toolchain"
fi
rustup component add clippy rustfmt --toolchain "$toolchain" >/dev/null 2>&1 || true

# wasm-bindgen-cli must match the wasm-bindgen version in Cargo.lock exactly.
[ -f Cargo.lock ] || cargo generate-lockfile
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wb_version" ]; then
  log "installing wasm-bindgen-cli $wb_version"
  cargo install wasm-bindgen-cli --version "$wb_version" --force
fi
wasm_pack_version=0.15.1
if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$wasm_pack_version" ]; then
  log "installing wasm-pack $wasm_pack_version"
  cargo install wasm-pack --version "$wasm_pack_version" --force
fi

# Browser, driver and openssl from Debian (wasm-opt comes from npm, below).
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
# The Node transport's TLS tests make their certificates with openssl.
command -v openssl >/dev/null || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm dependencies of the dashboard and of the build tools (binaryen's wasm-opt
# for scripts/build-pkg.sh); lockfiles committed. tests/js depends on the built
# package, so `make test-js` installs it after building.
for dir in www scripts/tools; do
  if [ -f "$dir/package.json" ]; then
    if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
      log "npm ci in $dir"
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  fi
done
log "ok"
