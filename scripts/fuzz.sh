#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang-19, ASan+UBSan, build-fuzz/) and fuzzes them.
# Usage: bash scripts/fuzz.sh [TARGET|all] [SECONDS]   (default: all, 60 seconds each)
# TARGET: tvmscript schedule_script onnx package npy records torch session. Each run starts from the committed
# seeds (tests/fuzz/corpus/TARGET, only read) and keeps what it finds in build-fuzz/fuzz-corpus/TARGET;
# crashing inputs land in build-fuzz/fuzz-artifacts/TARGET/. Exit code 1 when any target found one.
# Needs clang-19, libfuzzer-19-dev and libclang-rt-19-dev (not installed by install-deps.sh: CI does not fuzz).
# Extra libFuzzer flags: FUZZ_FLAGS="-jobs=2 -workers=2" bash scripts/fuzz.sh onnx 3600
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(tvmscript schedule_script onnx package npy records torch session)
which=${1:-all}
seconds=${2:-60}
if [ "$which" != all ]; then targets=("$which"); fi
if ! command -v clang++-19 > /dev/null || [ ! -e /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  echo "fuzz.sh: needs clang-19 and libfuzzer-19-dev (apt-get install clang-19 libfuzzer-19-dev libclang-rt-19-dev)" >&2
  exit 2
fi
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S . -B "$build" -G Ninja -DLOOM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 \
    -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON
fi
# FUZZ_NO_BUILD=1: run the targets as built (e.g. while another target is still building).
if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  cmake --build "$build" -j "${FUZZ_BUILD_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
fi
status=0
summary=()
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t" artifacts="$build/fuzz-artifacts/$t/"
  mkdir -p "$corpus" "$artifacts"
  seeds=(tests/fuzz/corpus/"$t")
  [ -d tests/fuzz/regressions/"$t" ] && seeds+=(tests/fuzz/regressions/"$t")
  dict=()
  [ -f tests/fuzz/dict/"$t".dict ] && dict=(-dict=tests/fuzz/dict/"$t".dict)
  log="$build/fuzz-$t.log"
  echo "== fuzz_$t for ${seconds}s (log: $log)"
  set +e
  "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "${dict[@]}" ${FUZZ_FLAGS:-} "$corpus" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  set -e
  # The last status line: "#N DONE cov: C ft: F corp: ... exec/s: E rss: R".
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | grep -oE '[0-9]+' || echo "?")
  ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+' || echo "?")
  if [ $rc -ne 0 ]; then
    status=1
    echo "   FOUND: $(grep -m1 -E 'ERROR: |==ERROR|terminate called|runtime error' "$log" || echo "exit $rc")"
    ls "$artifacts" | sed 's/^/   artifact: /'
  fi
  summary+=("$(printf '%-16s %4ss  execs %-9s exec/s %-6s edges(cov) %-6s features %-6s %s' "$t" "$seconds" "$execs" "$rate" "$cov" "$ft" \
    "$([ $rc -eq 0 ] && echo clean || echo FOUND)")")
done
printf '%s\n' "${summary[@]}"
exit $status
