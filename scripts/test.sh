#!/usr/bin/env bash
# Runs every test: Rust lints and native tests (simulated clock), the wasm
# build and package assembly, then the Node suites (mock fleet, bad input,
# packaging, headless Chromium). Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --check
echo "== layers and import cycles (docs/architecture.md)"
node scripts/check-layers.mjs
echo "== cargo clippy (native and wasm32)"
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown -- -D warnings
cargo clippy --locked --target wasm32-unknown-unknown --features tx-module -- -D warnings
echo "== cargo test (native, simulated clock)"
cargo test --locked
echo "== build the npm package"
node scripts/build.mjs
echo "== size budget (the minimal app, gzip, within 5 % of benches/size-budget.json)"
node benches/size-budget.mjs
echo "== node --test js-tests/"
node --test --test-concurrency=1 js-tests/
echo "== benchmark smoke run (every part of benches/ still works; numbers mean nothing)"
node benches/run.mjs --smoke > /dev/null
echo "== first-code bench smoke run (the wasm a first answer runs, traced in Chromium)"
node benches/first-code.mjs --runs 1 > /dev/null
echo "== queue bench smoke run (thousands in flight; numbers mean nothing)"
node benches/queue.mjs --smoke > /dev/null
echo "== soak smoke run (every request ends once, no timers left after close)"
node --expose-gc benches/soak.mjs --smoke > /dev/null
echo "== burst bench smoke run (many fresh relayers at once; a busy event loop)"
node benches/burst.mjs --smoke > /dev/null
echo "== memory bench smoke run (idle relayers, what closing gives back)"
node benches/memory.mjs --smoke > /dev/null
echo "== demo (what npm run demo runs, against its local fleet and anvil)"
node examples/demo.mjs > /dev/null
