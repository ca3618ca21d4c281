#!/usr/bin/python3
"""Compiles ONNX Runtime-quantized models with loom and compares with ONNX Runtime's int8 output.

Each directory (made by examples/models/make_quant_models.py) holds model.onnx,
test_data_set_0/{input_0,output_0}.pb (ONNX Runtime's output for the quantized model) and
float_output_0.pb (the float model's output) and ort_unoptimized_output_0.pb (ONNX Runtime with
its graph optimizations off). Passes when loom's output is within 2% of max|ORT int8| of it
everywhere and, for classifiers (outputs of 100 classes or more), has the same top-1 class.
A dynamically quantized model requantizes every activation from values computed in float, so a
float rounding difference upstream can move a quantization step and the outputs move with it
(ONNX Runtime's own optimized and unoptimized runs of the BERT-style encoder differ by 4.3%);
Loom computes those float ops as ORT's kernels round them (core/graph/qnn/OrtFloat.cpp), so the
2% bound holds for it too (the encoder's outputs are equal). Prints the difference to ORT int8,
to ORT unoptimized, ORT's optimized vs unoptimized spread and to float32 for each model.

Usage: check_quant_models.py LOOM DIR [DIR...]   (exit 0 all pass, 1 a failure)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

BOUND = 0.02


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def check(loom, d, tmp):
    name = os.path.basename(d.rstrip("/"))
    in_name, x = read_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"))
    _, ref = read_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"))
    _, ref_float = read_tensor(os.path.join(d, "float_output_0.pb"))
    _, ref_noopt = read_tensor(os.path.join(d, "ort_unoptimized_output_0.pb"))
    lib, inp, out = (os.path.join(tmp, name + s) for s in (".so", "_in.npz", "_out.npz"))
    np.savez(inp, **{in_name: x})
    for cmd in ([loom, "compile", os.path.join(d, "model.onnx"), "-o", lib],
                [loom, "run", lib, "--inputs", inp, "--outputs", out]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL {name}: {' '.join(cmd[1:2])} exited {r.returncode}: {r.stderr.strip()[-2000:]}")
            return False
    with np.load(out) as z:
        y = z[z.files[0]].astype(np.float64).reshape(ref.shape)
    scale = max(np.abs(ref).max(), 1e-12)
    err = np.abs(y - ref).max() / scale
    err_noopt = np.abs(y - ref_noopt).max() / scale
    spread = np.abs(ref_noopt - ref).max() / scale
    bound = BOUND
    err_float = np.abs(y - ref_float).max() / max(np.abs(ref_float).max(), 1e-12)
    ort_float = np.abs(ref - ref_float).max() / max(np.abs(ref_float).max(), 1e-12)
    classifier = ref.ndim == 2 and ref.shape[-1] >= 100 and "bert" not in name
    top1 = int(np.argmax(y)) == int(np.argmax(ref)) if classifier else True
    ok = err <= bound and top1
    exact = np.mean(y == ref) * 100
    print(f"{'PASS' if ok else 'FAIL'} {name}: max|loom - ORT int8| {100 * err:.3f}% of max|ref| "
          f"(bound {100 * bound:.2f}%; {exact:.1f}% of outputs equal; vs ORT unoptimized {100 * err_noopt:.3f}%, "
          f"ORT optimized vs unoptimized {100 * spread:.3f}%)" + (f", top-1 {'same' if top1 else 'DIFFERENT'}" if classifier else "")
          + f"; vs float32: loom {100 * err_float:.2f}%, ORT int8 {100 * ort_float:.2f}% of max|float|")
    return ok


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    loom, dirs = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        results = [check(loom, d, tmp) for d in dirs]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
