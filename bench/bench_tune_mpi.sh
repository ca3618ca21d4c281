#!/usr/bin/env bash
# Distributed tuning scaling (core/tune/mpi). Part 1, simulated: worker ranks sleep BUILD_MS and
# MEASURE_MS instead of building and timing (each rank stands for a host of its own), rank 0 runs
# the real search; trials per minute and driver utilisation for 1, 2, 4, ... worker ranks,
# oversubscribed on this machine. Part 2, real: the same trial budget with 1 and 2 worker ranks
# (interleaved, twice), wall time and best time reached.
# Usage: bench/bench_tune_mpi.sh BUILD_DIR [WORKERS="1 2 4 8 16 32"] [STRATEGY=evolutionary] [REAL_TRIALS=32]
# Environment: BUILD_MS (50), MEASURE_MS (200), PER_WORKER (20 trials), SEARCH_THREADS (0: one per core),
# REAL=0 skips part 2, SIM=0 part 1, BEFORE=OTHER_LOOM runs part 1 with that binary too, interleaved.
# SIM_LOWERING=charged|wall (charged): how the simulated workers' real work (the points they lower
# for rank 0) counts against the build stand-in (loom tune --simulate-lowering). RT=P: once started,
# rank 0 runs at real-time priority P and the workers at P - 1 (loom tune --simulate-rt-priority),
# so the other jobs on the machine wait while the bench runs: keep such runs short. Binaries from
# before session mpi5 have neither option: they run at normal priority and count wall time.
set -euo pipefail
build=${1:?usage: bench_tune_mpi.sh BUILD_DIR [WORKERS] [STRATEGY] [REAL_TRIALS]}
workers=${2:-"1 2 4 8 16 32"}
strategy=${3:-evolutionary}
real_trials=${4:-32}
build_ms=${BUILD_MS:-50}
measure_ms=${MEASURE_MS:-200}
per_worker=${PER_WORKER:-20}
loom=$(realpath "$build")/bin/loom
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun --oversubscribe --bind-to none --mca mpi_yield_when_idle 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${SIM:-1}" != 0 ]; then
echo "simulated: build ${build_ms} ms, measure ${measure_ms} ms, ${per_worker} trials per worker, strategy ${strategy}"
search_threads=${SEARCH_THREADS:-0}
echo "rank 0 search threads: ${search_threads} (0: one per core; this machine: $(nproc))"
printf "%-7s %7s %7s %8s %11s %8s %11s %12s %13s %10s %8s %5s %16s  %s\n" binary workers trials wall_s trials/min speedup driver_busy workers_busy driver_cpu_ms rank0_core fill_ins load \
  worker_cpu/wall/over "rank 0 CPU ms per candidate: search points lowering scoring training results dispatch other"
# BEFORE=OTHER_LOOM: each worker count is run with that binary too, interleaved (before, after), so
# both see the same load; the speedups are each binary's over its own 1-worker rate.
bins=(after)
[ -n "${BEFORE:-}" ] && bins=(before after)
declare -A base
for w in $workers; do
  for b in "${bins[@]}"; do
  bin=$loom
  [ "$b" = before ] && bin=$(realpath "$BEFORE")
  n=$((w * per_worker))
  args=(tune --workload matmul:M=64,N=64,K=64 --trials "$n" --no-baseline \
    --strategy "$strategy" --simulate-build-ms "$build_ms" --simulate-measure-ms "$measure_ms" \
    --search-threads "$search_threads" --output "$tmp/sim$b$w.json")
  if "$bin" tune --help 2>&1 | grep -q -- --simulate-lowering; then
    args+=(--simulate-lowering "${SIM_LOWERING:-charged}")
    [ -n "${RT:-}" ] && args+=(--simulate-rt-priority "$RT")
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  "${mpi[@]}" -np $((w + 1)) "$bin" "${args[@]}" 2>&1 | tr '\r' '\n' > "$tmp/sim$b$w.log"
  line=$(grep -a "candidates in" "$tmp/sim$b$w.log" | tail -1)
  # "distributed: driver CPU X ms per candidate (...)"
  cpu=$(grep -a "driver CPU [0-9]" "$tmp/sim$b$w.log" | sed -E 's/.*driver CPU ([0-9.]+) ms.*/\1/')
  # "distributed: N candidates in S s (R per minute) on W worker ranks; driver busy D%, workers busy B%[; F fill-ins ...]"
  wall=$(sed -E 's/.* in ([0-9.]+) s .*/\1/' <<<"$line")
  rate=$(sed -E 's/.*\(([0-9.]+) per minute\).*/\1/' <<<"$line")
  drv=$(sed -E 's/.*driver busy ([0-9]+%).*/\1/' <<<"$line")
  wb=$(sed -E 's/.*workers busy ([0-9]+%).*/\1/' <<<"$line")
  fills=-
  grep -q "fill-ins" <<<"$line" && fills=$(sed -E 's/.*; ([0-9]+) fill-ins.*/\1/' <<<"$line")
  # (not printed by binaries before session mpi4) "... rank 0 used U of a core" and "driver CPU per candidate by phase (ms): search A points B ... other H"
  core=$(grep -a "of a core" "$tmp/sim$b$w.log" | sed -E 's/.*rank 0 used ([0-9.]+) of a core.*/\1/' || true)
  phases=$(grep -a "by phase" "$tmp/sim$b$w.log" | sed -E 's/.*\(ms\)://; s/[a-z]+ //g' || true)
  # (session mpi5 on) "simulated workers' real work (...) per trial: C ms CPU, W ms wall, charged by its X time; O trials outlasted ..."
  work=$(grep -a "simulated workers' real work" "$tmp/sim$b$w.log" | sed -E 's/.*: ([0-9.]+) ms CPU, ([0-9.]+) ms wall.*; ([0-9]+) trials outlasted.*/\1\/\2\/\3/' || true)
  [ -z "${base[$b]:-}" ] && base[$b]=$rate
  printf "%-7s %7s %7s %8s %11s %7.1fx %11s %12s %13s %10s %8s %5s %16s  %s\n" "$b" "$w" "$n" "$wall" "$rate" "$(awk "BEGIN{print $rate / ${base[$b]}}")" "$drv" "$wb" "$cpu" "${core:--}" "$fills" "$load" "${work:--}" "${phases:--}"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

[ "${REAL:-1}" = 0 ] && exit 0
echo "real: matmul:M=128,N=128,K=128, ${real_trials} trials, 1 vs 2 worker ranks on this host (interleaved)"
printf "%8s %6s %10s %12s\n" workers run wall_s best_ms
for run in 1 2; do
  for w in 1 2; do
    out="$tmp/real$w-$run.json"
    start=$(date +%s.%N)
    "${mpi[@]}" -np $((w + 1)) "$loom" tune --workload matmul:M=128,N=128,K=128 --trials "$real_trials" --no-baseline \
      --strategy "$strategy" --output "$out" > "$tmp/real$w-$run.log" 2>&1
    end=$(date +%s.%N)
    best=$(tr '\r' '\n' < "$tmp/real$w-$run.log" | grep -a "^best:" | sed -E 's/best: ([0-9.]+) ms.*/\1/')
    printf "%8s %6s %10.1f %12s\n" "$w" "$run" "$(awk "BEGIN{print $end - $start}")" "$best"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
