#!/usr/bin/env bash
# The test command: install what is needed, build what the tests need, run the fast suite.
# Usage: bash scripts/test.sh [--sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# ccache hits across checkouts in different folders: paths under the checkout's parent are
# hashed relative to the build directory.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
build=build
extra=()
if [ "${1:-}" = "--sanitize" ]; then
  build=build-asan
  extra=(-DLOOM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
cmake -S . -B "$build" -G Ninja "${extra[@]}"
cmake --build "$build" -j "$(nproc)"
# Suites labelled slow (real PyTorch models, made on demand) and the conformance subset (a quick
# sample of onnx.node_expected_pass, which runs in full) are left out.
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE "slow|subset"
