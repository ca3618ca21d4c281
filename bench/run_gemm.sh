#!/usr/bin/env bash
# Runs bench_gemm with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for this command alone, so
# OpenBLAS picks its own (AVX-512) kernel. Usage: bench/run_gemm.sh [build-dir] [bench_gemm args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
cmake --build "$build" --target bench_gemm >/dev/null 2>&1 || cmake --build "$build" --target bench_gemm
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$build/bin/bench_gemm" "$@"
