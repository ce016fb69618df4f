#!/usr/bin/env bash
# The live dashboard: builds the package and the page (Vite, production),
# then serves it with a faulty fleet in front of a local anvil node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-browser
node scripts/build.mjs
npx vite build --config examples-web/vite.config.mjs
node examples-web/server.mjs "$@"
