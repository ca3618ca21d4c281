#!/bin/bash
# Runs the CUDA path on a GPU machine from what bench/gpu/pack.sh packed (.gpu/loom-gpu.tar.xz
# beside the repository's checkout): the CUDA device tests, models through `loom onnx-test` and
# bench_model_gpu, `loom bench-op` on matmul / conv2d, and PyTorch's times for the same work
# (torch_ref.py); compute-sanitizer over the device tests; `loom tune --target cuda`; fuzz_difftest's
# CUDA (and CPU) variants over random TIR programs, DIFF_PROCS processes (14) on disjoint seed ranges
# (DIFF_SEED + k * 10000) for DIFF_SECONDS (150) each, CUDA variants for every DIFF_GPU_EVERY-th
# program (1). Logs go to /tmp/loom-out, packed into $OUT/logs.tgz after each step.
# Usage, from the checkout's root:
#   bash .gpu/device_run.sh [steps...]
#   (steps: info tests sanitize models zoo-cpu resnet18 bench defaults torch tune difftest;
#    default: info tests models bench torch)
set -u
R=$PWD; G=$R/.gpu; T=/tmp/loom; O=/tmp/loom-out
mkdir -p "$T" "$O"
[ -x "$T/bin/loom" ] || tar -C "$T" -xJf "$G/loom-gpu.tar.xz" || exit 1
# Binaries rebuilt since (pack.sh --update) replace the packed ones.
[ -f "$G/loom-gpu-update.tar.xz" ] && { tar -C "$T" -xJf "$G/loom-gpu-update.tar.xz" || exit 1; }
export LOOM_DEVICE_PATH=$T/lib
L=$T/lib/sys:$T/lib
# The build's baked paths (LOOM_BINARY_DIR, LOOM_SOURCE_DIR) point into the worktree it was built in
# (pack.sh wrote the build's path to build-dir; /work/wt/gpu/build for a pack made before it did):
# the pack is linked there, and the checkout's examples/ and runtime/ (fuzz_difftest's C backend
# includes runtime/include) beside it.
B=$(cat "$T/build-dir" 2>/dev/null || echo /work/wt/gpu/build); S=$(dirname "$B")
[ -e "$B" ] || { mkdir -p "$S" && ln -s "$T" "$B"; }
for d in examples runtime; do [ -e "$S/$d" ] || ln -s "$R/$d" "$S/$d"; done
nvrtc=$(ldconfig -p | awk '/libnvrtc\.so[. ]/ {print $NF; exit}')
[ -n "$nvrtc" ] || nvrtc=$(ls /usr/local/cuda*/lib64/libnvrtc.so* 2>/dev/null | head -1)
[ -n "$nvrtc" ] || nvrtc=$(find / -name 'libnvrtc.so*' -not -path '/proc/*' 2>/dev/null | grep -v builtins | head -1)
export LOOM_NVRTC=$nvrtc
steps=${*:-info tests models bench torch}
run() {  # run NAME TIMEOUT CMD...: output to $O/NAME.log and a summary line
  local name=$1 t=$2; shift 2
  local s=$(date +%s.%N)
  LD_LIBRARY_PATH=$L timeout "$t" "$@" > "$O/$name.log" 2>&1
  local rc=$?
  printf '== %-28s rc=%-3s %6.1f s\n' "$name" "$rc" "$(python3 -c "print($(date +%s.%N) - $s)")" | tee -a "$O/summary.txt"
  tail -n 25 "$O/$name.log"
}
for step in $steps; do
  case $step in
  info)
    { head -2 /etc/os-release; uname -r; nvidia-smi; nvcc --version | tail -2; echo "LOOM_NVRTC=$LOOM_NVRTC"
      ldconfig -p | grep -i 'libLLVM\|Qt6Core\|libonnx\|protobuf\|libz3\|libxml2\|libxgboost\|libmpi\|libcuda\.' 
      echo "missing:"; LD_LIBRARY_PATH=$L ldd "$T/bin/loom" "$T/tests/gpu_test_cuda_device" | grep 'not found'
    } > "$O/info.log" 2>&1; cat "$O/info.log" ;;
  tests)
    run cuda_device 150 "$T/tests/gpu_test_cuda_device"
    grep -E '^(FAIL|PASS|SKIP|Totals)' "$O/cuda_device.log" | head -60
    run cuda_ptx 90 "$T/tests/gpu_test_cuda_ptx"
    run gpu_cli 60 "$T/tests/gpu_test_gpu_cli" ;;
  models)
    run onnx_test_examples 120 "$T/bin/loom" onnx-test -v --target cuda examples/models/small_cnn examples/models/fire_net examples/models/transformer_block
    run model_small_cnn 90 "$T/bin/bench_model_gpu" examples/models/small_cnn --repeat 100
    for m in "$G"/zoo/*/; do
      run "model_$(basename "$m")" 150 "$T/bin/bench_model_gpu" "$m" --repeat 50 --no-cpu
    done ;;
  bench)
    for n in default matmul_shared16 matmul_vthread_16x4; do
      s=; [ $n = default ] || s="--schedule $G/$n.py"
      run "op_matmul256_$n" 60 "$T/bin/loom" bench-op -w matmul:M=256,N=256,K=256 --target cuda --repeat 50 $s
      run "op_matmul1024_$n" 60 "$T/bin/loom" bench-op -w matmul:M=1024,N=1024,K=1024 --target cuda --repeat 30 --no-check $s
    done
    run op_matmul4096_vthread 90 "$T/bin/loom" bench-op -w matmul:M=4096,N=4096,K=4096 --target cuda --repeat 10 --no-check --schedule "$G/matmul_vthread_16x4.py"
    run op_conv_resnet_default 90 "$T/bin/loom" bench-op -w conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,stride=1 --target cuda --repeat 30 --no-check ;;
  defaults)  # the preset's default GPU schedule of matmul by size (64x64 register tiles from 1024^2 on)
    for n in 256 512 1024 2048 4096; do
      chk=--no-check; [ $n = 256 ] && chk=
      run "op_matmul${n}_default" 60 "$T/bin/loom" bench-op -w matmul:M=$n,N=$n,K=$n --target cuda --repeat 20 $chk
    done
    PYTHONUNBUFFERED=1 timeout 60 python3 "$G/torch_ref.py" --matmul 256 512 1024 2048 4096 --models > "$O/torch_matmul.log" 2>&1
    cat "$O/torch_matmul.log" ;;
  torch)
    s=$(date +%s); PYTHONUNBUFFERED=1 timeout 120 python3 "$G/torch_ref.py" > "$O/torch_ref.log" 2>&1
    echo "== torch_ref rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/summary.txt"; cat "$O/torch_ref.log" ;;
  sanitize)
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    run memcheck 150 "$cs" --tool memcheck --error-exitcode 3 "$T/tests/gpu_test_cuda_device" runOnTheDevice presetsOnTheDevice schedulesOnTheDevice
    run racecheck 120 "$cs" --tool racecheck --error-exitcode 3 "$T/tests/gpu_test_cuda_device" runOnTheDevice schedulesOnTheDevice ;;
  zoo-cpu)  # the zoo models against their CPU build on this machine's cores, and through onnx-test
    for m in "$G"/zoo/*/; do
      run "model_cpu_$(basename "$m")" 150 "$T/bin/bench_model_gpu" "$m" --repeat 50
      run "onnx_test_$(basename "$m")" 120 "$T/bin/loom" onnx-test -v --target cuda "$m"
    done ;;
  resnet18)  # made here by examples/models/make_torch_models.py (torch's legacy exporter), then timed
    s=$(date +%s)
    PYTHONUNBUFFERED=1 timeout 120 python3 -c "
import runpy, sys, torch
export = torch.onnx.export
def legacy(*a, **k):
    k.setdefault('dynamo', False)
    return export(*a, **k)
torch.onnx.export = legacy
sys.argv = ['make_torch_models.py', '--out', '/tmp/models', '--only', 'resnet18']
runpy.run_path('examples/models/make_torch_models.py', run_name='__main__')
" > "$O/make_resnet18.log" 2>&1
    echo "== make_resnet18 rc=$? $(( $(date +%s) - s )) s" | tee -a "$O/summary.txt"; tail -5 "$O/make_resnet18.log"
    [ -f /tmp/models/resnet18/model.onnx ] && run model_resnet18 240 "$T/bin/bench_model_gpu" /tmp/models/resnet18 --repeat 50 ;;
  tune)
    run tune_matmul1024 150 "$T/bin/loom" tune -w matmul:M=1024,N=1024,K=1024 --target cuda --trials 32 --output "$O/tune_matmul1024.json"
    run op_matmul1024_tuned 60 "$T/bin/loom" bench-op -w matmul:M=1024,N=1024,K=1024 --target cuda --repeat 30 --no-check --tuning-records "$O/tune_matmul1024.json"
    conv=conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,stride=1
    run tune_conv_resnet 150 "$T/bin/loom" tune -w $conv --target cuda --trials 32 --output "$O/tune_conv.json"
    run op_conv_resnet_tuned 60 "$T/bin/loom" bench-op -w $conv --target cuda --repeat 30 --no-check --tuning-records "$O/tune_conv.json" ;;
  difftest)  # random TIR programs: CPU variants and, for each, CUDA variants (tests/fuzz/README.md)
    n=${DIFF_PROCS:-14}; secs=${DIFF_SECONDS:-150}; base=${DIFF_SEED:-400000}
    cevery=10; command -v cc > /dev/null || cevery=0
    s=$(date +%s)
    for k in $(seq 0 $((n - 1))); do
      LOOM_DIFF_LOWERED=1 LD_LIBRARY_PATH=$L timeout $((secs + 45)) "$T/fuzz/fuzz_difftest" --tir 10000 \
        --seed $((base + k * 10000)) --gpu-every ${DIFF_GPU_EVERY:-1} --gpu-targets cuda --c-every $cevery --max-seconds "$secs" \
        > "$O/difftest_$k.out" 2> "$O/difftest_$k.err" &
    done
    wait
    echo "== difftest $n processes, $(( $(date +%s) - s )) s" | tee -a "$O/summary.txt"
    for k in $(seq 0 $((n - 1))); do
      echo "-- $k: $(grep -c '=== MISMATCH' "$O/difftest_$k.err") mismatches; $(tail -n 1 "$O/difftest_$k.err" | cut -c1-200)"
      cat "$O/difftest_$k.out"
    done | tee "$O/difftest_summary.txt" | tail -n 60
    grep -h -A3 '=== MISMATCH' "$O"/difftest_*.err | cut -c1-300 | head -n 40 ;;
  esac
  [ -n "${OUT:-}" ] && tar -C "$O" -czf "$OUT/logs.tgz" .  # each step's logs come back even if a later one runs out of time
done
echo "== summary"; cat "$O/summary.txt"

for f in "$O"/op_*.log; do [ -e "$f" ] || continue; echo "$(basename "$f" .log): $(grep -h -E '^(check|time|throughput)' "$f" | tr '\n' ' ')"; done
[ -n "${OUT:-}" ] && tar -C "$O" -czf "$OUT/logs.tgz" . && cp "$O/summary.txt" "$OUT/"
