#!/usr/bin/env bash
# Installs everything the build, the demo and the tests need, idempotently:
# each step checks first and skips what is already there, so reruns take
# seconds. Needs the crate, npm and Debian registries only.
#   scripts/setup.sh            everything
#   scripts/setup.sh --no-browser   skip Chromium and Node 18 (the demo needs neither)
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the exact pin in Cargo.toml
want_browser=1
[ "${1:-}" = "--no-browser" ] && want_browser=0

say() { printf '[setup] %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
if ! cargo clippy --version >/dev/null 2>&1; then
  say "adding clippy"
  rustup component add clippy
fi

if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  # Not --locked: the CLI's lockfile pins a crate version this registry lacks.
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 3 minutes)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.setup-lock; then
  say "installing npm dev packages"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.setup-lock
fi

if [ "$want_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian chromium for browser tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
if ! command -v redis-server >/dev/null; then
  # The fleet tests start their own redis-server on 127.0.0.1 (a free port, stopped by PID).
  say "installing Debian redis-server for the fleet tests"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
if [ "$want_browser" = 1 ]; then
  # Node 18 beside the system Node, for the compatibility test (skips when present).
  scripts/node18.sh >/dev/null
fi
say "ready"
