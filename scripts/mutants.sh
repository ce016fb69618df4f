#!/usr/bin/env bash
# Mutation testing within this machine's limits: cargo-mutants over the
# given files (or one shard of src/policy, src/pool and src/tx), the unit
# tests only, one job. Each run's outcome lands in mutants/<name>/ (the
# tool's own output; `missed.txt` lists surviving mutants) and a one-line
# summary is appended to mutants/SUMMARY.md. A surviving mutant is either
# killed by a new test or listed in mutants/EQUIVALENT.md with the reason.
#
#   scripts/mutants.sh src/pool/pipeline/unknown.rs src/url_credentials.rs
#   scripts/mutants.sh --shard 3/20          (the three core directories)
#   scripts/mutants.sh --together pool-rest src/pool/cache.rs src/pool/dedup.rs
#                      (one run, one baseline build, a summary row per file)
#
# Needs cargo-mutants 27 (`cargo install cargo-mutants --version 27.0.0 --locked`).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo-mutants >/dev/null || { echo "cargo-mutants is not installed" >&2; exit 2; }
mkdir -p mutants

run() {
  local name="$1"; shift
  local out="mutants/$name"
  rm -rf "$out"
  # Exit codes 2 (some mutants survived) and 3 (some timed out: a mutant
  # that loops forever counts as caught) are recorded, not errors here.
  local code=0
  cargo mutants --jobs 1 --minimum-test-timeout 20 --output "$out" "$@" -- --lib || code=$?
  [ "$code" -eq 0 ] || [ "$code" -eq 2 ] || [ "$code" -eq 3 ] || return "$code"
  local caught missed unviable timeout
  caught=$(wc -l < "$out/mutants.out/caught.txt" 2>/dev/null || echo 0)
  missed=$(wc -l < "$out/mutants.out/missed.txt" 2>/dev/null || echo 0)
  unviable=$(wc -l < "$out/mutants.out/unviable.txt" 2>/dev/null || echo 0)
  timeout=$(wc -l < "$out/mutants.out/timeout.txt" 2>/dev/null || echo 0)
  echo "| $(date -u +%F) | $name | $caught | $missed | $timeout | $unviable |" >> mutants/SUMMARY.md
  echo "$name: caught $caught, missed $missed, timeout $timeout, unviable $unviable"
}

[ -f mutants/SUMMARY.md ] || printf '| date | files | caught | missed | timeout | unviable |\n|---|---|---|---|---|---|\n' > mutants/SUMMARY.md

# One SUMMARY.md row per file of a run that covered several.
summarize_files() {
  local name="$1" out="mutants/$1"; shift
  for file in "$@"; do
    local row="| $(date -u +%F) | $(echo "$file" | sed 's|^src/||; s|/|-|g; s|\.rs$||') (in $name)"
    for kind in caught missed timeout unviable; do
      row="$row | $(grep -c "^$file:" "$out/mutants.out/$kind.txt" 2>/dev/null || true)"
    done
    echo "$row |" >> mutants/SUMMARY.md
  done
}

if [ "${1:-}" = "--together" ]; then
  name="$2"; shift 2
  args=()
  for file in "$@"; do args+=(--file "$file"); done
  out="mutants/$name"
  rm -rf "$out"
  code=0
  cargo mutants --jobs 1 --minimum-test-timeout 20 --output "$out" "${args[@]}" -- --lib || code=$?
  [ "$code" -eq 0 ] || [ "$code" -eq 2 ] || [ "$code" -eq 3 ] || exit "$code"
  summarize_files "$name" "$@"
elif [ "${1:-}" = "--shard" ]; then
  shard="$2"
  run "shard-${shard/\//-of-}" --shard "$shard" --file 'src/policy/**' --file 'src/pool/**' --file 'src/tx/**'
else
  for file in "$@"; do
    name=$(echo "$file" | sed 's|^src/||; s|/|-|g; s|\.rs$||')
    run "$name" --file "$file"
  done
fi
