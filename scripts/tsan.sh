#!/usr/bin/env bash
# ThreadSanitizer run of the concurrency tests that build without the whole compiler: the runtime's
# thread pool (parallel launches, barriers, nested and concurrent launches, private pools, a forked
# child's fresh pool, workspaces). Builds only that test in build-tsan/ (gcc -fsanitize=thread).
# Usage: bash scripts/tsan.sh [RUNS]   (default 3 runs; exit code 1 on any TSan report or failure)
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
runs=${1:-3}
build=build-tsan
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_BUILD_PYTHON=OFF \
    -DCMAKE_CXX_FLAGS=-fsanitize=thread -DCMAKE_C_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
fi
cmake --build "$build" -j "${TSAN_BUILD_JOBS:-2}" --target runtime_test_threadpool
# die_after_fork=0: forkedChildGetsAFreshPool starts threads in a child of a threaded process.
export TSAN_OPTIONS="die_after_fork=0 halt_on_error=0 suppressions=$PWD/tests/fuzz/tsan.supp ${TSAN_OPTIONS:-}"
status=0
for ((k = 1; k <= runs; ++k)); do
  log="$build/tsan-threadpool-$k.log"
  set +e
  "$build/tests/runtime_test_threadpool" > "$log" 2>&1
  rc=$?
  set -e
  reports=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
  echo "run $k: exit $rc, $reports TSan reports, $(grep -o 'Totals:.*' "$log" || echo 'no totals') (log: $log)"
  if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then status=1; fi
done
exit $status
