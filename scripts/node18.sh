#!/usr/bin/env bash
# Installs Debian's Node 18 beside the system Node (not over it), for the
# Node 18 compatibility test: the .deb files are unpacked into .cache/node18
# (binary + libnode + libuv + c-ares), and the four builtins Debian's build
# loads from fixed paths (acorn, acorn-walk, cjs-module-lexer, undici) are
# copied to /usr/share/nodejs. Idempotent; prints the node binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.cache/node18
node18="$dest/usr/bin/node"
run() { LD_LIBRARY_PATH="$dest/usr/lib/x86_64-linux-gnu" "$node18" "$@"; }
if [ -x "$node18" ] && [ -f /usr/share/nodejs/undici/undici-fetch.js ] && run --version >/dev/null 2>&1; then
  echo "$node18"
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
mkdir -p "$dest/debs"
version=$(apt-cache madison nodejs | awk '$3 ~ /^18\./ { print $3; exit }')
if [ -z "$version" ]; then
  $SUDO apt-get update -qq
  version=$(apt-cache madison nodejs | awk '$3 ~ /^18\./ { print $3; exit }')
fi
[ -n "$version" ] || { echo "no Node 18 in the Debian archive" >&2; exit 1; }
(cd "$dest/debs" && apt-get download -q "nodejs=$version" libnode108 libuv1 libc-ares2 node-acorn node-cjs-module-lexer node-undici >/dev/null 2>&1)
for deb in "$dest"/debs/nodejs_*.deb "$dest"/debs/libnode108_*.deb "$dest"/debs/libuv1_*.deb "$dest"/debs/libc-ares2_*.deb; do
  dpkg -x "$deb" "$dest"
done
tmp=$(mktemp -d)
for deb in "$dest"/debs/node-acorn_*.deb "$dest"/debs/node-cjs-module-lexer_*.deb "$dest"/debs/node-undici_*.deb; do
  dpkg -x "$deb" "$tmp"
done
$SUDO mkdir -p /usr/share/nodejs
for pkg in acorn acorn-walk cjs-module-lexer undici; do
  $SUDO cp -r "$tmp/usr/share/nodejs/$pkg" /usr/share/nodejs/
done
rm -rf "$tmp"
run --version >/dev/null
echo "$node18"
