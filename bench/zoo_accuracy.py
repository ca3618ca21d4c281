#!/usr/bin/env python3
"""How close Loom and ONNX Runtime come to PyTorch on the model zoo, and to the exact result.

For each MODEL_DIR (model.onnx + test_data_set_0/input_0.pb, output_0.pb with PyTorch's output):
compiles it with `loom compile` (untuned, plus any --compile-arg), runs it and an ONNX Runtime
session on the stored input, and prints per model the elements that miss PyTorch's output at the
house tolerance (|got - want| <= atol + rtol |want|, rtol 1e-3, atol 1e-5; NaN always misses)
and the worst error / tolerance, for Loom and for ORT. `--float64` also evaluates the model in
float64 (PyTorch ops in double on the stored float32 weights and input; only the CNN ops the zoo
uses: Conv, pools, Relu, Sigmoid, Add, Mul, Concat, Split, Pad, Gemm, nearest Resize, ...) and
prints each one's relative rms error against that exact result, PyTorch's own included: the
misses against PyTorch are the sum of two errors, and this shows whose they are.
Needs numpy, onnx and onnxruntime (bench/bench_models.sh makes a venv with them); --float64 needs torch.
Usage: zoo_accuracy.py --loom BUILD/bin/loom [--work DIR] [--float64] [--compile-arg ARG]... MODEL_DIR...
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def misses(got, want, rtol=1e-3, atol=1e-5):
    e = np.abs(got.astype(np.float64) - want)
    tol = atol + rtol * np.abs(want)
    return int((~(e <= tol)).sum()), float(np.nanmax(e / tol)) if e.size else 0.0


def float64_run(model, x):
    """The model's first output evaluated in float64 with PyTorch ops (CNN ops only)."""
    import torch
    import torch.nn.functional as F
    dt = torch.float64
    env = {}
    for i in model.graph.initializer:
        a = numpy_helper.to_array(i).copy()
        env[i.name] = torch.from_numpy(a).to(dt) if a.dtype == np.float32 else torch.from_numpy(a)
    env[model.graph.input[0].name] = torch.from_numpy(x.copy()).to(dt)
    for n in model.graph.node:
        A = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        I = [env[i] if i else None for i in n.input]
        t = n.op_type
        pads = A.get("pads", [0, 0, 0, 0])
        if t == "Conv":
            xx = F.pad(I[0], (pads[1], pads[3], pads[0], pads[2]))
            y = [F.conv2d(xx, I[1], I[2] if len(I) > 2 else None, A.get("strides", [1, 1]), 0,
                          A.get("dilations", [1, 1]), A.get("group", 1))]
        elif t in ("Relu", "Sigmoid"):
            y = [torch.relu(I[0]) if t == "Relu" else torch.sigmoid(I[0])]
        elif t in ("Add", "Mul"):
            y = [I[0] + I[1] if t == "Add" else I[0] * I[1]]
        elif t == "MaxPool":
            xx = F.pad(I[0], (pads[1], pads[3], pads[0], pads[2]), value=-float("inf"))
            y = [F.max_pool2d(xx, A["kernel_shape"], A.get("strides", [1, 1]), 0, A.get("dilations", [1, 1]),
                              bool(A.get("ceil_mode", 0)))]
        elif t == "AveragePool" and pads[0] == pads[2] and pads[1] == pads[3]:
            y = [F.avg_pool2d(I[0], A["kernel_shape"], A.get("strides", [1, 1]), (pads[0], pads[1]),
                              bool(A.get("ceil_mode", 0)), bool(A.get("count_include_pad", 0)))]
        elif t == "GlobalAveragePool":
            y = [I[0].mean(dim=(2, 3), keepdim=True)]
        elif t == "Flatten":
            y = [I[0].reshape(I[0].shape[0], -1)]
        elif t == "Gemm" and A.get("transA", 0) == 0 and A.get("alpha", 1.0) == 1.0 and A.get("beta", 1.0) == 1.0:
            y = [I[0] @ (I[1].t() if A.get("transB", 0) else I[1]) + I[2]]
        elif t == "Constant":
            a = numpy_helper.to_array(A["value"]).copy()
            y = [torch.from_numpy(a).to(dt) if a.dtype == np.float32 else torch.from_numpy(a)]
        elif t == "Pad" and A.get("mode", b"constant") in (b"constant", "constant"):
            p = I[1].tolist()
            r = len(p) // 2
            fill = []
            for d in reversed(range(r)):
                fill += [p[d], p[d + r]]
            y = [F.pad(I[0], fill, value=float(I[2]) if len(I) > 2 and I[2] is not None else 0.0)]
        elif t == "Concat":
            y = [torch.cat(I, dim=A["axis"])]
        elif t == "Split":
            y = list(torch.split(I[0], I[1].tolist() if len(I) > 1 and I[1] is not None else A["split"], dim=A.get("axis", 0)))
        elif t == "Shape":
            y = [torch.tensor(I[0].shape, dtype=torch.int64)]
        elif t == "Slice":
            sl = [slice(None)] * I[0].dim()
            axes = I[3].tolist() if len(I) > 3 else list(range(len(I[1])))
            for a, s, e in zip(axes, I[1].tolist(), I[2].tolist()):
                sl[a] = slice(s, None if e >= 2**62 else e)
            y = [I[0][tuple(sl)]]
        elif t == "Reshape":
            y = [I[0].reshape([I[0].shape[i] if v == 0 else v for i, v in enumerate(I[1].tolist())])]
        elif t == "Resize" and A.get("mode", b"nearest") in (b"nearest", "nearest") and len(I) > 2 and I[2] is not None and I[2].numel():
            y = [F.interpolate(I[0], scale_factor=[float(v) for v in I[2].tolist()[2:]], mode="nearest")]
        else:
            return None  # an op this evaluator does not know: no float64 column
        for o, v in zip(n.output, y):
            env[o] = v
    return env[model.graph.output[0].name].numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loom", required=True)
    ap.add_argument("--work", default="/tmp/loom_zoo_accuracy")
    ap.add_argument("--float64", action="store_true")
    ap.add_argument("--compile-arg", action="append", default=[])
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    print("| model | elements | Loom misses / worst err/tol | ORT misses / worst | " +
          ("rel. rms error vs float64: PyTorch / ORT / Loom |" if a.float64 else ""))
    print("|---|---|---|---|" + ("---|" if a.float64 else ""))
    for d in a.models:
        d = d.rstrip("/")
        name = os.path.basename(d)
        model = onnx.load(os.path.join(d, "model.onnx"))
        x = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0", "input_0.pb")))
        want = numpy_helper.to_array(onnx.load_tensor(os.path.join(d, "test_data_set_0", "output_0.pb"))).astype(np.float64)
        iname = model.graph.input[0].name
        so = os.path.join(a.work, name + ".so")
        subprocess.run([a.loom, "compile", os.path.join(d, "model.onnx"), "-q", "-o", so] + a.compile_arg,
                       check=True, capture_output=True)
        np.savez(os.path.join(a.work, "in.npz"), **{iname: x})
        subprocess.run([a.loom, "run", so, "--inputs", os.path.join(a.work, "in.npz"), "--outputs",
                        os.path.join(a.work, "out.npz")], check=True, capture_output=True)
        got = list(np.load(os.path.join(a.work, "out.npz")).values())[0]
        o = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"]).run(None, {iname: x})[0]
        lm, lw = misses(got, want)
        om, ow = misses(o, want)
        row = f"| {name} | {want.size} | {lm} / {lw:.2f} | {om} / {ow:.2f} |"
        if a.float64:
            exact = float64_run(model, x)
            if exact is None:
                row += " (an op the float64 evaluator lacks) |"
            else:
                rms = lambda v: np.sqrt(((v.astype(np.float64) - exact) ** 2).mean() / (exact ** 2).mean())
                row += f" {rms(want):.2g} / {rms(o):.2g} / {rms(got):.2g} |"
        print(row, flush=True)


if __name__ == "__main__":
    sys.exit(main())
