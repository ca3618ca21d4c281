#!/usr/bin/env bash
# Fails when a folder includes what DESIGN.md forbids it: Qt in core/ or runtime/, LLVM outside
# codegen/, ONNX or LLVM in runtime/, Python (Python.h, pybind11) outside python/.
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
check() {  # check DESC PATTERN DIR...
  local desc=$1 pat=$2; shift 2
  local hits
  hits=$(grep -rnE "$pat" "$@" --include='*.h' --include='*.cpp' --include='*.hpp' 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layer violation: $desc"; echo "$hits"; fail=1
  fi
}
check "core/ includes Qt" '#include\s*[<"]Q' core
check "runtime/ includes Qt" '#include\s*[<"]Q' runtime
# The fuzz targets build in a clang build without Qt (LOOM_FUZZ).
check "tests/fuzz/ includes Qt" '#include\s*[<"]Q' tests/fuzz
check "runtime/ includes LLVM" '#include\s*[<"]llvm' runtime
check "runtime/ includes ONNX" '#include\s*[<"]onnx' runtime
# MPI only in the distributed tuner (core/tune/mpi); the app reaches it through its MPI-free header.
check "mpi.h outside core/tune/mpi/" '#include\s*[<"]mpi\.h' runtime views app codegen python $(find core -mindepth 1 -maxdepth 2 -type d ! -path core/tune ! -path core/tune/mpi) $(find core core/tune -maxdepth 1 -type f)
check "LLVM outside codegen/" '#include\s*[<"](llvm|llvm-c)/' core runtime views app
torch_hits=$(grep -rnlE '#include\s*[<"](torch|ATen|c10)/' core runtime views app codegen \
  --include='*.h' --include='*.cpp' 2>/dev/null | grep -v '^core/frontend/torch/')
if [ -n "$torch_hits" ]; then
  echo "layer violation: libtorch (torch/ATen/c10) included outside core/frontend/torch"; echo "$torch_hits"; fail=1
fi
check "Python outside python/" '#include\s*[<"](Python\.h|pybind11/)' core runtime codegen views app
if [ $fail -eq 0 ]; then echo "layers: ok"; fi
exit $fail
