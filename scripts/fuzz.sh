#!/usr/bin/env bash
# Runs every cargo-fuzz target for a set time and writes a summary table
# (executions, coverage, findings) to fuzz/RESULTS.md. Needs the nightly
# toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
#   scripts/fuzz.sh [seconds per target, default 120]
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs="${1:-120}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
cargo +nightly fuzz build >/dev/null
out=RESULTS.md
{
  echo "# Fuzzing results"
  echo
  echo "$(date -u +%Y-%m-%d), $(nproc) cores, ${secs} s per target, \`scripts/fuzz.sh ${secs}\` (libFuzzer via cargo-fuzz $(cargo fuzz --version | awk '{print $2}'), $(rustc +nightly --version | cut -d' ' -f1-2))."
  echo
  echo "| target | what it drives | executions | coverage (edges) | corpus | findings |"
  echo "|---|---|---|---|---|---|"
} > "$out"
describe() {
  case "$1" in
    classify) echo "status + Retry-After + JSON-RPC code/message + body kind + transport outcome, any method → classification" ;;
    retry_after) echo "Retry-After seconds / HTTP dates / provider backoff hints from any text" ;;
    config) echo "any option numbers (NaN, ±∞, huge) and upstream strings → config or a typed error naming the field" ;;
    tx_request) echo "transaction request fields of any type → request or typed error; fee replacement vs every client's bump rule" ;;
    breaker) echo "admissions, early probes, outcomes, clock steps → probes in flight ≤ permits" ;;
    quota) echo "charges, 429s with any Retry-After, successes, clock → tokens in [0, burst], sane rates" ;;
    router) echo "selections, completions (any verdict), heads, chain checks, clock → reservations counted and all released" ;;
    nonce) echo "allocate / broadcast / release / settle / abandon → no nonce handed out twice" ;;
    batch_match) echo "batch replies with missing, duplicated, foreign, NaN ids in any order → one first exact reply per item" ;;
  esac
}
for target in $(cargo +nightly fuzz list); do
  mkdir -p "corpus/$target" "artifacts/$target"
  log="artifacts/$target/last-run.log"
  set +e
  cargo +nightly fuzz run "$target" -- -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1
  status=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  corpus=$(ls "corpus/$target" | wc -l)
  crashes=$(ls "artifacts/$target" | grep -c -E '^(crash|leak|timeout|oom)-' || true)
  if [ "$status" = 0 ] && [ "$crashes" = 0 ]; then found="none"; else found="**${crashes} artifact(s), exit ${status}** (see fuzz/artifacts/$target)"; fi
  echo "| \`$target\` | $(describe "$target") | ${runs:-?} | ${edges:-?} | $corpus | $found |" >> "$out"
  echo "[fuzz] $target: ${runs:-?} executions, findings: $found"
done
