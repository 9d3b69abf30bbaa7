# kubewasm — every entry point a user or CI needs. Each target installs what it
# uses (scripts/deps.sh is idempotent and fast when everything is present).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
export CHROMEDRIVER ?= /usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT ?= 120

WASM_TESTS := $(patsubst tests/%.rs,%,$(filter-out tests/wasm_bench_%,$(wildcard tests/wasm_*.rs)))
WASM_BENCHES := $(patsubst tests/%.rs,%,$(wildcard tests/wasm_bench_*.rs))
WITH_SIM := scripts/with-sim.sh --namespaces 3 --pods 30 --
DEMO_PORT ?= 8080

.PHONY: soak all deps test test-rust-app test-native test-lint test-size test-node test-chrome test-worker test-js test-runtimes test-page test-edge test-vite build pkg demo bench clean

all: build

deps:
	@scripts/deps.sh

## test: every test — native, lint, wasm in Node, wasm in headless Chromium (page and Web Worker),
## the package in Node 20 and 22, Deno and Bun, the .wasm size budget — then a check that the run left the working tree
## as it found it (scripts/tree-state.sh before and after).
TEST_TARGETS := test-native test-lint test-size test-node test-chrome test-worker test-rust-app test-js test-runtimes test-page test-edge test-vite

test: deps
	@mkdir -p target && scripts/tree-state.sh > target/tree-before
	$(MAKE) $(TEST_TARGETS)
	@scripts/tree-state.sh | diff -u target/tree-before - \
	  || { echo "make test: the suites changed the working tree (above)" >&2; exit 1; }
	@echo "make test: all suites passed"

test-native:
	cargo test --workspace

test-lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p kubewasm --target wasm32-unknown-unknown --all-targets -- -D warnings
	# The library as a dependent gets it: without the `testing` feature that
	# the crate's own tests and benchmarks turn on.
	cargo clippy -p kubewasm --lib -- -D warnings
	cargo clippy -p kubewasm --lib --target wasm32-unknown-unknown -- -D warnings
	cargo clippy -p kubewasm --target wasm32-unknown-unknown --no-default-features --lib -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps --workspace
	RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps -p kubewasm --target wasm32-unknown-unknown

# The package's .wasm within its gzip budget (scripts/wasm-size.sh).
test-size: build
	scripts/wasm-size.sh

test-node:
	$(WITH_SIM) scripts/wasm-test.sh node $(WASM_TESTS)

test-chrome:
	$(WITH_SIM) scripts/wasm-test.sh page $(WASM_TESTS)

# The runtime and REST suites once more inside a dedicated Web Worker in Chromium.
test-worker:
	$(WITH_SIM) scripts/wasm-test.sh worker $(filter wasm_rt wasm_rest,$(WASM_TESTS))

# examples/rust-app, a downstream crate on kubewasm (without its JS surface),
# with its wasm_bindgen_test suite in Node and in headless Chromium.
test-rust-app:
	$(WITH_SIM) scripts/wasm-test.sh node --crate examples/rust-app app
	$(WITH_SIM) scripts/wasm-test.sh page --crate examples/rust-app app

# The built npm package, used from TypeScript the way its README shows, under
# the pinned Node 20 of tests/js (the README blocks too: page and worker ones in Chromium).
test-js: build
	cd tests/js && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	$(WITH_SIM) bash -c 'cd tests/js && npm test'

# The same package tests under Node 22, and a subset (see the script) under Deno and Bun, from npm.
test-runtimes: build
	cd tests/runtimes && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd tests/js && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd tests/js && npm run --silent build
	$(WITH_SIM) tests/runtimes/run.sh

# The demo dashboard in headless Chromium against the sim (screenshots in tests/artifacts/).
test-page: build
	cargo build -q --release -p kubewasm-sim
	scripts/site.sh
	cd tests/page && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd tests/page && npm test

# The edge-worker example in workerd (from npm) against the sim.
test-edge: build
	cargo build -q --release -p kubewasm-sim
	rm -rf examples/edge-worker/pkg && cp -R pkg examples/edge-worker/pkg
	# `npm install`, not `npm ci`: the lockfile does not list workerd's other-platform
	# optional packages, so `npm ci` refuses it; `--no-save` keeps npm from adding
	# them to the committed lockfile.
	cd examples/edge-worker && { [ -x node_modules/.bin/workerd ] || npm install --no-save --no-audit --no-fund --loglevel=error; }
	cd examples/edge-worker && npm test

# `npm pack` of the package installs into a fresh Vite + TypeScript app that
# type-checks with `strict` and builds; its React page (`kubewasm/react` in
# StrictMode) then runs in headless Chromium against the sim.
test-vite: build
	cargo build -q --release -p kubewasm-sim
	cd tests/page && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	mkdir -p target && rm -f target/kubewasm-*.tgz
	cd pkg && npm pack --silent --pack-destination ../target >/dev/null
	cd tests/vite-app && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd tests/vite-app && npm install --no-save --no-audit --no-fund --loglevel=error ../../target/kubewasm-*.tgz
	cd tests/vite-app && npm run --silent check
	cd tests/vite-app && npm test

## build: the npm package (web + bundler targets) with pkg-template/ merged in.
build pkg: deps
	scripts/build-pkg.sh

## demo: the dashboard on the embedded simulated cluster.
demo: build
	scripts/demo.sh $(DEMO_PORT)

## bench: every benchmark; figures are printed and summarized in BENCHMARKS.md by hand.
bench: deps
	cargo bench -p kubewasm
	scripts/rust-app-size.sh
	cargo build -q --release -p kubewasm-sim && scripts/build-pkg.sh >/dev/null && scripts/site.sh
	cd tests/page && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && node bench.mjs && node flood.mjs && node fresh-memory.mjs && node warm-start.mjs && node shared-start.mjs
	cd tests/compare && npm install --no-audit --no-fund --loglevel=error && node compare.mjs
	cd tests/js && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; }
	for m in full stripped metadata; do $(WITH_SIM) node tests/js/bench/memory.mjs $$m || exit 1; done
	scripts/with-sim.sh --rv0-unpaginated -- node --expose-gc tests/js/bench/list-memory.mjs 50000
	$(WITH_SIM) node --expose-gc tests/js/bench/objects.mjs
	$(WITH_SIM) node tests/js/bench/metadata-bytes.mjs
	$(WITH_SIM) node tests/js/bench/freeze.mjs
	$(WITH_SIM) node tests/js/bench/field-selector.mjs
	$(WITH_SIM) node tests/js/bench/snapshot.mjs
	for i in 1 2 3; do for m in bounded unbounded; do $(WITH_SIM) node tests/js/bench/slow-handler.mjs $$m || exit 1; done; done
	for b in $(WASM_BENCHES); do \
	  $(WITH_SIM) scripts/wasm-test.sh node --release --features bench $$b -- --nocapture || exit 1; \
	done

## soak: ~1,000,000 events with churn over 10 minutes; wasm memory and JS heap every 30 s.
soak: build
	cd tests/js && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; }
	$(WITH_SIM) node --expose-gc tests/js/bench/soak.mjs 10

clean:
	cargo clean
	rm -rf pkg pkg-web pkg-bundler
