#!/usr/bin/env bash
# Tunes a small matmul for a few dozen trials and prints the speedup of the best schedule over the
# unscheduled program, both timed by `loom bench-op` in this run (target: at least 3x).
#   bench/bench_tune_matmul.sh [BUILD_DIR] [WORKLOAD] [TRIALS]
set -euo pipefail
build=${1:-build}
workload=${2:-matmul:M=256,N=256,K=256}
trials=${3:-48}
loom="$build/bin/loom"
[ -x "$loom" ] || { echo "bench_tune_matmul: $loom not found (ninja -C $build loom)" >&2; exit 2; }
records=$(mktemp /tmp/loom-tune-XXXXXX.json)
rm -f "$records"
trap 'rm -f "$records"' EXIT
start=$(date +%s)
"$loom" tune --workload "$workload" --trials "$trials" --output "$records" --timeout 10 | tail -4
echo "tuning wall time: $(( $(date +%s) - start )) s"
ms() { sed -n 's/^time: median \([0-9.]*\) ms.*/\1/p'; }
plain=$("$loom" bench-op --workload "$workload" --repeat 10 | ms)
tuned=$("$loom" bench-op --workload "$workload" --repeat 10 --tuning-records "$records" | ms)
echo "unscheduled: $plain ms, tuned: $tuned ms"
awk -v p="$plain" -v t="$tuned" 'BEGIN { r = p / t; verdict = (r >= 3) ? "meets the 3x target" : "BELOW the 3x target"; printf "speedup: %.2fx (%s)\n", r, verdict }'
