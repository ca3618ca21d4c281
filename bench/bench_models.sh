#!/usr/bin/env bash
# Loom vs ONNX Runtime end-to-end latency on the model zoo of examples/models/make_torch_models.py
# (16 models: ResNet, MobileNet, EfficientNet, RegNet, ResNeXt, ShuffleNet, DenseNet, GoogLeNet,
# SqueezeNet, DeepLabV3, an FPN text detector, a ViT, a transformer and a BERT-style encoder).
# Usage: bench/bench_models.sh BUILD [extra bench_models.py options, e.g. --repeat 50 --threads 1]
# LOOM_ZOO=resnet18,shufflenet_v2_x1_0 limits the run to those models.
# Installs python3-torch/torchvision (scripts/install-bench-deps.sh) to make the models, and
# onnxruntime from PyPI into a venv at BUILD/bench-venv (Debian's numpy and onnx are reused).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD [bench_models.py options]" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$(cd "$1" && pwd)"
shift
LOOM="$BUILD/bin/loom"
[ -x "$LOOM" ] || { echo "bench_models: $LOOM not built (ninja -C $BUILD loom)" >&2; exit 2; }
bash "$ROOT/scripts/install-bench-deps.sh"
MODELS="$ROOT/build/models"
ONLY=()
[ -n "${LOOM_ZOO:-}" ] && ONLY=(--only "$LOOM_ZOO")
/usr/bin/python3 "$ROOT/examples/models/make_torch_models.py" --out "$MODELS" "${ONLY[@]}" 2>&1 | grep -v -i warning || true
VENV="$BUILD/bench-venv"
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$VENV"
fi
"$VENV/bin/python" -c "import onnxruntime" 2>/dev/null || "$VENV/bin/pip" install -q onnxruntime
NAMES="${LOOM_ZOO:-$(/usr/bin/python3 -c "import sys; sys.path.insert(0, '$ROOT/examples/models'); \
import make_torch_models as m; print(','.join(m.MODELS))" 2>/dev/null)}"
DIRS=()
for n in ${NAMES//,/ }; do DIRS+=("$MODELS/$n"); done
exec "$VENV/bin/python" "$ROOT/bench/bench_models.py" --loom "$LOOM" --work "$BUILD/bench-models" "$@" "${DIRS[@]}"
