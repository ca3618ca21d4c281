#!/bin/bash
# Packs what a GPU machine without Loom's build dependencies needs to run the CUDA path: the loom
# CLI, bench_model_gpu, the CUDA device test binaries, fuzz_difftest (its CUDA variants), the CUDA
# device plugin, the build's own path (build-dir: device_run.sh links it there, for the paths the
# binaries have baked in), and every shared
# library they load that is not glibc/libstdc++ (LLVM 19, ONNX, protobuf, xgboost, Open MPI, Qt 6
# Core/Test, ICU ...), as one tar.xz. Two large libraries that the CUDA path never calls are
# replaced by stubs: libz3 (LLVM's optional constraint solver: each Z3_* function LLVM imports
# aborts if called) and libicudata (the ICU data table libxml2 pulls in; an empty table).
#
# Usage: bench/gpu/pack.sh BUILD_DIR OUT_DIR   (then bench/gpu/device_run.sh runs on the machine)
#        bench/gpu/pack.sh --update BUILD_DIR OUT_DIR PATH...   (rebuilt binaries only, as
#        loom-gpu-update.tar.xz, unpacked over the first; PATH relative to BUILD_DIR)
set -euo pipefail
if [ "${1:-}" = --update ]; then
  build=$(readlink -f "$2"); out=$(readlink -f "$3"); shift 3
  tar -C "$build" -cf - "$@" | xz -6 -T2 > "$out/loom-gpu-update.tar.xz"
  ls -la "$out/loom-gpu-update.tar.xz"
  exit 0
fi
build=$(readlink -f "$1"); out=$(readlink -f "$2")
here=$(dirname "$(readlink -f "$0")")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib/sys" "$stage/tests" "$stage/fuzz" "$out"
bins=(bin/loom bin/bench_model_gpu tests/gpu_test_cuda_device tests/gpu_test_cuda_ptx tests/gpu_test_gpu_cli fuzz/fuzz_difftest)
for b in "${bins[@]}"; do cp "$build/$b" "$stage/$b"; done
cp "$build/lib/libloom_device_cuda.so" "$stage/lib/"
# The OpenCL plugin too (it dlopens the ICD loader, if any): test_gpu_cli checks its messages.
[ -f "$build/lib/libloom_device_opencl.so" ] && cp "$build/lib/libloom_device_opencl.so" "$stage/lib/"
echo "$build" > "$stage/build-dir"
# Shared libraries: all that ldd resolves, less the C/C++ runtime the machine has (newer there).
skip='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+|linux-vdso)\.'
for b in "${bins[@]}"; do ldd "$build/$b"; done | awk '$3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $skip ]] && continue
    case $name in libz3.so.*|libicudata.so.*) continue ;; esac
    cp -L "$path" "$stage/lib/sys/$name"
  done
# The stubs.
llvm=$(ldd "$build/bin/loom" | awk '$1 ~ /^libLLVM/ {print $3}')
{
  echo '#include <stdlib.h>'
  nm -D --undefined-only "$llvm" | awk '$2 ~ /^Z3_/ {print "void " $2 "(void) { abort(); }"}'
} > "$stage/z3stub.c"
gcc -shared -fPIC -O1 -Wl,-soname,libz3.so.4 -o "$stage/lib/sys/libz3.so.4" "$stage/z3stub.c"
icu=$(ldd "$build/bin/loom" | awk '$1 ~ /^libicudata/ {print $1}')
sym=$(nm -D --undefined-only "$(ldd "$build/bin/loom" | awk '$1 ~ /^libicuuc/ {print $3}')" | awk '$2 ~ /^icudt/ {print $2}')
echo "const char $sym[64] = {0};" > "$stage/icustub.c"
gcc -shared -fPIC -Wl,-soname,"$icu" -o "$stage/lib/sys/$icu" "$stage/icustub.c"
rm "$stage/z3stub.c" "$stage/icustub.c"
cp "$here/device_run.sh" "$here/torch_ref.py" "$stage/"
tar -C "$stage" -cf - . | xz -9 -T2 > "$out/loom-gpu.tar.xz"
ls -la "$out/loom-gpu.tar.xz"
