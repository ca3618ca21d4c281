#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png with loom-studio --screenshot (offscreen). Usage:
#   scripts/screenshots.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
studio=$build/bin/loom-studio
out=$root/docs/screenshots
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen
"$studio" --screenshot "$out/workbench.png" --size 1600x1000 --preset "matmul:M=256,N=256,K=256" \
  --schedule "$root/examples/schedules/matmul_tiled.py" --model "$root/examples/models/small_cnn/model.onnx" \
  --link-line 10 --run --find conv
"$studio" --screenshot "$out/workbench-dark.png" --size 1600x1000 --dark --preset "matmul:M=128,N=128,K=128" \
  --schedule "$root/examples/schedules/matmul_tiled.py" --model "$root/examples/models/transformer_block/model.onnx" \
  --graph imported
# The tuning monitor after 32 trials of a matmul, the best candidate opened in the editor.
"$studio" --screenshot "$out/tuning.png" --size 1600x1000 --preset "matmul:M=256,N=256,K=256" \
  --model "$root/examples/models/small_cnn/model.onnx" --tune 32
# fire_net's first fused group (its stem conv, with the image's packing into NCHW3c fused in)
# opened in the schedule editor with a first schedule and run (beside the model's default
# schedule), the other groups collapsed to one node each.
conv_script=$(mktemp --suffix=.py)
trap 'rm -f "$conv_script"' EXIT
cat > "$conv_script" <<'PY'
# A first schedule: the image read in place, output channel blocks in parallel, the 16 lanes of a
# block innermost, vectorized.
sch.compute_inline(sch.get_block("T_layout_transform"))
conv = sch.get_block("conv2d_NCHWc")
n, oc, oh, ow, ob, rco, ry, rx, rci = sch.get_loops(conv)
sch.reorder(rco, ry, rx, rci, ob)
sch.parallel(oc)
sch.vectorize(ob)
PY
"$studio" --screenshot "$out/fused-group.png" --size 1600x1000 --model "$root/examples/models/fire_net/model.onnx" \
  --open-group 0 --schedule "$conv_script" --run --collapse 1,2,3,4,5,6,7,8,9,10,11,12,13
# A GPU target: the OpenCL C of the matmul's default GPU schedule, run on the OpenCL device (PoCL),
# its reduction loop (lowered line 15) colour-linked to the source lines the backend emitted for it.
"$studio" --screenshot "$out/opencl.png" --size 1600x1000 --dark --preset "matmul:M=256,N=256,K=256" \
  --target opencl --run --model "$root/examples/models/small_cnn/model.onnx" --collapse all --link-line 15
# Profile and roofline of ResNet-18 (examples/models/make_torch_models.py --only resnet18 makes it in
# BUILD/models; LOOM_RESNET18 points elsewhere), else of small_cnn.
cnn=${LOOM_RESNET18:-$build/models/resnet18/model.onnx}
[ -f "$cnn" ] || cnn=$root/examples/models/small_cnn/model.onnx
"$studio" --screenshot "$out/profile.png" --size 1600x1000 --model "$cnn" --profile --profile-runs 10 --collapse all
"$studio" --screenshot "$out/roofline.png" --size 1600x1000 --model "$cnn" --profile --profile-runs 10 --grab roofline
# Keep the committed images small.
if command -v pngquant >/dev/null; then pngquant --force --ext .png "$out"/*.png; fi
ls -l "$out"
