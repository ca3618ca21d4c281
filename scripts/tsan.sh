#!/usr/bin/env bash
# ThreadSanitizer runs of the concurrency suites (the runtime's thread pool, the tuner's process
# runner and the tuner, code generation on unordered threads), RUNS times each (default 3):
# scripts/test.sh --tsan, which builds them in build-tsan/ (-DLOOM_TSAN=ON) with
# tests/sanitizers/tsan.supp (README there).
# Usage: bash scripts/tsan.sh [RUNS]   (exit code non-zero on any TSan report or failure)
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/test.sh --tsan --repeat "until-fail:${1:-3}"
