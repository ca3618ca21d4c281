#!/usr/bin/env bash
# Writes tests/fuzz/corpus/torch/NAME.ts from the TorchScript cases of tests/torch/make_torch_cases.py
# (real torch.jit.trace / torch.jit.script modules saved by PyTorch; the normal build makes them
# in build/torch-cases/ for torch.test_torch_import), with the input shapes of its cases.txt.
# Usage: bash tests/fuzz/tools/make_torch_seeds.sh [BUILD_DIR]   (needs torch_fuzz_seed: libtorch)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
cases=$build/torch-cases
[ -f "$cases/cases.txt" ] || python3 tests/torch/make_torch_cases.py "$cases"
out=tests/fuzz/corpus/torch
mkdir -p "$out"
while IFS='|' read -r name shapes; do
  [ -n "$name" ] || continue
  "$build/fuzz/torch_fuzz_seed" "$cases/$name.pt" "$shapes" "$out/$name.ts" || echo "skipped $name" >&2
done < "$cases/cases.txt"
"$build/fuzz/torch_fuzz_seed" --dict > tests/fuzz/dict/torch.dict
