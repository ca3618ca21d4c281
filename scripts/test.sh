#!/usr/bin/env bash
# The test command: install what is needed, build what the tests need, run the fast suite.
# Usage: bash scripts/test.sh [--sanitize | --tsan]
#   --sanitize  ASan+UBSan: every library and suite instrumented in build-asan/, the fast suite run
#               with the options and suppressions of tests/sanitizers/ (README there)
#   --tsan      ThreadSanitizer: the concurrency suites only (thread pool, tuner runner and tuner,
#               parallel LLVM code generation)
#               in build-tsan/
# Extra ctest arguments may follow, e.g. bash scripts/test.sh --sanitize -R '^schedule\.'
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache hits across checkouts in different folders: paths under the checkout's parent are
# hashed relative to the build directory.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
build=build
extra=()
targets=()
select=(-LE "slow|subset")
mode=""
if [ "${1:-}" = --sanitize ] || [ "${1:-}" = --tsan ]; then
  mode=$1
  shift
fi
supp="$PWD/tests/sanitizers"
# -O1 with line tables: what the sanitizers' authors advise (fast enough, exact stacks), and a
# build that takes about half the time of -O2 -g.
san_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1")
case "$mode" in
  --sanitize)
    build=build-asan
    extra=(-DLOOM_SANITIZE=ON "${san_flags[@]}")
    # Stop at the first report with a stack; leaks count (LSan), except the suppressed ones of
    # third-party libraries (lsan.supp); UBSan is built with -fno-sanitize-recover, so any
    # undefined behaviour aborts the test. allocator_may_return_null: an allocation too big to
    # satisfy throws std::bad_alloc as without ASan (Loom reports it as a user error).
    # (tests/sanitizers/asan.options; the MPI suites add the slow unwinder to it, tests/tune_mpi.)
    export ASAN_OPTIONS="${ASAN_OPTIONS:-$(cat "$supp/asan.options")}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0}"
    ;;
  --tsan)
    build=build-tsan
    extra=(-DLOOM_TSAN=ON "${san_flags[@]}")
    # codegen.test_llvm_threads: code generation on threads that nothing orders (LLVM's timer lock).
    # The Studio's background-job suites are built but not run: a few reports remain inside
    # uninstrumented Qt's thread pool and event queue (tests/sanitizers/README.md).
    targets=(runtime_test_threadpool tune_test_runner tune_test_tuner codegen_test_llvm_threads
             studio_test_tuning_monitor studio_test_export_dialog studio_test_tuning_model)
    select=(-R '^(runtime\.test_threadpool|tune\.test_runner|tune\.test_tuner|codegen\.test_llvm_threads)$')
    # die_after_fork=0: the thread pool's fork test and the tuner's worker processes fork a
    # process that has threads, which TSan refuses by default (the child only execs or exits).
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$supp/tsan.supp}"
    ;;
esac
cmake -S . -B "$build" -G Ninja "${extra[@]}"
cmake --build "$build" -j "$(nproc)" ${targets[@]:+--target "${targets[@]}"}
# Suites labelled slow (real PyTorch models, made on demand) and the conformance subset (a quick
# sample of onnx.node_expected_pass, which runs in full) are left out.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "${select[@]}" "$@"
