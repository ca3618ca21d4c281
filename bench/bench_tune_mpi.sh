#!/usr/bin/env bash
# Distributed tuning scaling (core/tune/mpi). Part 1, simulated: worker ranks sleep BUILD_MS and
# MEASURE_MS instead of building and timing (each rank stands for a host of its own), rank 0 runs
# the real search; trials per minute and driver utilisation for 1, 2, 4, ... worker ranks,
# oversubscribed on this machine. Part 2, real: the same trial budget with 1 and 2 worker ranks
# (interleaved, twice) on matmul 128^3 and a small CNN, wall time and best time reached.
# Usage: bench/bench_tune_mpi.sh BUILD_DIR [WORKERS="1 2 4 8 16 32"] [STRATEGY=evolutionary] [REAL_TRIALS=32]
# Environment: BUILD_MS (50), MEASURE_MS (200), PER_WORKER (20 trials), SEARCH_THREADS (0: one per core),
# REAL=0 skips part 2, SIM=0 part 1, BEFORE=OTHER_LOOM runs part 1 with that binary too, interleaved.
# SIM_LOWERING=charged|wall (charged): how the simulated workers' real work (the points they lower
# for rank 0) counts against the build stand-in (loom tune --simulate-lowering). RT=P: once started,
# rank 0 runs at real-time priority P and the workers at P - 1 (loom tune --rt-priority),
# so the other jobs on the machine wait while the bench runs: keep such runs short. Use P above any
# other real-time job's (RT=60 on the shared VM, where others time with `chrt -f 50`): a job at
# rank 0's priority holds a vCPU above the workers, which then queue for the other one (session
# mpi6: one cause of the "stalls"); the other_rt_s column says how much CPU such jobs took during
# each run (mpirun's whole life).
# LOOM_TUNE_MPI_TRACE=DIR (exported) makes every rank log its MPI traffic and phases to
# DIR/rank-R.log (core/tune/mpi/README.md). Binaries from before session mpi5 have neither option: they run at normal priority and count wall time.
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
printf "%-7s %7s %7s %8s %11s %8s %11s %12s %13s %10s %8s %5s %9s %16s  %s\n" binary workers trials wall_s trials/min speedup driver_busy workers_busy driver_cpu_ms rank0_core fill_ins load other_rt_s \
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
  # The help text first, then grep: with pipefail, `"$bin" tune --help | grep -q` failed whenever
  # grep quit at the match before loom had written the rest (SIGPIPE, exit 141), and the run then
  # went without these options: normal priority, nice-10 workers, wall-time accounting -- the
  # "stalls" of sessions mpi5-mpi6 (session mpi6 found them that way, in an ftrace of a stalled run).
  help=$("$bin" tune --help 2>&1 || true)
  if grep -q -- --simulate-lowering <<<"$help"; then
    args+=(--simulate-lowering "${SIM_LOWERING:-charged}")
    [ -n "${RT:-}" ] && args+=(--rt-priority "$RT")
  elif [ -n "${RT:-}" ] || [ -n "${SIM_LOWERING:-}" ]; then
    echo "  (next line: $bin has no --simulate-lowering / --rt-priority: normal priority, wall time)"
  fi
  sleep "${GAP_S:-0}"
  load=$(cut -d' ' -f1 /proc/loadavg)
  # Straight into a file: through a pipe, a reader starved by the real-time ranks blocks mpirun and
  # then rank 0's progress output (a run at 32 workers fell from 28x to 12x that way).
  "${mpi[@]}" -np $((w + 1)) "$bin" "${args[@]}" > "$tmp/sim$b$w.raw" 2>&1 &
  job=$!
  # other_rt: CPU seconds other real-time processes used during the run (at SCHED_FIFO 50, another
  # engineer's `chrt -f 50` bench holds a vCPU above the workers: the stalls of session mpi5).
  echo "? -" > "$tmp/otherrt"
  sampler=()
  [ -n "${RT:-}" ] && sampler=(chrt -f 99)
  "${sampler[@]}" python3 "$(dirname "$0")/other_rt_cpu.py" "$job" "$tmp/otherrt" &
  sampler_pid=$!
  wait "$job" || true
  wait "$sampler_pid" || true
  tr '\r' '\n' < "$tmp/sim$b$w.raw" > "$tmp/sim$b$w.log"
  # A rank that could not take real-time priority says so (then the run is not comparable).
  grep -a -m2 -- "--rt-priority" "$tmp/sim$b$w.log" | sed 's/^/  (next line: /; s/$/)/' || true
  otherrt=$(cut -d' ' -f1 "$tmp/otherrt")
  otherrt_who=$(cut -d' ' -f2 "$tmp/otherrt")
  [ "$otherrt_who" != - ] && echo "  (other real-time processes during the next line's run: $otherrt_who s)"
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
  printf "%-7s %7s %7s %8s %11s %7.1fx %11s %12s %13s %10s %8s %5s %9s %16s  %s\n" "$b" "$w" "$n" "$wall" "$rate" "$(awk "BEGIN{print $rate / ${base[$b]}}")" "$drv" "$wb" "$cpu" "${core:--}" "$fills" "$load" "${otherrt:-0}" "${work:--}" "${phases:--}"
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

[ "${REAL:-1}" = 0 ] && exit 0
# Part 2, real: matmul 128^3 (REAL_TRIALS trials) and the small CNN of examples/models/small_cnn
# (REAL_MODEL_TRIALS, 16), 1 vs 2 worker ranks on this host, interleaved, twice; with RT=P at
# real-time priority (rank 0 at P, the workers and their measurements at P - 1). REAL_TASKS picks.
rtargs=()
[ -n "${RT:-}" ] && rtargs=(--rt-priority "$RT")
src=$(cd "$(dirname "$0")/.." && pwd)
echo "real: ${real_trials} trials of matmul:M=128,N=128,K=128, ${REAL_MODEL_TRIALS:-16} of small_cnn; 1 vs 2 worker ranks on this host (interleaved)${RT:+, real-time priority $RT}"
printf "%-8s %8s %6s %10s %12s %7s\n" task workers run wall_s best_ms load
for task in ${REAL_TASKS:-matmul model}; do
  for run in 1 2; do
    for w in 1 2; do
      out="$tmp/real-$task-$w-$run.json"
      if [ "$task" = matmul ]; then
        targs=(--workload matmul:M=128,N=128,K=128 --trials "$real_trials" --no-baseline --strategy "$strategy")
      else
        targs=("$src/examples/models/small_cnn/model.onnx" --input-shapes "data:[1,3,16,16]" --trials "${REAL_MODEL_TRIALS:-16}" --strategy "$strategy")
      fi
      load=$(cut -d' ' -f1 /proc/loadavg)
      start=$(date +%s.%N)
      "${mpi[@]}" -np $((w + 1)) "$loom" tune "${targs[@]}" "${rtargs[@]}" --output "$out" > "$tmp/real-$task-$w-$run.raw" 2>&1 || true
      end=$(date +%s.%N)
      tr '\r' '\n' < "$tmp/real-$task-$w-$run.raw" > "$tmp/real-$task-$w-$run.log"
      # matmul: "best: X ms ..."; a model: "kernel time per run (...): X ms tuned ..."
      if [ "$task" = matmul ]; then
        best=$(grep -a "^best:" "$tmp/real-$task-$w-$run.log" | sed -E 's/best: ([0-9.e-]+) ms.*/\1/')
      else
        best=$(grep -a "^kernel time per run" "$tmp/real-$task-$w-$run.log" | sed -E 's/.*: ([0-9.e-]+) ms tuned.*/\1/')
      fi
      printf "%-8s %8s %6s %10.1f %12s %7s\n" "$task" "$w" "$run" "$(awk "BEGIN{print $end - $start}")" "${best:-failed}" "$load"
    done
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
