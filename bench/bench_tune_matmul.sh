#!/usr/bin/env bash
# Tunes a matmul with `loom tune` and prints: trials, tuning wall time, trials to 90% of the final best,
# and the best schedule's GFLOP/s against OpenBLAS cblas_sgemm timed side by side in the same run
# (bench_tune_matmul; target for 1024^3 on 2 threads: at least 0.90 of OpenBLAS).
#   bench/bench_tune_matmul.sh [BUILD_DIR] [WORKLOAD] [TRIALS] [THREADS]
# Defaults: build, matmul:M=1024,N=1024,K=1024, 1000 trials, 2 threads. The records stay in
# /tmp/loom-tune-matmul-<trials>.json (LOOM_TUNE_RECORDS overrides; an existing file is resumed).
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for the comparison (OpenBLAS picks its best kernel).
set -euo pipefail
build=${1:-build}
workload=${2:-matmul:M=1024,N=1024,K=1024}
trials=${3:-1000}
threads=${4:-2}
loom="$build/bin/loom"
bench="$build/bin/bench_tune_matmul"
[ -x "$loom" ] || { echo "bench_tune_matmul: $loom not found (ninja -C $build loom)" >&2; exit 2; }
cmake --build "$build" --target bench_tune_matmul >/dev/null 2>&1 || cmake --build "$build" --target bench_tune_matmul
records=${LOOM_TUNE_RECORDS:-/tmp/loom-tune-matmul-$trials.json}
resume=()
[ -s "$records" ] && resume=(--resume)
echo "workload: $workload, trials: $trials, threads: $threads, records: $records"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
# The first candidate also computes the reference output with the unscheduled program (seconds at
# 1024^3 on a busy machine): a generous timeout keeps it from being killed.
LOOM_NUM_THREADS=$threads "$loom" tune --workload "$workload" --trials "$trials" --output "$records" --timeout 30 \
  --no-baseline "${resume[@]}" | tail -3
echo "tuning wall time: $(( $(date +%s) - start )) s"
echo "load average after tuning: $(cut -d' ' -f1-3 /proc/loadavg)"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bench" --records "$records" --workload "$workload" --threads "$threads"
