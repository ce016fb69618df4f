#!/usr/bin/env bash
# The main job: installs what it needs, builds the package, then runs the
# relayer against a local faulty fleet in front of a local anvil node.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-browser
node scripts/build.mjs
node examples/demo.mjs
